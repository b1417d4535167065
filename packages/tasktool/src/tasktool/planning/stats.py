"""``stats``: counts and progress of the active tasks.

Counts by status, priority, effort and phase come in each field's natural
order (as on the board), ``(none)`` last. The completion rate is completed
tasks over tasks that are not cancelled (cancelled work is not work left to
do). ``blocked`` counts unresolved tasks with an unmet dependency; the longest
dependency chain runs over every active task (cycles left out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from tasktool.model.settings import Settings
from tasktool.model.task import Status, Task
from tasktool.planning.board import count_columns
from tasktool.planning.graph import TaskGraph, build_graph, longest_chains

__all__ = ["COUNTED_FIELDS", "Stats", "compute_stats"]

COUNTED_FIELDS = ("status", "priority", "effort", "phase")


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


def compute_stats(tasks: Sequence[Task] | TaskGraph, settings: Settings) -> Stats:
    """Counts, completion rate, blocked count and longest chain, in linear time.

    Pass the repository's graph when there is one (built once per run).
    """
    graph = tasks if isinstance(tasks, TaskGraph) else build_graph(tasks)
    active = graph.tasks
    counts = {field: count_columns(active, settings, field) for field in COUNTED_FIELDS}
    by_status = dict(counts["status"])
    completed = by_status.get(Status.COMPLETED.value, 0)
    countable = len(active) - by_status.get(Status.CANCELLED.value, 0)
    unresolved = [task for task in active if not task.resolved]
    return Stats(
        total=len(active),
        archived=graph.archived_count,
        counts=counts,
        completion_rate=round(completed / countable, 4) if countable else 0.0,
        actionable=sum(graph.is_actionable(task) for task in unresolved),
        blocked=sum(graph.is_blocked(task) for task in unresolved),
        longest_chain=tuple(longest_chains(graph, lambda task: True).longest),
    )
