"""Editing frontmatter in place: only the lines of the keys being changed are rewritten.

Every other byte stays as it was: comments and the spacing before them, tabs, quoting,
key order, blank lines, the byte order mark, the trailing newline and each line's ending.
A changed scalar keeps its quote style and the comment after it; a changed list keeps its
flow (``[a, b]``) or block (``- a``) style, the text of the items it keeps (``"001"``
stays ``"001"``) and the comments on them. A list that becomes empty loses its key rather
than leaving a ``[]`` behind; a new key goes after the key that precedes it in
:data:`FIELD_ORDER`.

The result is read back before it is returned: if the edited keys do not read as the
values asked for, or any other key changed, the edit is refused (``task.edit_failed``)
and the file is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mtcommon import YamlError
from tasktool.files.parsing.frontmatter import read_frontmatter, repeated_keys
from tasktool.files.parsing.house_style import HouseStyle
from tasktool.files.parsing.taskfile import split_frontmatter
from tasktool.files.parsing.yamltext import quote_style, render_scalar, token_end
from tasktool.model.errors import TaskToolError

__all__ = ["FIELD_ORDER", "apply_frontmatter", "new_task_text"]

#: Key order for new task files (and where a new key goes in an existing one).
FIELD_ORDER = (
    "id",
    "title",
    "status",
    "priority",
    "effort",
    "type",
    "phase",
    "dependencies",
    "tags",
    "touches",
    "context",
    "owner",
    "parent",
    "created_at",
    "completed_at",
    "cancelled_at",
    "pr",
    "external_id",
)
#: Keys placed as another key of :data:`FIELD_ORDER` (an alias).
_ORDERED_AS = {"created": "created_at"}
_KEY_LINE = re.compile(
    r"""^(?:"([^"\\]*)"|'([^']*)'|([A-Za-z_][A-Za-z0-9_-]*))[ \t]*:(?=[ \t]|$)"""
)
_ITEM_LINE = re.compile(r"^([ \t]*-[ \t]+)(.*)$")
_TRAILER = re.compile(r"^[ \t]*(?:#.*)?$")


def _check_text(what: str, value: Any) -> None:
    """Refuse text that is not Unicode: undecodable argument bytes arrive as lone
    surrogates, which YAML would write as escapes no reader accepts."""
    for item in value if isinstance(value, list | tuple) else (value,):
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise TaskToolError(
                    f"{what}: not valid UTF-8 text: {item!r}", code="task.invalid_text"
                ) from None


class _Line:
    """One line: its text without the line ending, and the ending (``\\r\\n``, ``\\n``, ``""``)."""

    __slots__ = ("end", "text")

    def __init__(self, text: str, end: str) -> None:
        self.text = text
        self.end = end


def _lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    for piece in text.split("\n"):
        if piece.endswith("\r"):
            lines.append(_Line(piece[:-1], "\r\n"))
        else:
            lines.append(_Line(piece, "\n"))
    last = lines.pop()  # the text after the last "\n" ("" when the text ends with one)
    if last.text or last.end == "\r\n":
        lines.append(_Line(last.text + ("\r" if last.end == "\r\n" else ""), ""))
    return lines


def _key_of(line: str) -> str | None:
    match = _KEY_LINE.match(line)
    if match is None:
        return None
    return next(group for group in match.groups() if group is not None)


def _continues(line: str, block_value: bool) -> bool:
    return line[:1] in {" ", "\t"} or (block_value and line[:1] == "-")


def _entries(lines: Sequence[_Line]) -> dict[str, tuple[int, int]]:
    """Each top-level key's line span ``[start, end)``: its line and the indented lines
    (or same-column ``- item`` lines) that continue its value. Blank and comment lines
    after the last of those belong to no key."""
    spans: dict[str, tuple[int, int]] = {}
    index = 0
    while index < len(lines):
        key = _key_of(lines[index].text)
        if key is None:
            index += 1
            continue
        block_value = _TRAILER.match(lines[index].text[_value_start(lines[index].text) :])
        end = index + 1
        probe = end
        while probe < len(lines):
            text = lines[probe].text
            if _continues(text, block_value is not None):
                end = probe = probe + 1
            elif not text.strip() or text.lstrip().startswith("#"):
                probe += 1
            else:
                break
        spans.setdefault(key, (index, end))
        index = end
    return spans


def _key_end(line: str) -> int:
    """Where the ``key:`` of a key line ends."""
    match = _KEY_LINE.match(line)
    if match is None:
        raise ValueError(line)
    return match.end()


def _value_start(line: str) -> int:
    """Where the value of a key line starts (after ``key:`` and the blanks after it)."""
    position = _key_end(line)
    while position < len(line) and line[position] in " \t":
        position += 1
    return position


class _Editor:
    """The frontmatter's lines with the edits applied one key at a time; ``quotes``: per
    key, the quote a new key's value (or flow items) opens with (see :class:`HouseStyle`)."""

    def __init__(self, frontmatter: str, quotes: Mapping[str, str] | None = None) -> None:
        self.quotes = quotes or {}
        self.lines = _lines(frontmatter)
        self.newline = "\r\n" if any(line.end == "\r\n" for line in self.lines) else "\n"
        if self.lines and not self.lines[-1].end:
            self.lines[-1].end = self.newline

    def text(self) -> str:
        return "".join(line.text + line.end for line in self.lines)

    def _new(self, text: str) -> _Line:
        return _Line(text, self.newline)

    def delete(self, key: str) -> None:
        span = _entries(self.lines).get(key)
        if span is not None:
            del self.lines[span[0] : span[1]]

    def set_scalar(self, key: str, value: str) -> None:
        span = _entries(self.lines).get(key)
        if span is None:
            style = self.quotes.get(key, "")
            self._insert(key, [self._new(f"{key}: {render_scalar(value, style=style)}")])
            return
        start, end = span
        line = self.lines[start].text
        key_end = _key_end(line)
        head = _value_start(line)
        separator = line[key_end:head] or " "
        style, trailer = "", ""
        if line[head : head + 1] == "#":
            trailer = " " + line[head:] if head == key_end else line[head:]
        elif end == start + 1:
            stop = token_end(line, head)
            if stop >= 0 and _TRAILER.match(line[stop:]):
                style, trailer = quote_style(line[head:stop]), line[stop:]
        text = line[:key_end] + separator + render_scalar(value, style=style) + trailer
        self.lines[start:end] = [_Line(text, self.lines[start].end)]

    def set_list(self, key: str, values: Sequence[str]) -> None:
        span = _entries(self.lines).get(key)
        if span is None:
            if values:
                self._insert(key, self._fresh_list(key, values))
            return
        if not values:
            self.delete(key)
            return
        start, end = span
        line = self.lines[start].text
        head = _value_start(line)
        if line[head : head + 1] == "[" and end == start + 1:
            rebuilt = _flow(line[head:], values)
            if rebuilt is not None:
                self.lines[start].text = line[:head] + rebuilt
                return
        if _TRAILER.match(line[head:]) and end > start + 1 and self._block(start, end, values):
            return
        self.lines[start:end] = self._fresh_list(key, values)

    def _block(self, start: int, end: int, values: Sequence[str]) -> bool:
        """Rewrite a block list's item lines in place; False if it holds other shapes."""
        slots: list[int] = []
        tokens: list[tuple[str, str, str]] = []  # (value, line text, lead)
        for index in range(start + 1, end):
            text = self.lines[index].text
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            match = _ITEM_LINE.match(text)
            if match is None:
                return False
            value = _item_value(match.group(2))
            if value is None:
                return False
            slots.append(index)
            tokens.append((value, text, match.group(1)))
        if not slots:
            return False
        lead = tokens[0][2]
        style = quote_style(_ITEM_LINE.match(tokens[0][1]).group(2))  # type: ignore[union-attr]
        texts = _reuse(
            [(value, text) for value, text, _lead in tokens],
            values,
            lambda value: lead + render_scalar(value, style=style),
        )
        ending = self.lines[slots[-1]].end
        for slot, text in zip(slots, texts, strict=False):
            self.lines[slot].text = text
        extra = [_Line(text, ending) for text in texts[len(slots) :]]
        for slot in reversed(slots[len(texts) :]):
            del self.lines[slot]
        position = slots[min(len(texts), len(slots)) - 1] + 1
        self.lines[position:position] = extra
        return True

    def _fresh_list(self, key: str, values: Sequence[str]) -> list[_Line]:
        block = self._block_lead()
        if block is None:
            style = self.quotes.get(key, "")
            items = ", ".join(render_scalar(value, style=style, in_flow=True) for value in values)
            return [self._new(f"{key}: [{items}]")]
        return [self._new(f"{key}:")] + [
            self._new(block + render_scalar(value)) for value in values
        ]

    def _block_lead(self) -> str | None:
        """The ``- `` lead of the file's block lists, if it writes its lists that way."""
        for index, line in enumerate(self.lines[1:], start=1):
            match = _ITEM_LINE.match(line.text)
            if match and _key_of(self.lines[index - 1].text) is not None:
                return match.group(1)
        return None

    def _insert(self, key: str, new: list[_Line]) -> None:
        # ``created`` (taskmd's spelling) holds ``created_at``'s place in the order.
        spans = {_ORDERED_AS.get(name, name): span for name, span in _entries(self.lines).items()}
        key = _ORDERED_AS.get(key, key)
        order = FIELD_ORDER.index(key) if key in FIELD_ORDER else len(FIELD_ORDER)
        before = [spans[name][1] for name in FIELD_ORDER[:order] if name in spans]
        position = max(before) if before else _last_end(spans, len(self.lines))
        self.lines[position:position] = new


def _reuse(
    tokens: Sequence[tuple[str, str]], values: Sequence[str], render: Callable[[str], str]
) -> list[str]:
    """The text for each of ``values``: an existing item's own text (its quoting and
    comment) when the list held that value, else ``render(value)``."""
    pool = list(tokens)
    texts: list[str] = []
    for value in values:
        found = next((token for token in pool if token[0] == value), None)
        if found is not None:
            pool.remove(found)
            texts.append(found[1])
        else:
            texts.append(render(value))
    return texts


def _last_end(spans: Mapping[str, tuple[int, int]], count: int) -> int:
    return max((end for _start, end in spans.values()), default=count)


def _item_value(token_text: str) -> str | None:
    """The value of a block item (``- "001"  # note``), or None if it is not a scalar."""
    stop = token_end(token_text, 0)
    if stop < 0 or not _TRAILER.match(token_text[stop:]):
        return None
    return _scalar_text(token_text[:stop])


def _scalar_text(token: str) -> str | None:
    try:
        data = read_frontmatter(f"k: {token}\n", source="<item>")
    except YamlError:
        return None
    value = data.get("k") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _flow(text: str, values: Sequence[str]) -> str | None:
    """A one-line flow list ``[a, "b"]  # c`` with ``values``, keeping the text of the
    items it keeps, its spacing after commas and the comment after it."""
    position = 1
    tokens: list[tuple[str, str]] = []
    separator = ", "
    while True:
        while position < len(text) and text[position] in " \t":
            position += 1
        if text[position : position + 1] == "]":
            break
        stop = token_end(text, position, in_flow=True)
        if stop < 0:
            return None
        token = text[position:stop]
        value = _scalar_text(token)
        if value is None:
            return None
        tokens.append((value, token))
        position = stop
        while position < len(text) and text[position] in " \t":
            position += 1
        if text[position : position + 1] == ",":
            after = position + 1
            while after < len(text) and text[after] in " \t":
                after += 1
            separator = text[position:after] or ","
            position = after
            continue
        if text[position : position + 1] != "]":
            return None
        break
    trailer = text[position + 1 :]
    if not _TRAILER.match(trailer):
        return None
    style = quote_style(tokens[0][1]) if tokens else ""
    items = _reuse(tokens, values, lambda value: render_scalar(value, style=style, in_flow=True))
    opening = text[1 : len(text) - len(text[1:].lstrip(" \t"))]
    return "[" + opening + separator.join(items) + opening + "]" + trailer


def _apply(
    editor: _Editor, updates: Mapping[str, Any], present: Mapping[str, Any]
) -> dict[str, Any]:
    """Apply ``updates``; returns the values each edited key must read back as."""
    expected: dict[str, Any] = {}
    for field, value in updates.items():
        _check_text(field, value)
        key = field
        if field == "created_at" and "created" in present and "created_at" not in present:
            key = "created"  # keep the alias the file already uses
        if value is None:
            editor.delete(key)
            expected[key] = None
            if key == "created_at":
                editor.delete("created")
                expected["created"] = None
        elif isinstance(value, list | tuple):
            items = [str(item) for item in value]
            editor.set_list(key, items)
            expected[key] = items or None
        else:
            editor.set_scalar(key, str(value))
            expected[key] = str(value)
    return expected


def _ruamel_edit(frontmatter: str, expected: Mapping[str, Any], source: str) -> str:
    from mtcommon import dump_roundtrip, load_roundtrip

    try:
        data = load_roundtrip(frontmatter, source=source) if frontmatter.strip() else None
    except YamlError:
        return frontmatter  # verification refuses it
    if data is None:
        data = load_roundtrip("{}\n")
    for key, value in expected.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    text: str = dump_roundtrip(data)
    return text.replace("\n", "\r\n") if "\r\n" in frontmatter else text


def _read(frontmatter: str, source: str) -> dict[str, Any]:
    data = read_frontmatter(frontmatter, source=source) if frontmatter.strip() else {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise TaskToolError(f"{source}: the frontmatter is not a mapping", code="task.frontmatter")
    return data


def _verify(source: str, before: Mapping[str, Any], text: str, expected: Mapping[str, Any]) -> None:
    try:
        after = _read(text, source)
    except (YamlError, TaskToolError):
        after = None
    problem = after is None or any(
        after.get(key) != (value if not isinstance(value, list) else list(value))
        for key, value in expected.items()
    )
    if after is not None and not problem:
        untouched = (set(before) | set(after)) - set(expected)
        problem = any(before.get(key) != after.get(key) for key in untouched)
    if problem:
        raise TaskToolError(
            f"{source}: the frontmatter has a shape this edit cannot change in place "
            f"({', '.join(expected)}); edit the file by hand",
            code="task.edit_failed",
        )


def apply_frontmatter(
    text: str, updates: Mapping[str, Any], *, source: str, body: str | None = None
) -> str:
    """``text`` with ``updates`` applied to its frontmatter (``None`` deletes a key, an
    empty list removes the key); every other byte is kept."""
    parts = split_frontmatter(text)
    if parts is None:
        raise TaskToolError(f"{source}: no frontmatter block to edit", code="task.frontmatter")
    frontmatter, old_body = parts
    _check_text("body", body)
    repeated = repeated_keys(frontmatter)
    if repeated:  # an edit would change one copy where readers see the other
        raise TaskToolError(
            f"{source}: the key {repeated[0]!r} appears more than once; fix the file first",
            code="task.duplicate_key",
        )
    try:
        before = _read(frontmatter, source)
    except YamlError as exc:
        raise TaskToolError(exc.message, code="task.yaml") from None
    editor = _Editor(frontmatter)
    expected = _apply(editor, updates, before)
    edited = editor.text()
    try:
        _verify(source, before, edited, expected)
    except TaskToolError:
        # A shape the line editor does not know (an indented mapping, a flow mapping...):
        # ruamel rewrites the frontmatter, keeping what it can; checked the same way.
        edited = _ruamel_edit(frontmatter, expected, source)
        _verify(source, before, edited, expected)
    # The BOM and the opening line, then the frontmatter, then the closing line and body.
    opening_end = text.index("\n") + 1
    closing = text[opening_end + len(frontmatter) : len(text) - len(old_body)]
    new_body = old_body if body is None else body
    return f"{text[:opening_end]}{edited}{closing}{new_body}"


def new_task_text(
    fields: Mapping[str, Any], body: str = "", style: HouseStyle | None = None
) -> str:
    """A new task file: keys in :data:`FIELD_ORDER`, lists in flow style, dates plain
    (``created_at: 2026-02-19``); no body section when there is no body. ``style``: the
    repository's (:func:`~tasktool.files.parsing.house_style.learn_style`): its date key and the
    quoting of each key."""
    _check_text("body", body)
    style = style or HouseStyle()
    editor = _Editor("", style.quotes)
    ordered = sorted(fields, key=lambda k: FIELD_ORDER.index(k) if k in FIELD_ORDER else 99)
    values = {key: fields[key] for key in ordered if fields[key] is not None}
    if "created_at" in values and "created" not in values and style.date_key == "created":
        values = {("created" if key == "created_at" else key): v for key, v in values.items()}
    _apply(editor, values, {})
    text = body if not body or body.endswith("\n") else body + "\n"
    return f"---\n{editor.text()}---\n{text}"
