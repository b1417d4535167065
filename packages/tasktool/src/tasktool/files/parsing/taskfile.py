"""One task file: frontmatter split, the fast parse into a ``Task``, file names.

A task is a ``.md`` file whose YAML frontmatter (between a first ``---`` line
and the next ``---`` line) has a non-empty ``id`` and ``title``. Frontmatter is
read as :func:`mtcommon.load_text` reads it (PyYAML's C loader, every scalar as text),
so ``id: 010`` stays ``"010"`` and dates stay ``YYYY-MM-DD`` strings; the common flat
shape goes straight to a task (:func:`_flat_task`), any other through
:func:`~tasktool.files.parsing.frontmatter.read_frontmatter` and :func:`task_from_mapping`.

Files that are not tasks are skipped silently, except a file that *looks* like
a task (a frontmatter line starting ``id:``, ``status:``, ``priority:`` or
``dependencies:``) but cannot be read as one: it becomes an error
:class:`~tasktool.model.diagnostics.Diagnostic`, so no task vanishes without a word.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import msgspec

from mtcommon import YamlError
from tasktool.files.parsing.frontmatter import SIMPLE_FLAT, read_frontmatter
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task

__all__ = [
    "BOM",
    "LIST_FIELDS",
    "SCALAR_FIELDS",
    "TaskFileError",
    "conflict_marker",
    "id_in_text",
    "is_safe_id",
    "looks_like_task",
    "parse_task",
    "slugify",
    "split_frontmatter",
    "task_filename",
    "task_from_mapping",
]

SCALAR_FIELDS = (
    "title",
    "status",
    "priority",
    "effort",
    "type",
    "owner",
    "phase",
    "parent",
    "created_at",
    "completed_at",
    "cancelled_at",
    "external_id",
)
LIST_FIELDS = ("dependencies", "tags", "touches", "context", "pr")
_SCALARS = frozenset({"id", "created", *SCALAR_FIELDS})
_LISTS = frozenset(LIST_FIELDS)
#: Backlog.md's names of tasktool's fields, read when the file has no tasktool name for
#: the field (``assignee`` is a list there: its names joined).
ALIASES: dict[str, str] = {
    "labels": "tags",
    "assignee": "owner",
    "created_date": "created_at",
    "parent_task_id": "parent",
    "milestone": "phase",
}
#: An unquoted ``assignee: @name`` (or ``reporter:``), which YAML refuses: Backlog.md
#: quotes it before parsing, and so does :func:`parse_task` when the YAML fails.
_BARE_AT = re.compile(r"^((?:assignee|reporter):[ \t]*)(@[^\n]*?)[ \t]*$", re.MULTILINE)
#: Keys that mark a file as meant to be a task (also as the first key of a list item, the
#: frontmatter of someone who wrote ``- id: 1`` for ``id: 1``).
_TASK_LIKE = re.compile(r"^(?:-[ \t]+)?(id|status|priority|dependencies)\s*:", re.MULTILINE)
#: The byte order mark some editors put first; the frontmatter starts after it.
BOM = "\ufeff"
#: The id line of a file whose YAML does not parse (so ``get``/``validate`` can name the task).
_ID_LINE = re.compile(r"""^id:[ \t]*(['"]?)([^'"\s#]+)\1[ \t]*(?:#.*)?$""", re.MULTILINE)
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
#: Runs of characters that are not letters or digits of any script (``_`` included).
_SLUG = re.compile(r"[\W_]+")


class TaskFileError(Exception):
    """A task-like file that cannot be read as a task (internal; becomes a Diagnostic)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def split_frontmatter(text: str) -> tuple[str, str] | None:
    """``(frontmatter, body)``, or ``None`` when the text has no complete frontmatter block.

    The body is everything after the closing ``---`` line, byte for byte. A leading byte
    order mark is not part of the frontmatter.
    """
    text = text.removeprefix(BOM)
    if text.startswith("---\n"):  # the common shape, both lines bare: two searches
        close = text.find("\n---", 3)
        if close >= 0 and text.startswith("\n", close + 4):
            return text[4 : close + 1], text[close + 5 :]
    if not text.startswith("---"):
        return None
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].rstrip() != "---":
        return None
    start = position = first_end + 1
    while True:
        if text.startswith("---", position):
            line_start = position
        else:
            found = text.find("\n---", position)
            if found < 0:
                return None
            line_start = found + 1
        line_end = text.find("\n", line_start)
        line = text[line_start:] if line_end < 0 else text[line_start:line_end]
        if line.rstrip() == "---":
            return text[start:line_start], "" if line_end < 0 else text[line_end + 1 :]
        if line_end < 0:
            return None
        position = line_end + 1


def looks_like_task(text: str) -> bool:
    """Whether a file that opens a frontmatter block carries task keys."""
    return text.removeprefix(BOM).startswith("---") and _TASK_LIKE.search(text) is not None


def _scalar(key: str, value: Any) -> str | None:
    if not isinstance(value, str):
        raise TaskFileError("task.field_type", f"{key} must be a single value")
    value = value.strip()
    return None if value in _NULLS else value


def _list(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.strip()
        return () if value in _NULLS or value == "[]" else (value,)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TaskFileError("task.field_type", f"{key} must be a list of values")
    return tuple(item.strip() for item in value if item.strip() not in _NULLS)


def _unaliased(data: dict[Any, Any]) -> dict[Any, Any]:
    """The frontmatter with Backlog.md's field names read as tasktool's (:data:`ALIASES`)
    where the file has no tasktool name for the field; ``assignee``'s names joined."""
    if ALIASES.keys().isdisjoint(data):  # tasktool's own files: one set operation in C
        return data
    result: dict[Any, Any] = {}
    for key, value in data.items():
        name = ALIASES.get(key, key) if isinstance(key, str) else key
        if name != key and name in data:
            continue
        if name == "owner" and isinstance(value, list):
            value = ", ".join(item for item in value if isinstance(item, str)) or None  # noqa: PLW2901
        result[name] = value
    return result


def task_from_mapping(
    data: Any, *, file_path: str, body: str, group: str | None, archived: bool
) -> Task:
    """Build a ``Task`` from text-scalar frontmatter; raise ``TaskFileError`` when invalid."""
    if not isinstance(data, dict):
        raise TaskFileError("task.frontmatter", "the frontmatter is not a mapping")
    fields: dict[str, Any] = {}
    for key, value in _unaliased(data).items():
        if value is None:
            continue
        if key in _SCALARS:
            fields[key] = _scalar(key, value)
        elif key in _LISTS:
            fields[key] = _list(key, value)
    if not fields.get("id"):
        raise TaskFileError("task.missing_id", "the frontmatter has no id")
    if not fields.get("title"):
        raise TaskFileError("task.missing_title", f"task {fields['id']} has no title")
    return _task(fields, file_path=file_path, body=body, group=group, archived=archived)


def _task(
    fields: dict[str, Any], *, file_path: str, body: str, group: str | None, archived: bool
) -> Task:
    """The task of read fields that hold an id and a title (``created`` stands in for
    ``created_at``; the status defaults to pending)."""
    created = fields.pop("created", None)
    if fields.get("created_at") is None:
        fields["created_at"] = created
    if not fields.get("status"):
        fields["status"] = "pending"
    fields["group"] = group
    fields["file_path"] = file_path
    fields["archived"] = archived
    fields["body"] = body  # the name raw_body has outside Python
    # Read by msgspec in C: Task(**fields) spends as long again on its keyword arguments.
    return msgspec.convert(fields, Task)


_QUOTES = frozenset("'\"")
#: The first character of a value :data:`SIMPLE_FLAT` admits that is not plain: a quote
#: (no escapes) or a flow list's ``[``.
_NOT_PLAIN = frozenset("'\"[")


def _flat_task(
    frontmatter: str, *, file_path: str, body: str, group: str | None, archived: bool
) -> Task | None:
    """The task of a flat frontmatter of plain scalars, quoted ones without escapes and
    flow lists of those (every generated file, nearly every written one), read in one
    step per line; ``None`` for any other shape, and for fields that make no task (a
    repeated or Backlog.md key, a list for a single value, no id or title), which
    :func:`parse_task` then reads the general way, to say why.

    A cold scan spends most of its time reading frontmatter: :func:`read_frontmatter`
    then :func:`task_from_mapping` take a step per line each, and check each value.
    :data:`SIMPLE_FLAT` (one pass of the regex engine) admits the file only when every
    value is good and its first character tells its kind, so one step per line remains,
    and it answers what they answer (a hypothesis test holds it to that).
    """
    if "\t" in frontmatter or "\r" in frontmatter or SIMPLE_FLAT.fullmatch(frontmatter) is None:
        return None
    fields: dict[str, Any] = {}
    others: list[str] = []
    for line in frontmatter.split("\n"):
        key, colon, value = line.partition(": ")
        if key in _SCALARS:
            if value[0] in _NOT_PLAIN:
                if value[0] == "[":
                    return None
                text = value[1:-1].strip()
            else:
                text = value.strip()
            if key in fields:
                return None
            fields[key] = None if text in _NULLS else text
        elif key in _LISTS:
            if key in fields:
                return None
            fields[key] = _flow_items(value)
        elif colon:
            if key in ALIASES:
                return None
            others.append(key)  # a key tasktool does not read (or a comment holding ": ")
    if len(others) > 1 and len(set(others)) < len(others):
        return None
    if not fields.get("id") or not fields.get("title"):
        return None
    return _task(fields, file_path=file_path, body=body, group=group, archived=archived)


def _flow_items(value: str) -> tuple[str, ...]:
    """A list field's value from a line :data:`SIMPLE_FLAT` admits, as :func:`_list` reads it."""
    if value == "[]":
        return ()
    if value[0] != "[":
        text = (value[1:-1] if value[0] in _QUOTES else value).strip()
        return () if text in _NULLS or text == "[]" else (text,)
    items: list[str] = []
    for part in value[1:-1].split(","):
        item = part.strip()
        if item[:1] in _QUOTES:
            item = item[1:-1].strip()
        if item not in _NULLS:
            items.append(item)
    return tuple(items)


#: Lines git leaves in a file whose merge conflict was committed unresolved: seven
#: characters, or more when a conflict is nested in another (rename conflicts use eight).
_CONFLICT_MARKER = re.compile(r"^(<{7,}|>{7,})(?: |$)", re.MULTILINE)


def conflict_marker(text: str) -> tuple[int, str] | None:
    """The 1-based line and the marker of the first merge-conflict marker, if the text
    has both an opening (``<<<<<<<`` or longer) and a closing (``>>>>>>>``...) line."""
    if "<<<<<<<" not in text or ">>>>>>>" not in text:
        return None
    markers = list(_CONFLICT_MARKER.finditer(text))
    if {match.group(1)[0] for match in markers} != {"<", ">"}:
        return None
    first = markers[0]
    return text.count("\n", 0, first.start()) + 1, first.group(1)


def parse_task(
    text: str, *, file_path: str, group: str | None, archived: bool
) -> Task | Diagnostic | None:
    """A file's text as a ``Task``, a broken-file ``Diagnostic``, or ``None`` (not a task)."""
    conflict = conflict_marker(text)
    if conflict is not None and looks_like_task(text):
        line, marker = conflict
        return _broken(
            file_path,
            "task.merge_conflict",
            f"{file_path}:{line}: an unresolved merge conflict ({marker} line); resolve it "
            "and remove the markers",
            id_in_text(text),
            located=True,
        )
    parts = split_frontmatter(text)
    if parts is None:
        if looks_like_task(text):
            return _broken(
                file_path,
                "task.frontmatter",
                "the frontmatter block is not closed",
                id_in_text(text),
            )
        return None
    frontmatter, body = parts
    task = _flat_task(frontmatter, file_path=file_path, body=body, group=group, archived=archived)
    if task is not None:
        return task
    try:
        data = _read_lenient(frontmatter, file_path)
        return task_from_mapping(
            data, file_path=file_path, body=body, group=group, archived=archived
        )
    except YamlError as exc:
        if not _TASK_LIKE.search(frontmatter):
            return None
        code = "task.duplicate_key" if exc.code == "yaml.duplicate_key" else "task.yaml"
        return _broken(file_path, code, exc.message, id_in_text(frontmatter), located=True)
    except TaskFileError as exc:
        if not _TASK_LIKE.search(frontmatter) and exc.code != "task.field_type":
            return None
        task_id = data.get("id") if isinstance(data, dict) else None
        return _broken(
            file_path, exc.code, exc.message, task_id if isinstance(task_id, str) else None
        )


def _read_lenient(frontmatter: str, source: str) -> Any:
    """The frontmatter's data; an unquoted ``assignee: @name`` is read as Backlog.md
    reads it (quoted) when the YAML as written does not parse."""
    try:
        return read_frontmatter(frontmatter, source=source)
    except YamlError:
        if _BARE_AT.search(frontmatter) is None:
            raise
    quoted = _BARE_AT.sub(
        lambda m: f"{m.group(1)}'{m.group(2).replace(chr(39), 2 * chr(39))}'", frontmatter
    )
    return read_frontmatter(quoted, source=source)


def id_in_text(text: str) -> str | None:
    """The value of an ``id:`` line, read without YAML (for files that do not parse)."""
    match = _ID_LINE.search(text)
    return match.group(2) if match else None


def _broken(
    file_path: str, code: str, message: str, task_id: str | None = None, *, located: bool = False
) -> Diagnostic:
    where = "" if located else f"{file_path}: "
    return Diagnostic(
        severity="error",
        code=code,
        message=f"{where}{message.strip()} (looks like a task, not loaded)",
        file=file_path,
        task_id=task_id,
    )


_SAFE_ID = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")


def is_safe_id(task_id: str) -> bool:
    """Whether an id can name files (``<id>-slug.md``, worklogs, locks) without escaping."""
    return _SAFE_ID.match(task_id) is not None


def slugify(title: str) -> str:
    """Lower case, runs of characters that are not letters or digits to ``-``, at most 50
    characters. Letters of every script are kept as they are (NFC: one spelling of
    ``é`` on every file system): ``Исправить ошибку`` is ``исправить-ошибку``, ``émoji``
    stays ``émoji``."""
    text = unicodedata.normalize("NFC", title).lower()
    return _SLUG.sub("-", text).strip("-")[:50].rstrip("-") or "task"


def task_filename(task_id: str, title: str) -> str:
    """The conventional file name ``<id>-<slug>.md``."""
    return f"{task_id}-{slugify(title)}.md"
