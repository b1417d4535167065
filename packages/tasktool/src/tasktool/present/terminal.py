"""Tables for a person at a terminal: fitted to its width, fast at any size.

rich laid out a large table many times slower than the plain text; this lays it out in one
pass.
At a narrow terminal a long title is cut first, down to :data:`MIN_TITLE` characters; then
the least useful columns go (:data:`DROP_ORDER`), then the widest text column is cut with
an ellipsis, never a title below :data:`MIN_TITLE` characters, so titles stay readable.
Headers are bold unless colour is off (``--no-color``, ``NO_COLOR``).
"""

from __future__ import annotations

import os
import re
import shutil
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "DROP_ORDER",
    "ELLIPSIS",
    "GAP",
    "MIN_TITLE",
    "clip",
    "colour_off",
    "fitted_table",
    "printable",
    "side_by_side",
    "terminal_height",
    "terminal_width",
    "width_of",
]

#: Columns dropped first when a table is too wide, least useful first; the others
#: (``id``, ``title``...) are never dropped.
DROP_ORDER = (
    "context",
    "touches",
    "pr",
    "tags",
    "owner",
    "phase",
    "type",
    "effort",
    "created_at",
    "dependencies",
    "group",
    "priority",
)
MIN_TITLE = 24
GAP = "  "
ELLIPSIS = "\u2026"


#: Characters a terminal acts on instead of showing: C0 controls but tab and line feed
#: (ESC starts colour, title and clipboard sequences; CR and BS overwrite), DEL, C1 controls
#: (U+009B is a CSI of its own) and the bidirectional overrides that reorder a line.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` safe to write to a terminal: every control character as a visible escape
    (NUL as ``\\x00``, ESC as ``\\x1b``), so task fields cannot move the cursor, recolour
    or retitle the terminal. Tabs and line breaks stay."""
    if text.isprintable() or not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_escaped, text)


def terminal_width() -> int:
    """The terminal's columns (``COLUMNS`` wins), 80 when unknown."""
    return shutil.get_terminal_size((80, 24)).columns


def terminal_height() -> int:
    """The terminal's lines (``LINES`` wins), 24 when unknown."""
    return shutil.get_terminal_size((80, 24)).lines


def colour_off(no_color: bool) -> bool:
    """Whether to write no escape sequences (``--no-color`` or a non-empty ``NO_COLOR``)."""
    return no_color or bool(os.environ.get("NO_COLOR"))


def width_of(text: str) -> int:
    """Columns ``text`` takes on a terminal (wide East Asian characters take two)."""
    if text.isascii():
        return len(text)
    return sum(
        0
        if unicodedata.combining(char)
        else 2
        if unicodedata.east_asian_width(char) in {"W", "F"}
        else 1
        for char in text
    )


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns, ending in an ellipsis when cut."""
    if width_of(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    out: list[str] = []
    used = 0
    for char in text:
        size = width_of(char)
        if used + size > width - 1:
            break
        out.append(char)
        used += size
    return "".join(out) + ELLIPSIS


def _fit(
    columns: list[str], widths: dict[str, int], available: int
) -> tuple[list[str], dict[str, int]]:
    def total(shown: list[str]) -> int:
        return sum(widths[column] for column in shown) + len(GAP) * (len(shown) - 1)

    shown = list(columns)
    widths = dict(widths)
    full = widths.get("title", 0)
    if "title" in widths and total(shown) > available:
        # The title gives way first, down to MIN_TITLE: a column is lost for good, a few
        # characters of a long title are not (at 80 columns every default column stays).
        widths["title"] -= min(total(shown) - available, full - min(full, MIN_TITLE))
    for candidate in DROP_ORDER:
        if total(shown) <= available:
            break
        if candidate in shown and len(shown) > 1:
            shown.remove(candidate)
    if "title" in shown:  # the room a dropped column left goes back to the title
        widths["title"] = min(full, widths["title"] + max(0, available - total(shown)))
    fitted = {column: widths[column] for column in shown}
    excess = total(shown) - available
    if excess > 0:
        # Cut the widest column first (the title, nearly always), down to MIN_TITLE.
        for column in sorted(shown, key=lambda name: -fitted[name]):
            floor = min(fitted[column], MIN_TITLE if column == "title" else 12)
            cut = min(excess, fitted[column] - floor)
            fitted[column] -= cut
            excess -= cut
            if excess <= 0:
                break
    return shown, fitted


def fitted_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    *,
    width: int,
    bold: bool,
    cell: Any,
) -> str:
    """The table as text fitted to ``width`` columns; ``cell`` turns a value into text."""
    texts = [
        [printable(cell(row.get(column)).replace("\n", " ")) for column in columns] for row in rows
    ]
    widths = {
        column: max([width_of(column), *(width_of(line[i]) for line in texts)])
        for i, column in enumerate(columns)
    }
    shown, fitted = _fit(list(columns), widths, width)
    index = [columns.index(column) for column in shown]
    last = len(shown) - 1

    def line(cells: list[str]) -> str:
        parts = []
        for position, raw in enumerate(cells):
            size = fitted[shown[position]]
            text = clip(raw, size)
            parts.append(text if position == last else text + " " * (size - width_of(text)))
        return GAP.join(parts).rstrip()

    header = line([column.upper() for column in shown])
    out = [f"\x1b[1m{header}\x1b[0m" if bold else header]
    out.extend(line([row[i] for i in index]) for row in texts)
    return "\n".join(out) + "\n"


def side_by_side(
    columns: Sequence[tuple[str, Sequence[str]]], *, width: int, bold: bool
) -> str | None:
    """Board columns next to each other (a heading and one line per card), or ``None``
    when they would be narrower than :data:`MIN_TITLE` each."""
    count = len(columns)
    if not count:
        return ""
    size = (width - len(GAP) * (count - 1)) // count
    if size < MIN_TITLE:
        return None
    height = max(len(cards) for _, cards in columns)
    lines: list[str] = []
    heads = [clip(printable(name), size) for name, _ in columns]
    head = GAP.join(text + " " * (size - width_of(text)) for text in heads).rstrip()
    lines.append(f"\x1b[1m{head}\x1b[0m" if bold else head)
    for row in range(height):
        cells = [
            clip(printable(cards[row]), size) if row < len(cards) else "" for _, cards in columns
        ]
        lines.append(GAP.join(text + " " * (size - width_of(text)) for text in cells).rstrip())
    return "\n".join(lines) + "\n"
