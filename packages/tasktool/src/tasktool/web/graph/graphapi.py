"""``GET /api/graph`` in pages: the selection's tasks in id order, with the edges into them.

A selection that fits one page (:data:`GRAPH_PAGE` tasks unless ``limit`` says)
is ``graph --format json`` as it always was. A larger one is cut like a list
(:mod:`tasktool.web.paged.paging`): a page holds its tasks and every edge into them
(from any task of the selection), so each edge is on exactly one page, the one
of the task that waits on it; its ``cycles`` are those among its own tasks
(``validate`` lists every cycle).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request

from tasktool.planning.repository import Repository
from tasktool.present.documents import graph_document
from tasktool.present.graph_render import select_graph, view_of
from tasktool.web.paged.paging import Window, query_window
from tasktool.web.snapshot import Remember

__all__ = ["GRAPH_PAGE", "GRAPH_PAGE_MOST", "graph_window", "paged_graph"]

GRAPH_PAGE = 1000
GRAPH_PAGE_MOST = 10_000


def graph_window(request: Request) -> Window:
    return query_window(request, default=GRAPH_PAGE, most=GRAPH_PAGE_MOST)


def _selected(repo: Repository, options: Mapping[str, Any]) -> list[str]:
    graph = repo.graph
    if options["root"] is None:
        excluded = set(options["exclude_status"])
        return [task.id for task in graph.unique if task.status not in excluded]
    # A task's neighbourhood, walked as ``graph --root`` walks it.
    return [task.id for task in select_graph(graph, **options).nodes]


def paged_graph(
    repo: Repository, options: Mapping[str, Any], window: Window, remember: Remember
) -> tuple[dict[str, Any], int]:
    """The page of the graph document ``options`` select, and how many tasks it selects
    (the selection is remembered for the next page)."""
    graph = repo.graph
    key = ("graph", *((name, str(value)) for name, value in sorted(options.items())))
    selected = remember(key, lambda: _selected(repo, options))
    if window.offset == 0 and (window.limit is None or len(selected) <= window.limit):
        return graph_document(repo, **options), len(selected)
    members = set(selected)
    page = {node: graph.by_id[node] for node in window.cut(selected)}
    document = view_of(graph, page).to_json()
    document["edges"] = [
        {"from": dep, "to": node}
        for node, task in page.items()
        for dep in dict.fromkeys(task.dependencies)
        if dep in members
    ]
    return document, len(selected)
