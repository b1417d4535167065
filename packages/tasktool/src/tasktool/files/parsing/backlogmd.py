"""Backlog.md's task files as tasktool's tasks, and tasktool's changes as Backlog.md
writes them (the layout: :mod:`tasktool.config.backlogmd`, :mod:`tasktool.model.layout`).

The files are parsed as any task file is (the parser knows Backlog.md's field names:
``labels``, ``assignee``, ``created_date``, ``parent_task_id``, ``milestone``); this
module then places each task by its folder and spells its id and status tasktool's way.
Writes change only the keys a change names, in Backlog.md's names and values, and
stamp ``updated_date`` as Backlog.md does (UTC, ``YYYY-MM-DD HH:MM``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from tasktool.files.caches.bodies import Bodies
from tasktool.files.scanning.scan import ARCHIVE_DIR, ScanResult
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.layout import COMPLETED_DIR, DRAFTS_DIR, TASKS_DIR, Layout
from tasktool.model.task import TASK_TYPES, Task, natural_key

__all__ = [
    "backlog_task",
    "backlog_updates",
    "lenient_note",
    "new_backlog_name",
    "new_backlog_text",
    "normalized_scan",
    "shadowed_files",
    "spellings",
    "stamp",
]

#: Backlog.md's type names that tasktool spells otherwise.
_TYPES = {"enhancement": "improvement", "documentation": "docs"}
#: An unquoted ``assignee: @name`` line (YAML refuses it; Backlog.md quotes it and reads it).
_BARE_AT = re.compile(r"^(?:assignee|reporter):[ \t]*@", re.MULTILINE)
#: Characters Backlog.md drops from a title in a file name, and those it turns into ``-``.
_UNSAFE = re.compile(r'[<>:"/\\|?*]')
_NOISE = re.compile(r"['(),!@#$%^&+=\[\]{};]")


def stamp(now: dt.datetime) -> str:
    """``updated_date``/``created_date`` as Backlog.md writes them: ``YYYY-MM-DD HH:MM``."""
    return now.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")


Place = Literal["active", "archived", "draft"]


def _place(task_dir: Path, file_path: str) -> Place | None:
    """Where Backlog.md keeps the file's task: ``tasks/`` (active), ``completed/`` and
    ``archive/tasks/`` (archived), ``drafts/``; ``None``: no task Backlog.md reads."""
    try:
        parts = Path(file_path).parent.relative_to(task_dir).parts
    except ValueError:
        return None
    if parts == (TASKS_DIR,):
        return "active"
    if parts in {(COMPLETED_DIR,), (ARCHIVE_DIR, TASKS_DIR)}:
        return "archived"
    return "draft" if parts == (DRAFTS_DIR,) else None


def backlog_task(
    task: Task, layout: Layout, ids: Mapping[str, str] | None = None, body: str | None = None
) -> Task:
    """One parsed task spelled tasktool's way: its id as the repository shows it
    (:meth:`~tasktool.model.layout.Layout.spelled`), the ids it names (dependencies,
    parent) as ``ids`` spells them (canonical id -> a task's id; else canonical), its
    status as one of tasktool's (a name that stands for none stays, and ``validate``
    reports it), a type tasktool knows (else none), no group; its body ``body`` (read by
    the caller: a body the parse cache keeps is found by the task it was stored with, not
    by the new one), else the one it holds."""
    ids = ids or {}

    def named(other: str) -> str:
        canonical = layout.canonical_id(other)
        return ids.get(canonical, canonical)

    status = layout.status_of(task.status) or task.status
    kind = _TYPES.get(task.type or "", task.type)
    return msgspec.structs.replace(
        task,
        id=layout.spelled(task.id),
        status=status,
        type=kind if kind in TASK_TYPES else None,
        dependencies=tuple(map(named, task.dependencies)),
        parent=named(task.parent) if task.parent else None,
        group=None,
        raw_body=task.raw_body if body is None else body,
    )


def spellings(ids: Iterable[str], layout: Layout) -> dict[str, str]:
    """Canonical id (upper case: ``DRAFT-1`` for ``draft-1``) -> the id a task shows
    (the first file's, in the order given)."""
    found: dict[str, str] = {}
    for task_id in ids:
        found.setdefault(layout.canonical_id(task_id).upper(), layout.spelled(task_id))
    return found


def normalized_scan(
    result: ScanResult, layout: Layout, task_dir: Path, bodies: Bodies
) -> tuple[ScanResult, tuple[Task, ...]]:
    """The scan of ``backlog/`` as Backlog.md reads it: tasks of ``tasks/`` active, those
    of ``completed/`` and ``archive/tasks/`` archived, files elsewhere left out; and the
    drafts (``drafts/``), which are no task to list or recommend. Their bodies are read
    now from ``bodies`` (the scan's)."""
    kept: dict[Place, list[Task]] = {"active": [], "archived": [], "draft": []}
    placed = [
        (task, place)
        for task in (*result.tasks, *result.archived)
        if (place := _place(task_dir, task.file_path)) is not None
    ]
    ids = spellings((task.id for task, _place_ in placed), layout)
    for task, place in placed:
        found = backlog_task(task, layout, ids, bodies.read(task))
        kept[place].append(msgspec.structs.replace(found, archived=place == "archived"))
    active, archived, drafts = kept["active"], kept["archived"], kept["draft"]
    broken = [
        msgspec.structs.replace(problem, task_id=layout.canonical_id(problem.task_id))
        if problem.task_id
        else problem
        for problem in result.broken
        if problem.file is None or _place(task_dir, problem.file) is not None
    ]
    scanned = ScanResult(
        tasks=tuple(sorted(active, key=_order)),
        archived=tuple(sorted(archived, key=_order)),
        broken=tuple(broken),
    )
    return scanned, tuple(sorted(drafts, key=_order))


def shadowed_files(tasks: Iterable[Task]) -> frozenset[str]:
    """The files of ``archive/tasks/`` whose id a task of ``tasks/`` or ``completed/``
    holds: Backlog.md archives a task by moving it away, and its id may be taken again;
    the live copy is the task (``doctor`` counts duplicates among the others only)."""
    live: set[str] = set()
    archive: list[Task] = []
    for task in tasks:
        in_archive = f"/{ARCHIVE_DIR}/{TASKS_DIR}/" in task.file_path.replace("\\", "/")
        (archive.append(task) if in_archive else live.add(task.id))
    return frozenset(task.file_path for task in archive if task.id in live)


def _order(task: Task) -> tuple[tuple[tuple[int, int | str], ...], str]:
    return natural_key(task.id), task.file_path


def lenient_note(tasks: Iterable[Task]) -> Diagnostic | None:
    """The one warning that names the files read leniently: an unquoted ``assignee: @name``
    (not YAML; Backlog.md quotes it before parsing, and so does the parser here). Only
    the files whose owner starts with ``@`` are read again to tell."""
    lenient: list[str] = []
    for task in tasks:
        if task.owner and task.owner.startswith("@"):
            try:
                text = Path(task.file_path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if _BARE_AT.search(text.split("\n---", 1)[0]):
                lenient.append(task.file_path)
    if not lenient:
        return None
    names = ", ".join(Path(path).name for path in lenient[:3])
    more = f" and {len(lenient) - 3} more" if len(lenient) > 3 else ""
    return Diagnostic(
        severity="warning",
        code="task.lenient",
        message=f"{len(lenient)} file(s) read leniently: an unquoted 'assignee: @name' "
        f"(not YAML; Backlog.md reads it as a name): {names}{more}",
    )


def _list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or ())


def backlog_updates(
    updates: Mapping[str, Any], layout: Layout, now: dt.datetime, *, remove: object
) -> dict[str, Any]:
    """tasktool's frontmatter updates (``plan_update``'s) in Backlog.md's keys and values,
    with ``updated_date``. tasktool's status dates are not Backlog.md's: left out."""
    out: dict[str, Any] = {}
    for key, value in updates.items():
        if key == "status":
            out["status"] = layout.name_of(value)
        elif key == "tags":
            out["labels"] = _list(value)
        elif key == "owner":
            out["assignee"] = [] if value is remove else _list(value)
        elif key == "parent":
            out["parent_task_id"] = value
        elif key == "phase":
            out["milestone"] = value
        elif key == "created_at":
            out["created_date"] = value
        elif key not in {"completed_at", "cancelled_at"}:
            out[key] = value
    out["updated_date"] = stamp(now)
    return out


def new_backlog_name(task_id: str, title: str) -> str:
    """``back-12 - Fix-the-thing.md``, as Backlog.md names a new task's file."""
    cleaned = _NOISE.sub("", _UNSAFE.sub("-", title))
    slug = re.sub(r"-+", "-", re.sub(r"\s+", "-", cleaned)).strip("-")
    return f"{task_id.lower()} - {slug or 'task'}.md"


def new_backlog_text(
    task_id: str, fields: Mapping[str, Any], layout: Layout, now: dt.datetime
) -> str:
    """A new task file in Backlog.md's shape (its serializer's key order and quoting)."""
    from tasktool.files.parsing.yamltext import render_scalar as yaml_scalar

    def items(values: Iterable[str]) -> str:
        listed = list(values)
        return "".join(f"\n  - {yaml_scalar(v)}" for v in listed) if listed else " []"

    status = str(fields.get("status") or "")
    default = layout.status_of(layout.default_status) == status or not status
    name = layout.default_status if default else layout.name_of(status)
    lines = [
        f"id: {task_id}",
        f"title: {yaml_scalar(str(fields['title']))}",
        f"status: {yaml_scalar(name)}",
        f"assignee:{items(_list(fields.get('owner')))}",
        f"created_date: '{stamp(now)}'",
        f"labels:{items(_list(fields.get('tags')))}",
    ]
    if fields.get("phase"):
        lines.append(f"milestone: {yaml_scalar(str(fields['phase']))}")
    lines.append(f"dependencies:{items(_list(fields.get('dependencies')))}")
    if fields.get("parent"):
        lines.append(f"parent_task_id: {yaml_scalar(str(fields['parent']))}")
    if fields.get("priority"):
        lines.append(f"priority: {fields['priority']}")
    body = str(fields.get("body") or "")
    return "---\n" + "\n".join(lines) + "\n---\n" + (f"\n{body.strip()}\n" if body else "")
