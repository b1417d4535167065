"""Jira's rich text (Atlassian Document Format, ADF) as Markdown.

ADF is a JSON tree: a ``doc`` whose ``content`` holds block nodes (paragraphs,
headings, lists, code blocks, tables...) whose leaves are inline nodes (text
with ``marks``, hard breaks, mentions, emoji). :func:`adf_to_markdown` renders
the blocks and inline nodes Markdown has a form for; a node it does not know
is recursed into, so its text is kept. It never raises: a value of the wrong
shape anywhere in the tree is skipped, and a tree deeper than
:data:`MAX_DEPTH` has its deepest parts flattened to plain text instead of
exhausting the stack.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from typing import Any

#: Nesting depth past which content is flattened to text (Python's stack stays far away).
MAX_DEPTH = 60
#: Every node kind the converter treats specially (tests draw malformed nodes from it).
NODE_TYPES = frozenset(
    {"doc", "paragraph", "heading", "bulletList", "orderedList", "listItem", "taskList"}
    | {"taskItem", "decisionList", "decisionItem", "codeBlock", "blockquote", "panel", "rule"}
    | {"table", "tableRow", "tableHeader", "tableCell", "media", "mediaInline", "mediaSingle"}
    | {"expand", "nestedExpand", "blockCard", "text", "hardBreak", "mention", "emoji"}
    | {"inlineCard", "date", "status", "placeholder"}
)
_INLINE_TYPES = frozenset(
    {"text", "hardBreak", "mention", "emoji", "inlineCard", "date", "status", "placeholder"}
)
_ESCAPED = re.compile(r"([\\`*_\[\]])")
_BACKTICKS = re.compile(r"`+")
#: Mark wrappers, innermost first; marks not listed (underline, colours) keep plain text.
_MARK_ORDER = ("code", "em", "strong", "strike", "link")


def _kind(node: Any) -> str:
    if isinstance(node, dict) and isinstance(node.get("type"), str):
        return str(node["type"])
    return ""


def _children(node: Any) -> list[Any]:
    content = node.get("content") if isinstance(node, dict) else None
    return content if isinstance(content, list) else []


def _attrs(node: Any) -> dict[str, Any]:
    attrs = node.get("attrs") if isinstance(node, dict) else None
    return attrs if isinstance(attrs, dict) else {}


def _attr_text(node: Any, *keys: str) -> str:
    attrs = _attrs(node)
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value):
            return str(value)
    return ""


def _is_inline(node: Any) -> bool:
    return _kind(node) in _INLINE_TYPES


def plain_text(node: Any) -> str:
    """Every text leaf under ``node`` in document order, without formatting (iterative)."""
    parts: list[str] = []
    stack: list[Any] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, list):
            stack.extend(reversed(current))
            continue
        kind = _kind(current)
        text = current.get("text") if kind == "text" else None
        if isinstance(text, str):
            parts.append(text)
        elif kind == "hardBreak":
            parts.append("\n")
        elif kind in {"mention", "emoji", "status"}:
            parts.append(_attr_text(current, "text", "shortName", "id"))
        stack.extend(reversed(_children(current)))
    return "".join(parts)


# Inline nodes -----------------------------------------------------------------------------


def _code_span(text: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _wrap(text: str, left: str, right: str) -> str:
    """``text`` between markers, with its outer spaces moved outside (``** a**`` is no bold)."""
    core = text.strip()
    if not core:
        return text
    start = text[: len(text) - len(text.lstrip())]
    end = text[len(text.rstrip()) :]
    return f"{start}{left}{core}{right}{end}"


def _marked_text(node: dict[str, Any]) -> str:
    text = node.get("text")
    if not isinstance(text, str):
        return ""
    listed = node.get("marks")
    marks = (
        {_kind(mark): mark for mark in listed if _kind(mark)} if isinstance(listed, list) else {}
    )
    text = _code_span(text) if "code" in marks else _ESCAPED.sub(r"\\\1", text)
    for name in _MARK_ORDER[1:]:
        if name not in marks:
            continue
        if name == "em":
            text = _wrap(text, "*", "*")
        elif name == "strong":
            text = _wrap(text, "**", "**")
        elif name == "strike":
            text = _wrap(text, "~~", "~~")
        else:
            href = _attr_text(marks[name], "href")
            if href:
                text = f"[{text}]({href.replace(')', '%29').replace(' ', '%20')})"
    return text


def _date(node: Any) -> str:
    stamp = _attr_text(node, "timestamp")
    try:
        moment = dt.datetime.fromtimestamp(int(float(stamp)) / 1000, dt.UTC)
    except (ValueError, OverflowError, OSError):
        return stamp
    return moment.date().isoformat()


def _inline(node: Any, depth: int, line_break: str) -> str:
    kind = _kind(node)
    if depth > MAX_DEPTH:
        return plain_text(node)
    if kind == "text":
        return _marked_text(node)
    if kind == "hardBreak":
        return line_break
    if kind == "mention":
        name = _attr_text(node, "text", "id")
        return name if name.startswith("@") or not name else f"@{name}"
    if kind == "emoji":
        return _attr_text(node, "text", "shortName")
    if kind in {"inlineCard", "blockCard"}:
        url = _attr_text(node, "url")
        return f"<{url}>" if url else ""
    if kind == "date":
        return _date(node)
    if kind in {"status", "placeholder"}:
        return _attr_text(node, "text")
    text = node.get("text") if isinstance(node, dict) else None
    inner = "".join(_inline(child, depth + 1, line_break) for child in _children(node))
    return inner or (text if isinstance(text, str) else "")


def _inline_content(node: Any, depth: int, line_break: str = "\\\n") -> str:
    return "".join(_inline(child, depth + 1, line_break) for child in _children(node))


# Block nodes ------------------------------------------------------------------------------


def _indent(lines: list[str], first: str, rest: str) -> list[str]:
    if not lines:
        return [first.rstrip()]
    return [first + lines[0]] + [rest + line if line else "" for line in lines[1:]]


def _list_item(node: Any, marker: str, depth: int) -> list[str]:
    # Blocks in an item stay tight: a nested list follows its paragraph without a gap.
    lines = _blocks(_children(node), depth + 1, tight=True)
    return _indent(lines, marker, " " * len(marker))


def _list(node: Any, depth: int, ordered: bool) -> list[str]:
    start = _attrs(node).get("order", 1)
    number = start if isinstance(start, int) and not isinstance(start, bool) and start >= 0 else 1
    lines: list[str] = []
    for item in _children(node):
        if ordered:
            marker = f"{number}. "
            number += 1
        elif _kind(item) == "taskItem":
            marker = "- [x] " if _attr_text(item, "state") == "DONE" else "- [ ] "
        else:
            marker = "- "
        lines.extend(_list_item(item, marker, depth))
    return lines


def _code_block(node: Any) -> list[str]:
    text = plain_text(_children(node))
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    language = _attr_text(node, "language").split()
    return [fence + (language[0] if language else ""), *text.split("\n"), fence]


def _cell(node: Any, depth: int) -> str:
    parts = []
    for block in _children(node):
        if _is_inline(block):
            parts.append(_inline(block, depth + 1, "<br>"))
        elif _kind(block) in {"paragraph", "heading"}:
            parts.append(_inline_content(block, depth + 1, "<br>"))
        else:
            parts.append(plain_text(block).replace("\n", "<br>"))
    return "<br>".join(parts).replace("|", "\\|").replace("\n", " ").strip()


def _table(node: Any, depth: int) -> list[str]:
    rows = [[_cell(cell, depth + 1) for cell in _children(row)] for row in _children(node)]
    rows = [row for row in rows if row]
    if not rows:
        return []
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
    lines.extend("| " + " | ".join(row) + " |" for row in rows[1:])
    return lines


def _block(node: Any, depth: int) -> list[str]:
    """One block node as Markdown lines."""
    kind = _kind(node)
    if depth > MAX_DEPTH:
        text = plain_text(node)
        return text.split("\n") if text else []
    if kind == "paragraph":
        text = _inline_content(node, depth)
        return text.split("\n") if text else []
    if kind == "heading":
        level = _attrs(node).get("level")
        hashes = "#" * (level if isinstance(level, int) and 1 <= level <= 6 else 1)
        return [f"{hashes} " + _inline_content(node, depth, " ").strip()]
    if kind in {"bulletList", "taskList", "decisionList"}:
        return _list(node, depth, ordered=False)
    if kind == "orderedList":
        return _list(node, depth, ordered=True)
    if kind == "codeBlock":
        return _code_block(node)
    if kind in {"blockquote", "panel"}:
        return [f"> {line}" if line else ">" for line in _blocks(_children(node), depth + 1)]
    if kind == "rule":
        return ["---"]
    if kind == "table":
        return _table(node, depth)
    if kind in {"media", "mediaInline"}:
        label = _attr_text(node, "alt", "url", "id")
        return [f"[attachment: {label}]" if label else "[attachment]"]
    if kind in {"expand", "nestedExpand"}:
        title = _ESCAPED.sub(r"\\\1", _attr_text(node, "title"))
        inner = _blocks(_children(node), depth + 1)
        return [f"**{title}**", "", *inner] if title else inner
    if _is_inline(node):
        text = _inline(node, depth, "\\\n")
        return text.split("\n") if text else []
    return _blocks(_children(node), depth + 1)


def _runs(children: list[Any]) -> Iterator[tuple[bool, list[Any]]]:
    """Consecutive inline nodes grouped (as one paragraph), block nodes one by one."""
    inline: list[Any] = []
    for child in children:
        if _is_inline(child):
            inline.append(child)
            continue
        if inline:
            yield True, inline
            inline = []
        yield False, [child]
    if inline:
        yield True, inline


def _blocks(children: list[Any], depth: int, *, tight: bool = False) -> list[str]:
    lines: list[str] = []
    for inline, nodes in _runs(children):
        if inline:
            text = "".join(_inline(node, depth + 1, "\\\n") for node in nodes)
            rendered = text.split("\n") if text else []
        else:
            rendered = _block(nodes[0], depth)
        if not rendered:
            continue
        if lines and not tight:
            lines.append("")
        lines.extend(rendered)
    return lines


def adf_to_markdown(document: Any) -> str:
    """Markdown for an ADF document (or any node); ``""`` for an empty or unusable value.

    A plain string (Jira's older API, or a field that is not rich text) is returned as it is.
    """
    if isinstance(document, str):
        return document
    if _kind(document) in {"", "doc"}:
        lines = _blocks(_children(document), 0)
    else:
        lines = _block(document, 0)
    text = "\n".join(lines)
    return text.strip("\n") + "\n" if text.strip() else ""


__all__ = ["MAX_DEPTH", "NODE_TYPES", "adf_to_markdown", "plain_text"]
