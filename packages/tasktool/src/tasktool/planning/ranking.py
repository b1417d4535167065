"""``next``: rank actionable tasks by score, inside the phase tiers of the config.

Score (all integers, every point itemised in ``reasons``):

- priority: critical 40, high 30, medium 20, low or unset 10;
- on the critical path of unresolved work (a longest dependency chain of two
  tasks or more): ``15 x m``;
- unblocks N unresolved tasks: ``min(3N, 15) x m``;
- effort: the lowest vocabulary value 5, the highest 0, linear in between;
- with ``strict_phases=False``: phase bonus 25 for the first phase, 5 less per
  later phase.

``m`` is 1, 0.5 or 0.25 for the highest priority among the dependents
(critical/high, medium, low/unset); products round half up.

With phases configured and strict phases (the default) the seed's tier rules
come before score: no task of a later phase outranks an actionable task of an
earlier one; an unphased task joins the earliest phase that still has
actionable tasks (``next.unphased: current``) or goes after every configured
phase (``last``); a phase not in the list ranks last. Ties: natural id order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from tasktool.model.settings import Settings
from tasktool.model.task import PRIORITY_ORDER, Priority, Task
from tasktool.model.views import task_summary
from tasktool.planning.graph import TaskGraph, build_graph, longest_chains
from tasktool.planning.overlay import claimed_elsewhere

__all__ = ["DEFAULT_LIMIT", "Ranked", "Reason", "rank_next", "score_candidates"]

DEFAULT_LIMIT = 5

_PRIORITY_POINTS = {"critical": 40, "high": 30, "medium": 20, "low": 10}
# The multiplier m, in quarters, by the highest priority among the dependents.
_QUARTERS = {"critical": 4, "high": 4, "medium": 2, "low": 1}
_CRITICAL_PATH_POINTS = 15
_UNBLOCK_POINTS_EACH, _UNBLOCK_POINTS_MAX = 3, 15
_EFFORT_POINTS = 5
_PHASE_BONUS_FIRST, _PHASE_BONUS_STEP = 25, 5


class Reason(msgspec.Struct, frozen=True):
    """One line of a score: which ``factor``, how many ``points``, and why."""

    factor: str
    points: int
    detail: str


_NEXT_KEYS = ("id", "title", "status", "priority", "effort", "phase")


class Ranked(msgspec.Struct, frozen=True, kw_only=True):
    """One result of ``next``."""

    rank: int
    task: Task
    score: int
    reasons: tuple[Reason, ...]

    def to_json(self) -> dict[str, Any]:
        """The documented JSON item of ``next``."""
        return {
            "rank": self.rank,
            **task_summary(self.task, _NEXT_KEYS),
            "score": self.score,
            "reasons": [msgspec.structs.asdict(reason) for reason in self.reasons],
            "file_path": self.task.file_path,
        }


def _times_quarters(points: int, quarters: int) -> int:
    """``points x quarters / 4`` rounded half up, in integers."""
    return (points * quarters * 2 + 4) // 8


def _priority_name(task: Task) -> str:
    return task.priority if task.priority in _PRIORITY_POINTS else Priority.LOW.value


def _effort_reason(task: Task, effort: Sequence[str]) -> Reason | None:
    if task.effort is None or task.effort not in effort:
        return None
    position, top = effort.index(task.effort), len(effort) - 1
    points = (
        _EFFORT_POINTS if top == 0 else (2 * _EFFORT_POINTS * (top - position) + top) // (2 * top)
    )
    if not points:
        return None
    label = "quick win" if position == 0 else f"{position + 1} of {len(effort)}"
    return Reason("effort", points, f"effort {task.effort} ({label})")


class _Scorer:
    """Score components that need the whole graph, computed once per run."""

    def __init__(self, graph: TaskGraph, settings: Settings, strict_phases: bool) -> None:
        self.graph = graph
        self.settings = settings
        self.strict_phases = strict_phases
        self.chains = longest_chains(graph, lambda task: not task.resolved)
        self.phase_index = {phase.id: index for index, phase in enumerate(settings.phases)}

    def _unresolved_dependents(self, task: Task) -> list[Task]:
        by_id = self.graph.by_id
        return [
            by_id[dependent]
            for dependent in self.graph.dependents.get(task.id, ())
            if not by_id[dependent].resolved
        ]

    def reasons(self, task: Task) -> list[Reason]:
        priority = _priority_name(task)
        shown = task.priority if task.priority == priority else f"{priority} (unset)"
        reasons = [Reason("priority", _PRIORITY_POINTS[priority], f"priority {shown}")]
        dependents = self._unresolved_dependents(task)
        if dependents:
            top = max((_priority_name(dep) for dep in dependents), key=PRIORITY_ORDER.__getitem__)
            quarters = _QUARTERS[top]
            weight = f"highest dependent priority {top}, x{quarters / 4:g}"
            if self.chains.on_longest(task.id):
                points = _times_quarters(_CRITICAL_PATH_POINTS, quarters)
                detail = f"on the critical path ({self.chains.length} tasks; {weight})"
                reasons.append(Reason("critical_path", points, detail))
            count = len(dependents)
            points = _times_quarters(
                min(_UNBLOCK_POINTS_EACH * count, _UNBLOCK_POINTS_MAX), quarters
            )
            noun = "task" if count == 1 else "tasks"
            reasons.append(Reason("unblocks", points, f"unblocks {count} {noun} ({weight})"))
        effort = _effort_reason(task, self.settings.effort)
        if effort is not None:
            reasons.append(effort)
        if not self.strict_phases and task.phase in self.phase_index:
            position = self.phase_index[task.phase]
            bonus = max(0, _PHASE_BONUS_FIRST - _PHASE_BONUS_STEP * position)
            if bonus:
                detail = f"phase {task.phase} ({position + 1} of {len(self.phase_index)})"
                reasons.append(Reason("phase", bonus, detail))
        return reasons


def _tier(task: Task, phase_index: dict[str, int], earliest: int, unphased_last: bool) -> int:
    count = len(phase_index)
    if not task.phase:
        return count if unphased_last else earliest
    return phase_index.get(task.phase, count + 1)


def _tier_reason(task: Task, tier: int, settings: Settings) -> Reason:
    phases = settings.phases
    if not task.phase:
        if tier < len(phases):
            return Reason("phase", 0, f"unphased: competes in phase {phases[tier].id}")
        return Reason("phase", 0, "unphased: ranks after the configured phases")
    if tier < len(phases):
        return Reason("phase", 0, f"phase {task.phase} ({tier + 1} of {len(phases)})")
    return Reason("phase", 0, f"phase {task.phase} is not configured: ranks last")


def score_candidates(
    tasks: Sequence[Task] | TaskGraph,
    settings: Settings,
    *,
    strict_phases: bool = True,
    quick_wins: bool = False,
    predicate: Callable[[Task], bool] | None = None,
) -> list[Ranked]:
    """Every candidate of ``next`` in rank order (no limit)."""
    graph = tasks if isinstance(tasks, TaskGraph) else build_graph(tasks)
    # Tasks a sibling worktree has claimed (or holds alone) are not to be started here.
    actionable = [task for task in graph.actionable() if not claimed_elsewhere(task)]
    scorer = _Scorer(graph, settings, strict_phases)
    tiered = strict_phases and bool(settings.phases)
    phase_index = scorer.phase_index
    # The earliest phase that still has actionable tasks, judged before any filter.
    earliest = min(
        (phase_index[task.phase] for task in actionable if task.phase in phase_index),
        default=len(phase_index),
    )
    unphased_last = settings.next_unphased == "last"
    lowest_effort = settings.effort[0] if settings.effort else None
    rows: list[tuple[int, int, Task, list[Reason]]] = []
    for task in actionable:
        if quick_wins and (lowest_effort is None or task.effort != lowest_effort):
            continue
        if predicate is not None and not predicate(task):
            continue
        reasons = scorer.reasons(task)
        tier = 0
        if tiered:
            tier = _tier(task, phase_index, earliest, unphased_last)
            reasons.append(_tier_reason(task, tier, settings))
        rows.append((tier, sum(reason.points for reason in reasons), task, reasons))
    # ``actionable`` comes in natural id order and the sort is stable: ties stay in that order.
    rows.sort(key=lambda row: (row[0], -row[1]))
    return [
        Ranked(rank=rank, task=task, score=score, reasons=tuple(reasons))
        for rank, (_, score, task, reasons) in enumerate(rows, start=1)
    ]


def rank_next(
    tasks: Sequence[Task] | TaskGraph,
    settings: Settings,
    *,
    strict_phases: bool = True,
    quick_wins: bool = False,
    limit: int = DEFAULT_LIMIT,
    predicate: Callable[[Task], bool] | None = None,
) -> list[Ranked]:
    """What to work on next: the top ``limit`` candidates (``0`` = all).

    The one function behind ``next`` in every front end, so they agree exactly.
    """
    ranked = score_candidates(
        tasks,
        settings,
        strict_phases=strict_phases,
        quick_wins=quick_wins,
        predicate=predicate,
    )
    return ranked if limit <= 0 else ranked[:limit]
