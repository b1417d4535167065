"""The task table's rows: all of them when they fit on one page, else one page, found here.

A repository of up to :data:`TABLE_PAGE` active tasks is sent whole and
filtered and sorted in the browser (``app.js``), as it always was. A larger one
is filtered, searched and sorted on the server from the same query string the
browser writes (``?q=api&status=pending&sort=-priority``), and only the page
asked for (``offset``, ``limit``) is rendered, with the total: the page stays a
few thousand DOM nodes at 100,000 tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from tasktool.files.caches.bodies import Bodies
from tasktool.model.task import Task
from tasktool.model.views import task_views
from tasktool.planning.filters import sort_tasks, values_of
from tasktool.planning.repository import Repository
from tasktool.web.paged.paging import Window, query_window
from tasktool.web.pages import SELECT_FILTERS
from tasktool.web.snapshot import Remember

__all__ = ["TABLE_PAGE", "TablePage", "TableQuery", "table_query", "table_rows"]

TABLE_PAGE = 100
_MOST = 1000


@dataclass(frozen=True)
class TableQuery:
    """What the table's URL asks for: search words, drop-down values, sort, page."""

    text: str = ""
    chosen: tuple[tuple[str, str], ...] = ()
    sort: str | None = None
    window: Window = field(default_factory=lambda: Window(0, TABLE_PAGE))

    def params(self, offset: int) -> dict[str, str]:
        """The query string of this view at ``offset``."""
        params = {"q": self.text, **dict(self.chosen), "sort": self.sort or ""}
        if offset:
            params["offset"] = str(offset)
        if self.window.limit != TABLE_PAGE:
            params["limit"] = str(self.window.limit or "all")
        return {key: value for key, value in params.items() if value}


@dataclass(frozen=True)
class TablePage:
    """A page of the table: its query, how many tasks match it and how many there are, and
    the drop-downs' values (of every task, not only the page's)."""

    query: TableQuery
    total: int
    everything: int
    choices: dict[str, list[str]]


def table_query(request: Request) -> TableQuery:
    params = request.query_params
    chosen = tuple(
        (name, params[name].strip()) for name, _ in SELECT_FILTERS if params.get(name, "").strip()
    )
    return TableQuery(
        text=params.get("q", "").strip(),
        chosen=chosen,
        sort=params.get("sort", "").strip() or None,
        window=query_window(request, default=TABLE_PAGE, most=_MOST),
    )


def _choices(tasks: Sequence[Task], known: dict[str, list[str]]) -> dict[str, list[str]]:
    choices: dict[str, list[str]] = {}
    for name, _ in SELECT_FILTERS:
        seen = {value for task in tasks for value in values_of(task, name) if value}
        first = [value for value in known.get(name, ()) if value in seen]
        choices[name] = [*first, *sorted(seen - set(first))]
    return choices


def _searched(tasks: list[Task], text: str, bodies: Bodies) -> list[Task]:
    """Tasks whose id, title, owner or a tag holds every word (as the browser matches a
    row), or whose title and description do (``search``), in the list's order."""
    from tasktool.planning.search import search_tasks

    words = text.lower().split()

    def row_text(task: Task) -> str:
        return " ".join(v for v in (task.id, task.title, task.owner, *task.tags) if v).lower()

    found = {id(hit.task) for hit in search_tasks(tasks, text, bodies)}
    return [
        task for task in tasks if id(task) in found or all(word in row_text(task) for word in words)
    ]


def table_rows(
    repo: Repository, query: TableQuery, known: dict[str, list[str]], remember: Remember
) -> tuple[list[dict[str, Any]], TablePage | None]:
    """The rows to render, and the page they are (``None``: every task, unfiltered); the
    query's whole list and the drop-downs' values are remembered for the next page."""
    tasks = repo.tasks
    window = query.window
    if window.offset == 0 and (window.limit is None or len(tasks) <= window.limit):
        return task_views(tasks), None

    def matching() -> list[Task]:
        kept = list(tasks)
        for name, value in query.chosen:
            kept = [task for task in kept if value in values_of(task, name)]
        if query.text:
            kept = _searched(kept, query.text, repo.bodies)
        return sort_tasks(kept, query.sort, repo.config) if query.sort else kept

    kept = remember(("table", query.chosen, query.text, query.sort), matching)
    choices = remember(("choices",), lambda: _choices(tasks, known))
    page = TablePage(query, len(kept), len(tasks), choices)
    return task_views(window.cut(kept)), page
