"""The frontmatter reader: a line parser for the common shape, PyYAML's C loader otherwise.

Cold scans of 10,000 files spend most of their time in PyYAML's Python-level
constructor. Task frontmatter is nearly always flat ``key: value`` lines, flow
lists (``[a, b]``) and block lists (``- a``), so :func:`read_frontmatter`
parses that shape directly and hands anything else (nesting, anchors, escapes,
comments after values, multi-line scalars...) to :func:`mtcommon.load_text`.
Where the fast path answers, it answers exactly what ``load_text`` would: every
scalar as text (a hypothesis test holds it to that).
"""

from __future__ import annotations

import re
from typing import Any

from mtcommon import load_text

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?$")
_ITEM = re.compile(r"( *)- +(.*)$")
#: Plain scalars that are safe to take verbatim: no indicator first, no ": " or " #" inside.
_PLAIN = re.compile(r"[^-?:,\[\]{}#&*!|>'\"%@`\s](?:[^:#]|:(?=\S)|(?<=\S)#)*")
_FLOW_ITEM = re.compile(r"[^-?:,\[\]{}#&*!|>'\"%@`\s](?:[^:#,\[\]{}]|:(?=[^\s,\[\]{}])|(?<=\S)#)*")
_SIMPLE_SINGLE = re.compile(r"'([^'\n]*)'")
_SIMPLE_DOUBLE = re.compile(r'"([^"\\\n]*)"')


class _Fallback(Exception):
    """The text leaves the fast path's shape."""


def _scalar(text: str, flow: bool) -> str:
    for pattern in (_SIMPLE_SINGLE, _SIMPLE_DOUBLE):
        quoted = pattern.fullmatch(text)
        if quoted:
            return quoted.group(1)
    if (_FLOW_ITEM if flow else _PLAIN).fullmatch(text) and text[-1] != ":":
        return text
    raise _Fallback


def _value(text: str) -> Any:
    if text.startswith("["):
        if not text.endswith("]"):
            raise _Fallback
        inner = text[1:-1].strip()
        if not inner:
            return []
        return [_scalar(item.strip(), flow=True) for item in inner.split(",")]
    return _scalar(text, flow=False)


def _fast(text: str) -> dict[str, Any]:
    if "\t" in text or "\r" in text:
        raise _Fallback
    data: dict[str, Any] = {}
    lines = text.split("\n")
    index, count = 0, len(lines)
    while index < count:
        line = lines[index].rstrip(" ")
        index += 1
        if not line or line.startswith("#"):
            continue
        match = _KEY.match(line)
        if match is None:
            raise _Fallback
        key, value = match.group(1), match.group(2)
        if value:
            data[key] = _value(value)
            continue
        items: list[str] = []
        indent: str | None = None
        while index < count:
            item = _ITEM.match(lines[index].rstrip(" "))
            if item is None or (indent is not None and item.group(1) != indent):
                break
            indent = item.group(1)
            items.append(_scalar(item.group(2), flow=False))
            index += 1
        if index < count and lines[index].startswith((" ", "-")) and lines[index].strip():
            raise _Fallback
        data[key] = items if indent is not None else ""
    if not data:
        raise _Fallback  # an empty document is None to the YAML loader
    return data


def read_frontmatter(text: str, *, source: str) -> Any:
    """Parse frontmatter keeping every scalar as text; syntax errors are ``YamlError``."""
    try:
        return _fast(text)
    except _Fallback:
        return load_text(text, source=source)
