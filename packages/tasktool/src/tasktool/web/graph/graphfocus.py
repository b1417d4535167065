"""Which part of a large dependency graph the graph page draws, and how to widen it.

A selection of up to ``limit`` tasks (:data:`GRAPH_NODES` unless asked) is
drawn whole, as ``/api/graph`` gives it. A larger one opens on a part:

- with ``root``, its neighbourhood: the tasks at most ``depth`` dependency
  steps from it (:data:`FOCUS_DEPTH`), upstream, downstream or both as asked;
- without, the actionable subgraph: the tasks that can start now, highest
  priority first, with what each unblocks (``depth`` steps downstream, 1 unless
  asked): :mod:`tasktool.planning.graph_part`'s rule, the one ``graph`` on the
  command line opens on.

Either way at most ``limit`` tasks, walked breadth first. The page says how
many of how many it shows and links to the next ``depth`` and a larger
``limit`` (up to :data:`GRAPH_MOST`). Statuses, actionable and blocked are
those of the whole graph, so a part reads as the whole would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from tasktool.model.errors import TaskToolError
from tasktool.model.task import natural_key
from tasktool.planning.graph import TaskGraph
from tasktool.planning.graph_part import actionable_part, actionable_starts, walk_breadth_first
from tasktool.planning.repository import Repository
from tasktool.present.documents import graph_document
from tasktool.present.graph_render import check_root, view_of
from tasktool.web.layout import Links, h
from tasktool.web.paged.paging import query_window
from tasktool.web.snapshot import Remember

__all__ = [
    "FOCUS_DEPTH",
    "GRAPH_MOST",
    "GRAPH_NODES",
    "Focus",
    "GraphPart",
    "focus",
    "graph_part",
    "part_notice",
]

GRAPH_NODES = 200
GRAPH_MOST = 2000
FOCUS_DEPTH = 2


@dataclass(frozen=True)
class Focus:
    """The page's own parameters: at most ``limit`` tasks, ``depth`` steps (``None``: the
    default of the view, or everything while the selection fits)."""

    limit: int = GRAPH_NODES
    depth: int | None = None
    #: The page's whole query string, kept by the links that widen the view.
    query: tuple[tuple[str, str], ...] = ()

    def widened(self, **changes: int) -> str:
        """The query string of this view with ``changes`` (``depth``, ``limit``)."""
        kept = [(key, value) for key, value in self.query if key not in changes]
        return urlencode([*kept, *((key, str(value)) for key, value in changes.items())])


@dataclass(frozen=True)
class GraphPart:
    """What was drawn of how much: ``shown`` of ``total`` tasks, the view and its depth."""

    total: int
    shown: int
    view: str  # "neighbourhood" or "actionable"
    depth: int
    focus: Focus


def focus(request: Request) -> Focus:
    window = query_window(request, default=GRAPH_NODES, most=GRAPH_MOST)
    text = request.query_params.get("depth", "").strip()
    if text and not text.isdigit():
        raise TaskToolError(
            "query parameter 'depth' must be a whole number >= 0", code="web.invalid_parameter"
        )
    return Focus(
        limit=window.limit or GRAPH_MOST,
        depth=int(text) if text else None,
        query=tuple(request.query_params.multi_items()),
    )


def _document(graph: TaskGraph, chosen: Iterable[str]) -> dict[str, Any]:
    """``/api/graph``'s document of the chosen tasks, flags as in the whole graph."""
    kept = {node: graph.by_id[node] for node in sorted(chosen, key=natural_key)}
    return view_of(graph, kept).to_json()


def graph_part(
    repo: Repository, options: Mapping[str, Any], wanted: Focus, remember: Remember
) -> tuple[dict[str, Any], GraphPart | None]:
    """The graph document to draw and, when it is a part, what part (``None``: whole)."""
    graph = repo.graph
    excluded = frozenset(options["exclude_status"])
    allowed = remember(
        ("graph-allowed", excluded),
        lambda: {task.id for task in graph.unique if task.status not in excluded},
    )
    root = options["root"]
    upstream, downstream = options["upstream"], options["downstream"]
    both = not upstream and not downstream

    def dependencies(node: str) -> Sequence[str]:
        return graph.by_id[node].dependencies

    def dependents(node: str) -> Sequence[str]:
        return graph.dependents.get(node, ())

    if root is None:
        if wanted.depth is None and len(allowed) <= wanted.limit:
            return graph_document(repo, **options), None
        depth = 1 if wanted.depth is None else wanted.depth
        starts = remember(
            ("graph-starts", excluded), lambda: actionable_starts(graph, repo.config, allowed)
        )
        chosen = actionable_part(
            graph, repo.config, allowed, depth=depth, limit=wanted.limit, starts=starts
        )
        part = GraphPart(len(allowed), len(chosen), "actionable", depth, wanted)
        return _document(graph, chosen), part
    check_root(graph, root, allowed)
    steps = [
        *([dependencies] if upstream or both else []),
        *([dependents] if downstream or both else []),
    ]
    everything = walk_breadth_first([root], steps, allowed, len(allowed), wanted.limit + 1)
    if wanted.depth is None and len(everything) <= wanted.limit:
        return graph_document(repo, **options), None
    depth = FOCUS_DEPTH if wanted.depth is None else wanted.depth
    chosen = walk_breadth_first([root], steps, allowed, depth, wanted.limit)
    return _document(graph, chosen), GraphPart(len(allowed), len(chosen), "neighbourhood",
                                               depth, wanted)  # fmt: skip


def part_notice(part: GraphPart | None, links: Links) -> str:
    """What part is drawn, the links that widen it and a form to focus on a task (live)."""
    if part is None or links.static:
        return ""
    wanted = part.focus
    what = (
        f"the tasks within {part.depth} steps of the root"
        if part.view == "neighbourhood"
        else f"the actionable tasks, highest priority first, and what they unblock "
        f"({part.depth} steps)"
    )
    base = links.page("graph")
    wider = [f'<a href="{h(base)}?{h(wanted.widened(depth=part.depth + 1))}" data-widen>'
             f"{part.depth + 1} steps</a>"]  # fmt: skip
    if part.shown >= wanted.limit and wanted.limit < GRAPH_MOST:
        more = min(GRAPH_MOST, wanted.limit * 2)
        wider.append(f'<a href="{h(base)}?{h(wanted.widened(limit=more))}">{more} tasks</a>')
    return f"""<div class="notice" data-graph-part>
<p>{part.total:,} tasks in the graph: showing {part.shown:,}, {what}.
Widen: {" · ".join(wider)}.</p>
<form class="filters" method="get">
<label>Task <input name="root" value="{h(dict(wanted.query).get("root", ""))}" required></label>
<label>Steps <input type="number" name="depth" min="0" value="{part.depth}"></label>
<button type="submit">Focus</button>
</form>
</div>"""
