"""The HTML frame every page shares, the links between pages and small fragments.

Pages are rendered on the server from the API's JSON documents, so the live
dashboard and the static export (:mod:`tasktool.web.export`) are the same
HTML; only :class:`Links` differs (``/tasks/007`` live, ``tasks/007.html``
relative in an export, so it opens from ``file://``). No external asset: one
stylesheet and one script, both shipped in the package.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from tasktool import __version__
from tasktool.files.parsing.taskfile import is_safe_id
from tasktool.web.security import PAGE_POLICY

__all__ = [
    "NAV",
    "Links",
    "chips",
    "data_attributes",
    "export_name",
    "h",
    "layout",
    "pill",
    "task_link",
]

NAV: tuple[tuple[str, str, str], ...] = (
    ("tasks", "Tasks", "t"),
    ("board", "Board", "b"),
    ("graph", "Graph", "g"),
    ("next", "Next", "n"),
    ("validate", "Validate", "v"),
)


_SPECIAL = re.compile(r"[&<>\"']")


def h(value: object) -> str:
    """Text as HTML (``None`` as empty); most values have nothing to escape (fast path)."""
    if value is None:
        return ""
    text = str(value)
    return escape(text, quote=True) if _SPECIAL.search(text) else text


def export_name(task_id: str) -> str:
    """The file name of a task's page in an export: the id when it is file-safe."""
    if is_safe_id(task_id):
        return f"{task_id}.html"
    return (
        "task-"
        + hashlib.sha256(task_id.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        + ".html"
    )


@dataclass(frozen=True)
class Links:
    """Where pages, tasks and assets are: the live server's paths, or an export's files.

    ``depth`` is how many folders below the export's root the current page is.
    """

    static: bool = False
    depth: int = 0
    readonly: bool = False

    def _root(self) -> str:
        return "../" * self.depth

    def page(self, name: str, **query: str) -> str:
        if self.static:
            suffix = "-" + "-".join(query.values()) if query else ""
            return f"{self._root()}{'index' if name == 'tasks' else name}{suffix}.html"
        path = "/" if name == "tasks" else f"/{name}"
        return f"{path}?{urlencode(query)}" if query else path

    def task(self, task_id: str) -> str:
        if self.static:
            return f"{self._root()}tasks/{export_name(task_id)}"
        return "/tasks/" + quote(task_id, safe="")

    def asset(self, name: str) -> str:
        return f"{self._root()}static/{name}" if self.static else f"/static/{name}"

    def api(self, name: str) -> str:
        return f"{self._root()}api/{name}.json" if self.static else f"/api/{name}"

    @property
    def editable(self) -> bool:
        return not self.static and not self.readonly

    def at_depth(self, depth: int) -> Links:
        return Links(static=self.static, depth=depth, readonly=self.readonly)


def pill(kind: str, value: str | None) -> str:
    """A coloured label for a status or priority (``kind`` picks the palette)."""
    if not value:
        return '<span class="muted">–</span>'
    return f'<span class="pill {kind}-{h(value)}">{h(value)}</span>'


def chips(values: Iterable[str]) -> str:
    return " ".join(f'<span class="chip">{h(value)}</span>' for value in values)


def task_link(links: Links, task_id: str, text: str | None = None) -> str:
    return f'<a href="{h(links.task(task_id))}">{h(text if text is not None else task_id)}</a>'


def layout(
    links: Links,
    *,
    title: str,
    active: str,
    body: str,
    attributes: Mapping[str, str] | None = None,
) -> str:
    """A whole page: header with the navigation (and its keys), ``body``, footer."""
    nav = "".join(
        f'<a href="{h(links.page(name))}" data-key="{key}"'
        + (' aria-current="page"' if name == active else "")
        + f">{label}<kbd>{key}</kbd></a>"
        for name, label, key in NAV
    )
    mode = "static" if links.static else ("readonly" if links.readonly else "live")
    badge = {
        "static": '<span class="badge">static export</span>',
        "readonly": '<span class="badge">read-only</span>',
        "live": '<span class="badge live" id="live" title="Reloads when task files change">'
        "live</span>",
    }[mode]
    extra = "".join(f' data-{h(key)}="{h(value)}"' for key, value in (attributes or {}).items())
    # A static host sends no headers of ours: an exported page carries the policy itself.
    policy = (
        f'<meta http-equiv="Content-Security-Policy" content="{h(PAGE_POLICY)}">\n'
        if links.static
        else ""
    )
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
{policy}<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{h(title)} · tasktool</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{h(links.asset("app.css"))}">
<script defer src="{h(links.asset("app.js"))}"></script>
</head>
<body data-mode="{mode}" data-events="{h("" if links.static else links.api("events"))}"{extra}>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<span class="brand">tasktool</span>
<nav aria-label="Pages">{nav}</nav>
{badge}
<button type="button" class="help-button" data-help aria-label="Keyboard shortcuts">?</button>
</header>
<main id="main" tabindex="-1">
{body}
</main>
<footer>tasktool {h(__version__)} · <a href="{h(links.api("tasks"))}">JSON</a>
· press <kbd>?</kbd> for keyboard shortcuts</footer>
<dialog id="help" aria-label="Keyboard shortcuts">
<h2>Keyboard shortcuts</h2>
<dl>
<dt><kbd>t</kbd> <kbd>b</kbd> <kbd>g</kbd> <kbd>n</kbd> <kbd>v</kbd></dt>
<dd>Tasks, Board, Graph, Next, Validate</dd>
<dt><kbd>/</kbd></dt><dd>Search the table</dd>
<dt><kbd>j</kbd> <kbd>k</kbd></dt><dd>Next / previous row</dd>
<dt><kbd>Enter</kbd></dt><dd>Open the selected task</dd>
<dt><kbd>e</kbd></dt><dd>Edit the task (task page)</dd>
<dt><kbd>c</kbd></dt><dd>Create a task (task table)</dd>
<dt><kbd>Ctrl</kbd>+<kbd>Enter</kbd></dt><dd>Save the edit form</dd>
<dt><kbd>Esc</kbd></dt><dd>Leave a field, close this help</dd>
</dl>
<form method="dialog"><button>Close</button></form>
</dialog>
</body>
</html>
"""


def data_attributes(values: Mapping[str, Any]) -> str:
    """``data-*`` attributes of a row (lists joined with spaces)."""
    parts = []
    for key, value in values.items():
        text = (
            " ".join(value) if isinstance(value, list | tuple) else ("" if value is None else value)
        )
        parts.append(f' data-{key}="{h(text)}"')
    return "".join(parts)
