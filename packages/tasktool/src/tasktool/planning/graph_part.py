"""The part of a large dependency graph a reader wants first: the actionable subgraph.

At 100,000 tasks the whole graph is itself the cost (a drawing nobody reads), so
``graph`` on the command line and the dashboard's graph page open on the same part:
the tasks that can start now, highest priority first (then by id), with what each
unblocks (``depth`` dependency steps downstream), walked breadth first and cut at
``limit`` tasks. Only the ``allowed`` tasks (the selection after a status filter)
are walked; statuses, actionable and blocked stay those of the whole graph.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from tasktool.model.config import Config
from tasktool.model.task import natural_key
from tasktool.model.vocabulary import field_values
from tasktool.planning.graph import TaskGraph

__all__ = ["actionable_part", "actionable_starts", "walk_breadth_first"]


def walk_breadth_first(
    starts: Sequence[str],
    steps: Sequence[Callable[[str], Sequence[str]]],
    allowed: Collection[str],
    depth: int,
    limit: int,
) -> list[str]:
    """Breadth first from ``starts`` along ``steps`` (a task's neighbours), ``depth`` steps,
    ``limit`` tasks at most, in the order reached."""
    reached = dict.fromkeys(starts[:limit])
    layer = list(reached)
    for _ in range(depth):
        following = []
        for node in layer:
            for step in steps:
                for other in step(node):
                    if len(reached) >= limit:
                        return list(reached)
                    if other in allowed and other not in reached:
                        reached[other] = None
                        following.append(other)
        layer = following
        if not layer:
            break
    return list(reached)


def actionable_starts(graph: TaskGraph, config: Config, allowed: Collection[str]) -> list[str]:
    """The actionable tasks among ``allowed``, highest priority first, then by id."""
    order = {value: rank for rank, value in enumerate(field_values("priority", config) or ())}
    starts = sorted(
        (task for task in graph.actionable() if task.id in allowed),
        key=lambda task: (-order.get(task.priority or "", -1), natural_key(task.id)),
    )
    return [task.id for task in starts]


def actionable_part(
    graph: TaskGraph,
    config: Config,
    allowed: Collection[str],
    *,
    depth: int,
    limit: int,
    starts: Sequence[str] | None = None,
) -> list[str]:
    """The ids of the actionable subgraph (see the module), in the order reached;
    ``starts`` when the caller kept :func:`actionable_starts` from an earlier call."""
    dependents = graph.dependents

    def downstream(node: str) -> Sequence[str]:
        return dependents.get(node, ())

    first = actionable_starts(graph, config, allowed) if starts is None else starts
    return walk_breadth_first(first, [downstream], allowed, depth, limit)
