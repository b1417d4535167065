"""Task descriptions as HTML: Markdown rendered by markdown-it-py with raw HTML off.

A description is written by whoever can edit a task file (or sync it from a
tracker), so it is untrusted: HTML in it is shown as text, never passed through
(``html: False``), and markdown-it refuses ``javascript:``, ``vbscript:``,
``file:`` and non-image ``data:`` links. What gets through still runs under the
dashboard's Content-Security-Policy (no inline script, images only from the
dashboard itself), so a remote image does not load either.

CommonMark plus tables and strikethrough, as GitHub shows them. Headings move
two levels down (``#`` is an ``h3``), under the page's ``h1`` and the
section's ``h2``, so the page keeps one title. Without
markdown-it-py (a partial install of the ``web`` extra) the text is shown as it
is, escaped.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from tasktool.web.layout import h

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore

__all__ = ["HEADING_SHIFT", "markdown_html"]

HEADING_SHIFT = 2


def _shift_headings(state: StateCore) -> None:
    for token in state.tokens:
        if token.type in {"heading_open", "heading_close"}:
            token.tag = f"h{min(6, int(token.tag[1:]) + HEADING_SHIFT)}"


@cache
def _parser() -> MarkdownIt | None:
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        return None
    options = {"html": False, "linkify": False, "typographer": False}
    parser = MarkdownIt("commonmark", options).enable(["table", "strikethrough"])
    parser.core.ruler.push("shift_headings", _shift_headings)
    return parser


def markdown_html(text: str) -> str:
    """``text`` (Markdown) as an HTML fragment: a ``div.markdown``, or the escaped text
    in a ``pre`` without the parser."""
    parser = _parser()
    if parser is None:
        return f'<pre class="body">{h(text)}</pre>'
    return f'<div class="body markdown">\n{parser.render(text)}</div>'
