"""The frontmatter reader: a line parser for the common shape, PyYAML's C loader otherwise.

Cold scans of 10,000 files spend most of their time in PyYAML's Python-level
constructor. Task frontmatter is nearly always flat ``key: value`` lines, flow
lists (``[a, b]``) and block lists (``- a``), so :func:`read_frontmatter`
parses that shape directly (a document of ``key: value`` lines alone, the most
common, in two passes of the regex engine) and hands anything else (nesting, anchors, escapes,
comments after values, multi-line scalars...) to :func:`mtcommon.load_text`.
Where the fast path answers, it answers exactly what ``load_text`` would: every
scalar as text (a hypothesis test holds it to that). :data:`SIMPLE_FLAT` names the flat
documents whose every value the regex engine checks, for a reader that goes from the
lines straight to a task (:mod:`tasktool.files.parsing.taskfile`).
"""

from __future__ import annotations

import re
from typing import Any

from mtcommon import YamlError, load_text

__all__ = ["SIMPLE_FLAT", "read_frontmatter", "repeated_keys"]

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?$")
_ITEM = re.compile(r"( *)- +(.*)$")
#: A plain scalar may not start with one of these (or it means something else to YAML).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@` ")
_FLOW_SPECIAL = re.compile(r"[\[\]{}]")
_SIMPLE_SINGLE = re.compile(r"'([^'\n]*)'")
_SIMPLE_DOUBLE = re.compile(r'"([^"\\\n]*)"')
#: A top-level plain key (for spotting repeated keys, which YAML loaders let the last win).
_TOP_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?=[ \t\r]|$)", re.MULTILINE)
#: A flat document: only ``key: value`` lines (the value on the line), comments, blanks.
_FLAT = re.compile(r"(?:(?:[A-Za-z_][A-Za-z0-9_-]*: +[^ \n][^\n]*|#[^\n]*| *)(?:\n|\Z))*")
#: A flat document's ``key: value`` lines (the value without its trailing spaces).
_PAIR = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*): +([^\n]*[^ \n])", re.MULTILINE)
#: :data:`_INDICATORS`, escaped for a character class.
_INDICATOR_CLASS = "".join(map(re.escape, sorted(_INDICATORS)))
#: A plain scalar :func:`_flat` takes as is: no indicator first, no ``: `` or `` #`` in it,
#: not ending with ``:`` (trailing spaces allowed). The first branch, a value without ``:``
#: or ``#``, spares nearly every value the second's step per ``:`` or ``#``.
_PLAIN = (
    rf"[^{_INDICATOR_CLASS}\n]"
    r"(?:[^\n:#]*(?=\n)|[^\n:#]*(?:(?::(?=[^ \n])|(?<! )#)[^\n:#]*)*)"
)
#: A flow list's item as :func:`_value` reads it, with no whitespace at its ends: plain (the
#: same rules, and none of ``,[]{}``) or quoted without escapes.
_FLOW_ITEM = (
    rf"(?:[^{_INDICATOR_CLASS}\s]"
    r"(?:[^\n,\[\]{}:#]*(?=[ ,\]])|[^\n,\[\]{}:#]*(?:(?::(?=[^ \n,\]])|(?<! )#)[^\n,\[\]{}:#]*)*)"
    r"""(?<!\s)|'[^'\n,\[\]{}]*'|"[^"\\\n,\[\]{}]*")"""
)
_FLOW = rf"\[ *(?:{_FLOW_ITEM} *(?:, *{_FLOW_ITEM} *)*)?\]"
_QUOTED = r"'[^'\n]*'|" + r'"[^"\\\n]*"'
#: A flat document :func:`_flat` reads without falling back, each value's kind told by its
#: first character: ``key: value`` lines whose value is a plain scalar, or (right after
#: ``: ``, ending the line) a quoted scalar without escapes or a flow list of such items;
#: comments; blank lines; a newline after each. Possessive: a line matches whole or not
#: at all, nothing to backtrack into.
SIMPLE_FLAT = re.compile(
    rf"(?:(?:[A-Za-z_][A-Za-z0-9_-]*+: (?: *{_PLAIN}|{_QUOTED}|{_FLOW})|#[^\n]*| *)\n)*+"
)


class _Fallback(Exception):
    """The text leaves the fast path's shape."""


def _scalar(text: str) -> str:
    """A quoted-without-escapes or plain scalar's text; anything subtler falls back."""
    first = text[:1]
    if first == "'":
        quoted = _SIMPLE_SINGLE.fullmatch(text)
    elif first == '"':
        quoted = _SIMPLE_DOUBLE.fullmatch(text)
    elif first and first not in _INDICATORS and ": " not in text and " #" not in text:
        if text[-1] == ":":
            raise _Fallback
        return text
    else:
        raise _Fallback
    if quoted is None:
        raise _Fallback
    return quoted.group(1)


def _value(text: str) -> Any:
    if text[0] != "[":
        return _scalar(text)
    if text[-1] != "]":
        raise _Fallback
    inner = text[1:-1]
    if _FLOW_SPECIAL.search(inner):
        raise _Fallback
    if not inner.strip():
        return []
    return [_scalar(item.strip()) for item in inner.split(",")]


def _flat(text: str) -> dict[str, Any] | None:
    """A flat document (nearly every task file) read by two passes of the regex engine
    instead of a Python step per line; ``None`` for any other shape. Answers as the
    line loop of :func:`_fast` does: a plain value is taken as is, any other through
    :func:`_value`."""
    if _FLAT.fullmatch(text) is None:
        return None
    pairs = _PAIR.findall(text)
    data: dict[str, Any] = {}
    for key, value in pairs:
        if (
            value[0] not in _INDICATORS
            and ": " not in value
            and " #" not in value
            and value[-1] != ":"
        ):
            data[key] = value
        else:
            data[key] = _value(value)
    if len(data) != len(pairs) or not data:
        raise _Fallback  # a repeated key, or an empty document
    return data


def _fast(text: str) -> dict[str, Any]:
    if "\t" in text or "\r" in text:
        raise _Fallback
    flat = _flat(text)
    if flat is not None:
        return flat
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
        if key in data:
            raise _Fallback  # a repeated key: the slow path names it
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
            items.append(_scalar(item.group(2)))
            index += 1
        if index < count and lines[index].startswith((" ", "-")) and lines[index].strip():
            raise _Fallback
        data[key] = items if indent is not None else ""
    if not data:
        raise _Fallback  # an empty document is None to the YAML loader
    return data


def repeated_keys(text: str) -> list[str]:
    """Top-level plain keys that appear more than once, in order of their second sighting."""
    seen: set[str] = set()
    repeated: list[str] = []
    for key in _TOP_KEY.findall(text):
        if key in seen and key not in repeated:
            repeated.append(key)
        seen.add(key)
    return repeated


def read_frontmatter(text: str, *, source: str) -> Any:
    """Parse frontmatter keeping every scalar as text; syntax errors are ``YamlError``.

    A repeated top-level key is a ``yaml.duplicate_key`` error: loaders silently keep
    one of the values, and a later round-trip edit would keep the other.
    """
    try:
        return _fast(text)
    except _Fallback:
        data = load_text(text, source=source)
    repeated = repeated_keys(text) if isinstance(data, dict) else []
    if repeated:
        raise YamlError(
            f"{source}: the key {repeated[0]!r} appears more than once",
            code="yaml.duplicate_key",
            details={"file": source},
        )
    return data
