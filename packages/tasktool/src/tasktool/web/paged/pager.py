"""The task table's page links, count line and sort marks, when the server pages it.

Every link keeps the table's query (search, drop-downs, sort, page size), so
paging works without script; without ``table`` (every task on the page) the
fragments are what the table always had.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlencode

from tasktool.web.layout import Links, h

if TYPE_CHECKING:
    from tasktool.web.paged.table import TablePage

__all__ = ["count_line", "page_inputs", "pager", "sort_state"]


def count_line(table: TablePage | None, shown: int) -> str:
    """``N tasks`` (the script rewrites it as it filters), or which of how many this page
    shows: ``101–200 of 45,110 tasks (92,546 in all)``."""
    if table is None:
        return f'<p class="count" aria-live="polite" data-count>{shown} tasks</p>'
    first = table.query.window.offset + 1 if shown else 0
    last = table.query.window.offset + shown
    total = f"{table.total:,} tasks"
    everything = "" if table.total == table.everything else f" ({table.everything:,} in all)"
    return (
        f'<p class="count" aria-live="polite" data-count data-total="{table.total}">'
        f"{first:,}–{last:,} of {total}{everything}</p>"
    )


def page_inputs(table: TablePage | None) -> str:
    """The form's hidden sort and page size, so a search submitted without script keeps them."""
    if table is None:
        return ""
    params = table.query.params(0)
    return "".join(
        f'<input type="hidden" name="{name}" value="{h(params[name])}">'
        for name in ("sort", "limit")
        if name in params
    )


def sort_state(table: TablePage | None, field: str) -> str:
    """``aria-sort`` of a column the server sorted by."""
    sort = table.query.sort if table else None
    if not sort or sort.lstrip("-") != field:
        return ""
    return f' aria-sort="{"descending" if sort.startswith("-") else "ascending"}"'


def pager(table: TablePage | None, links: Links) -> str:
    """First, previous, next and last page links (none needed for a single page)."""
    if table is None:
        return ""
    window = table.query.window
    if window.limit is None or table.total <= window.limit:
        return ""
    last = (table.total - 1) // window.limit * window.limit
    steps = (
        ("First", 0 if window.offset else None),
        ("Previous", window.preceding()),
        ("Next", window.following(table.total)),
        ("Last", last if window.offset < last else None),
    )
    items = []
    for label, offset in steps:
        if offset is None:
            items.append(f'<span class="muted">{label}</span>')
        else:
            href = links.page("tasks") + "?" + urlencode(table.query.params(offset))
            items.append(f'<a href="{h(href.rstrip("?"))}" data-page="{label.lower()}">{label}</a>')
    page = window.offset // window.limit + 1
    pages = (table.total + window.limit - 1) // window.limit
    return (
        f'<nav class="pager" aria-label="Table pages">{" ".join(items[:2])} '
        f"<span>page {page:,} of {pages:,}</span> {' '.join(items[2:])}</nav>"
    )
