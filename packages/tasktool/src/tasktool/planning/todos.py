"""``todos``: TODO, FIXME, HACK, XXX and BUG markers found in source comments.

Only comments count: each language's comment syntax is matched together with
its string literals in one regular-expression pass, so a marker inside a
string is not reported. Files are chosen by :func:`discover_files` (git's own
view of the tree when there is one, so git-ignored files are skipped) and
binary files are skipped. A marker's ``id`` hashes its file, marker, text and
its occurrence among identical ones, so it survives lines moving around.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

__all__ = ["MARKERS", "Todo", "comment_syntax", "scan_files", "scan_text"]

MARKERS = ("TODO", "FIXME", "HACK", "XXX", "BUG")
_MARKER = re.compile(r"\b(TODO|FIXME|HACK|XXX|BUG)\b(?:\(([^)\n]*)\))?:?[ \t]*([^\n]*)")
_ANY_MARKER = re.compile(r"\b(?:TODO|FIXME|HACK|XXX|BUG)\b")
_TRAILERS = ("*/", "-->", "-}", "]]")


class Todo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One marker: where it is, what it says and who it names (``TODO(ann): ...``)."""

    id: str
    marker: str
    text: str
    file: str
    line: int
    author: str | None = None

    def to_json(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self)


# String literal patterns, longest first so that triple quotes win.
_DQ = r'"(?:\\.|[^"\\\n])*"'
_SQ = r"'(?:\\.|[^'\\\n])*'"
_BT = r"`(?:\\.|[^`\\])*`"
_PY_TRIPLE = r'"""[\s\S]*?"""|' + r"'''[\s\S]*?'''"


def _syntax(strings: Iterable[str], line: Iterable[str], block: Iterable[tuple[str, str]]) -> str:
    """One alternation: group 1 is a comment, anything else is a string to step over."""
    # Blocks first: Lua's ``--[[`` must win over its ``--`` line comment.
    comments = [
        re.escape(open_) + r"[\s\S]*?(?:" + re.escape(close) + "|$)" for open_, close in block
    ]
    comments += [re.escape(start) + r"[^\n]*" for start in line]
    return "|".join([f"({'|'.join(comments)})", *strings])


_C_LIKE = _syntax([_DQ, _SQ], ["//"], [("/*", "*/")])
_JS_LIKE = _syntax([_DQ, _SQ, _BT], ["//"], [("/*", "*/")])
_HASH = _syntax([_DQ, _SQ], ["#"], [])
_PYTHON = _syntax([_PY_TRIPLE, _DQ, _SQ], ["#"], [])
_DASH = _syntax([_SQ, _DQ], ["--"], [("/*", "*/")])
_LUA = _syntax([_DQ, _SQ], ["--"], [("--[[", "]]")])
_HASKELL = _syntax([_DQ], ["--"], [("{-", "-}")])
_HTML = _syntax([], [], [("<!--", "-->")])
_WEB_COMPONENT = _syntax([_DQ, _SQ, _BT], ["//"], [("/*", "*/"), ("<!--", "-->")])
_CSS = _syntax([_DQ, _SQ], [], [("/*", "*/")])
_PHP = _syntax([_DQ, _SQ], ["//", "#"], [("/*", "*/")])
_SEMICOLON = _syntax([_DQ], [";"], [])
_PERCENT = _syntax([_DQ], ["%"], [])

_BY_SUFFIX: dict[str, str] = {
    suffix: pattern
    for pattern, suffixes in (
        (
            _C_LIKE,
            "c h cc cpp cxx hpp hh java kt kts scala cs swift rs dart groovy proto sol zig m",
        ),
        (_JS_LIKE, "js mjs cjs jsx ts tsx mts cts go"),
        (_PYTHON, "py pyi pyx"),
        (_HASH, "sh bash zsh fish rb pl pm r yaml yml toml cfg conf mk cmake tf ps1 nix ex exs jl"),
        (_DASH, "sql"),
        (_LUA, "lua"),
        (_HASKELL, "hs elm"),
        (_HTML, "html htm xml md markdown"),
        (_WEB_COMPONENT, "vue svelte"),
        (_CSS, "css"),
        (_C_LIKE, "scss less"),
        (_PHP, "php"),
        (_SEMICOLON, "lisp clj cljs cljc el scm ini asm s"),
        (_PERCENT, "tex sty erl hrl"),
    )
    for suffix in suffixes.split()
}
_BY_NAME = {"makefile": _HASH, "dockerfile": _HASH, "cmakelists.txt": _HASH, "gemfile": _HASH}


def comment_syntax(path: str) -> re.Pattern[str] | None:
    """The comment-and-string pattern for a file name, or ``None`` for unknown kinds."""
    name = path.rsplit("/", 1)[-1].lower()
    source = _BY_NAME.get(name)
    if source is None and "." in name:
        source = _BY_SUFFIX.get(name.rsplit(".", 1)[1])
    return None if source is None else _compiled(source)


@functools.cache
def _compiled(source: str) -> re.Pattern[str]:
    """A kind's pattern, compiled once (a few dozen kinds at most)."""
    return re.compile(source)


def _clean(text: str) -> str:
    text = text.strip()
    for trailer in _TRAILERS:
        text = text.removesuffix(trailer).rstrip()
    return text


def scan_text(path: str, text: str) -> list[Todo]:
    """Markers in the comments of one file's text; ``path`` is the reported file name."""
    syntax = comment_syntax(path)
    if syntax is None or _ANY_MARKER.search(text) is None:
        return []
    line_starts: list[int] | None = None
    seen: dict[tuple[str, str], int] = {}
    found: list[Todo] = []
    for match in syntax.finditer(text):
        comment = match.group(1)
        if not comment or _ANY_MARKER.search(comment) is None:
            continue
        if line_starts is None:
            line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
        for marker in _MARKER.finditer(comment):
            offset = match.start(1) + marker.start()
            body = _clean(marker.group(3))
            key = (marker.group(1), body)
            occurrence = seen.get(key, 0)
            seen[key] = occurrence + 1
            digest = hashlib.sha1(
                f"{path}\0{key[0]}\0{body}\0{occurrence}".encode(), usedforsecurity=False
            ).hexdigest()
            found.append(
                Todo(
                    id=digest[:8],
                    marker=marker.group(1),
                    text=body,
                    file=path,
                    line=bisect.bisect_right(line_starts, offset),
                    author=(marker.group(2) or "").strip() or None,
                )
            )
    return found


def scan_files(paths: Iterable[str], read: Callable[[str], str | None]) -> list[Todo]:
    """Scan each path whose text ``read`` returns (``None`` skips it: binary, unreadable)."""
    found: list[Todo] = []
    for path in paths:
        if comment_syntax(path) is None:
            continue
        text = read(path)
        if text is not None:
            found.extend(scan_text(path, text))
    return found
