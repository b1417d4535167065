"""YAML scalars and flow lists as text: rendering a value, and finding the extent of one.

The line editor (:mod:`tasktool.files.parsing.roundtrip`) rewrites only the lines of the keys it
changes, so it renders values itself: plain when a YAML reader gives back the same text
(and would not read a number, boolean, null or date-like word instead), else single-quoted
when that is possible on one line, else double-quoted with escapes.
"""

from __future__ import annotations

import re

__all__ = ["double_quoted", "quote_style", "render_scalar", "token_end"]

#: Words a YAML 1.1 or 1.2 reader would not read as text (numbers, booleans, nulls).
_IMPLICIT = re.compile(
    r"""^(?:
        [-+]?(?:[0-9][0-9_]*)?\.?[0-9_]*(?:[eE][-+]?[0-9]+)?   # ints and floats, 010, 1_000
        |[-+]?0[xob][0-9a-fA-F_]+                              # hex, octal, binary
        |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
        |[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?           # sexagesimal
        |y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE
        |on|On|ON|off|Off|OFF|null|Null|NULL|~|=|<<
    )$""",
    re.VERBOSE,
)
_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@` \t")
#: Characters YAML reads as line breaks, or that it does not allow unescaped.
_BREAKS = frozenset("\n\r\x85\u2028\u2029")


def _printable(char: str) -> bool:
    """YAML's ``c-printable`` (tab included), minus the byte order mark."""
    code = ord(char)
    return (
        char == "\t"
        or 0x20 <= code <= 0x7E
        or code == 0x85
        or 0xA0 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    ) and char != "\ufeff"


def _plain_ok(value: str, *, in_flow: bool) -> bool:
    if not value or value[0] in _PLAIN_START or value[-1] in " \t:" or value != value.strip():
        return False
    if _IMPLICIT.match(value) or value.startswith(("---", "...")):
        return False
    if ": " in value or " #" in value or "\t#" in value or ":\t" in value:
        return False
    if in_flow and any(char in value for char in ",[]{}"):
        return False
    return all(_printable(char) and char not in _BREAKS and char != "\t" for char in value)


def _single_ok(value: str) -> bool:
    return all(_printable(char) and char not in _BREAKS for char in value)


def double_quoted(value: str) -> str:
    """``value`` as a YAML double-quoted scalar on one line."""
    out = ['"']
    for char in value:
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\t":
            out.append("\\t")
        elif char == "\n":
            out.append("\\n")
        elif _printable(char) and char not in _BREAKS:
            out.append(char)
        elif ord(char) <= 0xFF:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def render_scalar(value: str, *, style: str = "", in_flow: bool = False) -> str:
    """``value`` as YAML text; ``style`` is the quote the old value used (``'``, ``"`` or
    ``""`` for plain), kept when it can carry the new value."""
    if style == '"':
        return double_quoted(value)
    if style == "" and _plain_ok(value, in_flow=in_flow):
        return value
    if _single_ok(value):
        return "'" + value.replace("'", "''") + "'"
    return double_quoted(value)


def token_end(text: str, start: int, *, in_flow: bool = False) -> int:
    """Where the scalar starting at ``text[start]`` ends (quoted: after the closing quote;
    plain: before a comment, or a ``,``/``]`` in a flow list), or -1 if it is not closed."""
    if start >= len(text):
        return start
    quote = text[start]
    if quote == "'":
        position = start + 1
        while True:
            found = text.find("'", position)
            if found < 0:
                return -1
            if text.startswith("''", found):
                position = found + 2
                continue
            return found + 1
    if quote == '"':
        position = start + 1
        while position < len(text):
            if text[position] == "\\":
                position += 2
                continue
            if text[position] == '"':
                return position + 1
            position += 1
        return -1
    position = start
    while position < len(text):
        char = text[position]
        if char in " \t" and text[position + 1 : position + 2] == "#":
            break
        if in_flow and char in ",]":
            break
        position += 1
    return len(text[:position].rstrip(" \t"))


def quote_style(token: str) -> str:
    """The quote a scalar token opens with (``""`` for plain)."""
    return token[0] if token[:1] in {"'", '"'} else ""
