"""``stats``: counts and progress of the active tasks.

Counts by status, priority, effort and phase come in each field's natural
order (as on the board), ``(none)`` last. The completion rate is completed
tasks over tasks that are not cancelled (cancelled work is not work left to
do). ``blocked`` counts unresolved tasks with an unmet dependency; the longest
dependency chain runs over every active task (cycles left out).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import msgspec

from tasktool.model.config import Config
from tasktool.model.task import RESOLVED_STATUSES, Status, Task
from tasktool.planning.board import count_fields
from tasktool.planning.graph import ACTIONABLE_STATUSES, TaskGraph, build_graph, longest_chains

__all__ = ["COUNTED_FIELDS", "Stats", "compute_stats"]

COUNTED_FIELDS = ("status", "priority", "effort", "phase")
_DEPENDENCIES = attrgetter("dependencies")


class Stats(msgspec.Struct, frozen=True, kw_only=True):
    """The result of ``stats``; ``counts`` maps a field to ``[(value, count)]`` in order."""

    total: int
    archived: int
    counts: dict[str, tuple[tuple[str, int], ...]]
    completion_rate: float
    actionable: int
    blocked: int
    longest_chain: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"total", "archived", "by_status", ..., "longest_chain": {"length", "ids"}}``."""
        payload: dict[str, Any] = {"total": self.total, "archived": self.archived}
        for field, pairs in self.counts.items():
            payload[f"by_{field}"] = dict(pairs)
        payload["completion_rate"] = self.completion_rate
        payload["actionable"] = self.actionable
        payload["blocked"] = self.blocked
        payload["longest_chain"] = {
            "length": len(self.longest_chain),
            "ids": list(self.longest_chain),
        }
        return payload


def compute_stats(tasks: Sequence[Task] | TaskGraph, config: Config) -> Stats:
    """Counts, completion rate, blocked count and longest chain, in linear time.

    Pass the repository's graph when there is one (built once per run).
    """
    graph = tasks if isinstance(tasks, TaskGraph) else build_graph(tasks)
    active = graph.tasks
    counts = count_fields(active, config, COUNTED_FIELDS)
    by_status = dict(counts["status"])
    completed = by_status.get(Status.COMPLETED.value, 0)
    countable = len(active) - by_status.get(Status.CANCELLED.value, 0)
    blocked, actionable = _blocked_and_actionable(graph, by_status)
    return Stats(
        total=len(active),
        archived=graph.archived_count,
        counts=counts,
        completion_rate=round(completed / countable, 4) if countable else 0.0,
        actionable=actionable,
        blocked=blocked,
        longest_chain=tuple(longest_chains(graph).longest),
    )


def _blocked_and_actionable(graph: TaskGraph, by_status: dict[str, int]) -> tuple[int, int]:
    """How many unresolved active tasks are blocked, and how many actionable.

    Counted without a pass over every task: only a task with dependencies can be
    blocked, and the actionable ones are the pending or in-progress tasks (counted
    already) less those blocked or with an unresolved child.
    """
    blocked = blocked_startable = 0
    for task in filter(_DEPENDENCIES, graph.tasks):
        if task.status not in RESOLVED_STATUSES and graph.is_blocked(task):
            blocked += 1
            blocked_startable += task.status in ACTIONABLE_STATUSES
    actionable = sum(by_status.get(status, 0) for status in ACTIONABLE_STATUSES)
    actionable -= blocked_startable
    if graph.children:  # less those that are not blocked but wait on a child
        actionable -= sum(
            1
            for task in graph.tasks
            if task.id in graph.children
            and task.status in ACTIONABLE_STATUSES
            and not graph.is_blocked(task)
            and graph.unresolved_children(task)
        )
    return blocked, actionable
