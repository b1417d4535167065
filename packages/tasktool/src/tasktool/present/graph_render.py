"""``graph``: the dependency graph, or part of it, as ascii, mermaid, dot or json.

Selection: every active task, or with ``root`` the root plus its transitive
dependencies (``upstream``) and/or dependents (``downstream``; both when
neither is asked for). ``exclude_status`` drops tasks by status before
walking. Edges point from a dependency to its dependent. Cycles among the
selected tasks are always reported.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal, get_args

import msgspec

from tasktool.model.errors import TaskToolError, task_not_found
from tasktool.model.task import Task, natural_key
from tasktool.planning.graph import TaskGraph, build_graph, find_cycles

__all__ = [
    "GRAPH_FORMATS",
    "GraphFormat",
    "GraphView",
    "check_root",
    "render_graph",
    "select_graph",
    "view_of",
]

GraphFormat = Literal["ascii", "mermaid", "dot", "json"]
GRAPH_FORMATS: tuple[str, ...] = get_args(GraphFormat)


class GraphView(msgspec.Struct, frozen=True, kw_only=True):
    """The selected tasks (natural id order), their edges and their cycles."""

    nodes: tuple[Task, ...]
    edges: tuple[tuple[str, str], ...]
    cycles: tuple[tuple[str, ...], ...]
    actionable: frozenset[str]
    blocked: frozenset[str]

    def to_json(self) -> dict[str, Any]:
        """``{"nodes": [...], "edges": [{"from", "to"}], "cycles": [[...]]}``."""
        return {
            "nodes": [
                {
                    "id": task.id,
                    "title": task.title,
                    "status": task.status,
                    "priority": task.priority,
                    "phase": task.phase,
                    "actionable": task.id in self.actionable,
                    "blocked": task.id in self.blocked,
                }
                for task in self.nodes
            ],
            "edges": [{"from": source, "to": target} for source, target in self.edges],
            "cycles": [list(cycle) for cycle in self.cycles],
        }


def _walk(start: str, neighbours: dict[str, list[str]], allowed: Collection[str]) -> set[str]:
    seen = {start}
    stack = [start]
    while stack:
        for other in neighbours.get(stack.pop(), ()):
            if other in allowed and other not in seen:
                seen.add(other)
                stack.append(other)
    return seen


def check_root(graph: TaskGraph, root: str, kept: Collection[str]) -> None:
    """``task.not_found`` for a root no task has, ``graph.root_excluded`` for one whose
    status the view leaves out (not among the ``kept`` ids)."""
    if root not in graph.by_id:
        raise task_not_found(root)
    if root not in kept:
        raise TaskToolError(
            f"task {root} has an excluded status ({graph.by_id[root].status})",
            code="graph.root_excluded",
        )


def select_graph(
    tasks: Sequence[Task] | TaskGraph,
    *,
    root: str | None = None,
    upstream: bool = False,
    downstream: bool = False,
    exclude_status: Collection[str] = (),
) -> GraphView:
    """Pick the tasks and edges to draw; an unknown ``root`` is a ``task.not_found`` error."""
    graph = tasks if isinstance(tasks, TaskGraph) else build_graph(tasks)
    kept = {
        task.id: task
        for task in graph.tasks
        if graph.by_id[task.id] is task and task.status not in exclude_status
    }
    deps = graph.dependency_edges()
    if root is not None:
        check_root(graph, root, kept)
        both = not upstream and not downstream
        chosen = {root}
        if upstream or both:
            chosen |= _walk(root, deps, kept)
        if downstream or both:
            chosen |= _walk(root, graph.dependents, kept)
        kept = {task_id: kept[task_id] for task_id in kept if task_id in chosen}
    return view_of(graph, kept)


def view_of(graph: TaskGraph, kept: Mapping[str, Task]) -> GraphView:
    """The view of the ``kept`` tasks (id to task, in the order drawn): the edges between
    them, their cycles, and which are actionable or blocked in the whole ``graph``."""
    edges = tuple(
        (dep, task_id)
        for task_id, task in kept.items()
        for dep in dict.fromkeys(task.dependencies)
        if dep in kept
    )
    successors: dict[str, list[str]] = {task_id: [] for task_id in kept}
    for source, target in edges:
        successors[source].append(target)
    return GraphView(
        nodes=tuple(kept.values()),
        edges=edges,
        cycles=tuple(tuple(cycle) for cycle in find_cycles(successors)),
        actionable=frozenset(t for t, task in kept.items() if graph.is_actionable(task)),
        blocked=frozenset(t for t, task in kept.items() if graph.is_blocked(task)),
    )


def _label(task: Task) -> str:
    return f"{task.id}: {task.title} [{task.status}]"


def _ascii(view: GraphView) -> str:
    """Trees from the tasks nothing selected depends on; repeats say ``(see above)``."""
    successors: dict[str, list[str]] = {task.id: [] for task in view.nodes}
    has_dependency: set[str] = set()
    for source, target in view.edges:
        successors[source].append(target)
        has_dependency.add(target)
    by_id = {task.id: task for task in view.nodes}
    lines: list[str] = []
    shown: set[str] = set()

    def draw(start: str) -> None:
        stack: list[tuple[str, str, str]] = [(start, "", "")]
        while stack:
            node, lead, child_lead = stack.pop()
            if node in shown:
                lines.append(f"{lead}{node} (see above)")
                continue
            shown.add(node)
            lines.append(f"{lead}{_label(by_id[node])}")
            children = sorted(successors[node], key=natural_key)
            for position, child in reversed(list(enumerate(children))):
                last = position == len(children) - 1
                branch = "└── " if last else "├── "
                stack.append(
                    (child, child_lead + branch, child_lead + ("    " if last else "│   "))
                )

    for task in view.nodes:
        if task.id not in has_dependency:
            draw(task.id)
    for task in view.nodes:  # Only cycles keep a task out of every tree.
        if task.id not in shown:
            draw(task.id)
    lines.extend(f"cycle: {' -> '.join(cycle)}" for cycle in view.cycles)
    return "\n".join(lines)


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _mermaid(view: GraphView) -> str:
    names = {task.id: f"t{index}" for index, task in enumerate(view.nodes)}
    lines = ["graph TD"]
    for task in view.nodes:
        label = _label(task).replace('"', "#quot;")
        lines.append(f'    {names[task.id]}["{label}"]')
    lines.extend(f"    {names[source]} --> {names[target]}" for source, target in view.edges)
    lines.extend(f"    %% cycle: {' -> '.join(cycle)}" for cycle in view.cycles)
    return "\n".join(lines)


def _dot(view: GraphView) -> str:
    lines = ["digraph tasks {", "    rankdir=LR;"]
    for task in view.nodes:
        style = ', style="bold"' if task.id in view.actionable else ""
        lines.append(f"    {_quoted(task.id)} [label={_quoted(_label(task))}{style}];")
    lines.extend(f"    {_quoted(source)} -> {_quoted(target)};" for source, target in view.edges)
    lines.extend(f"    // cycle: {' -> '.join(cycle)}" for cycle in view.cycles)
    lines.append("}")
    return "\n".join(lines)


def render_graph(view: GraphView, graph_format: str) -> str:
    """The view as text in one of :data:`GRAPH_FORMATS`."""
    if graph_format == "json":
        return json.dumps(view.to_json(), indent=2, ensure_ascii=False)
    renderers = {"ascii": _ascii, "mermaid": _mermaid, "dot": _dot}
    if graph_format not in renderers:
        raise TaskToolError(f"unknown graph format {graph_format!r}", code="graph.format")
    return renderers[graph_format](view)
