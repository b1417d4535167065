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

import heapq
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import msgspec

from tasktool.model.config import Config
from tasktool.model.task import PRIORITY_ORDER, RESOLVED_STATUSES, Priority, Task
from tasktool.model.views import task_summary
from tasktool.planning.graph import TaskGraph, build_graph, longest_chains
from tasktool.planning.worktrees.overlay import claimed_elsewhere

__all__ = ["DEFAULT_LIMIT", "Placed", "Ranked", "Reason", "rank_next", "score_candidates"]

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


class Placed(msgspec.Struct, frozen=True, array_like=True):
    """A :class:`Ranked` without its task: the task's place ``at`` in the tasks ranked and
    its ``id`` (what a memo of the ranking keeps, the tasks being kept elsewhere)."""

    at: int
    id: str
    score: int
    reasons: tuple[Reason, ...]

    @classmethod
    def of(cls, ranked: Sequence[Ranked], tasks: Sequence[Task]) -> list[Placed]:
        """``ranked`` (a ranking of ``tasks``), each by its task's place in ``tasks``."""
        place = {id(task): at for at, task in enumerate(tasks)} if ranked else {}
        return [cls(place[id(i.task)], i.task.id, i.score, i.reasons) for i in ranked]

    def fits(self, tasks: Sequence[Task]) -> bool:
        """Whether ``tasks`` has a task with this id at this place."""
        return 0 <= self.at < len(tasks) and tasks[self.at].id == self.id

    def ranked(self, rank: int, tasks: Sequence[Task]) -> Ranked:
        """The :class:`Ranked` of rank ``rank`` this stands for among ``tasks``."""
        return Ranked(rank=rank, task=tasks[self.at], score=self.score, reasons=self.reasons)


def _times_quarters(points: int, quarters: int) -> int:
    """``points x quarters / 4`` rounded half up, in integers."""
    return (points * quarters * 2 + 4) // 8


def _priority_name(task: Task) -> str:
    return task.priority if task.priority in _PRIORITY_POINTS else Priority.LOW.value


_PRIORITY_NAMES = tuple(PRIORITY_ORDER)  # by rank, lowest first
_LOW_POINTS = _PRIORITY_POINTS[Priority.LOW.value]  # also for an unset or unknown priority
_LOW_RANK = PRIORITY_ORDER[Priority.LOW.value]


def _effort_table(effort: Sequence[str]) -> dict[str | None, tuple[int, int]]:
    """``value -> (points, position in the vocabulary)``; a value outside it (or none)
    has no entry: no points."""
    top = len(effort) - 1
    table: dict[str | None, tuple[int, int]] = {}
    for position, value in enumerate(effort):
        points = (
            (2 * _EFFORT_POINTS * (top - position) + top) // (2 * top) if top else _EFFORT_POINTS
        )
        table.setdefault(value, (points, position))  # a repeated value: its first place
    return table


class _Dependents(NamedTuple):
    """The unresolved dependents of a candidate, and the points they give it."""

    unresolved: int  # how many
    priority: str  # the highest among them
    quarters: int  # the multiplier m, in quarters
    critical_points: int
    unblock_points: int
    critical: bool  # on a longest chain of unresolved work


class _Scorer:
    """Score components that need the whole graph, computed once per run.

    :meth:`score` is the number every candidate is ranked by; :meth:`reasons`
    itemises it (only for the tasks shown). Both add up the same parts below, and
    a test checks that the reasons always sum to the score.
    """

    def __init__(self, graph: TaskGraph, config: Config, strict_phases: bool) -> None:
        self.graph = graph
        self.config = config
        self.strict_phases = strict_phases
        self.chains = longest_chains(graph, leave_out=RESOLVED_STATUSES)
        self.phase_index = {phase.id: index for index, phase in enumerate(config.phases)}
        self.effort = _effort_table(config.effort)
        # The points that depend on one field only, by its value (looked up per candidate).
        self.effort_points = {value: points for value, (points, _) in self.effort.items()}
        self.phase_points: dict[str | None, int] = {
            phase: self._phase_bonus(phase)[0] for phase in self.phase_index
        }

    def _dependents(self, task: Task) -> _Dependents | None:
        """What the unresolved tasks that depend on ``task`` add to its score."""
        dependents = self.graph.dependents.get(task.id)
        if not dependents:
            return None
        by_id = self.graph.by_id
        count, top = 0, _LOW_RANK
        for dependent_id in dependents:
            dependent = by_id[dependent_id]
            if dependent.status in RESOLVED_STATUSES:
                continue
            count += 1
            rank = PRIORITY_ORDER.get(dependent.priority or "", _LOW_RANK)
            top = max(top, rank)
        if not count:
            return None
        priority = _PRIORITY_NAMES[top]
        quarters = _QUARTERS[priority]
        critical = self.chains.on_longest(task.id)
        return _Dependents(
            unresolved=count,
            priority=priority,
            quarters=quarters,
            critical_points=_times_quarters(_CRITICAL_PATH_POINTS, quarters) if critical else 0,
            unblock_points=_times_quarters(
                min(_UNBLOCK_POINTS_EACH * count, _UNBLOCK_POINTS_MAX), quarters
            ),
            critical=critical,
        )

    def _phase_bonus(self, phase: str | None) -> tuple[int, int]:
        """``(points, phase position)`` of the phase bonus (without strict phases)."""
        if self.strict_phases or phase not in self.phase_index:
            return 0, -1
        position = self.phase_index[phase]
        return max(0, _PHASE_BONUS_FIRST - _PHASE_BONUS_STEP * position), position

    def score(self, task: Task) -> int:
        """The sum of :meth:`reasons`' points, without building them (table lookups:
        it runs for every candidate, a third of the tasks in a large repository)."""
        points = (
            _PRIORITY_POINTS.get(task.priority or "", _LOW_POINTS)
            + self.effort_points.get(task.effort, 0)
            + self.phase_points.get(task.phase, 0)
        )
        if task.id in self.graph.dependents:
            dependents = self._dependents(task)
            if dependents is not None:
                points += dependents.critical_points + dependents.unblock_points
        return points

    def reasons(self, task: Task) -> list[Reason]:
        priority = _priority_name(task)
        shown = task.priority if task.priority == priority else f"{priority} (unset)"
        reasons = [Reason("priority", _PRIORITY_POINTS[priority], f"priority {shown}")]
        dependents = self._dependents(task)
        if dependents is not None:
            weight = (
                f"highest dependent priority {dependents.priority}, x{dependents.quarters / 4:g}"
            )
            if dependents.critical:
                detail = f"on the critical path ({self.chains.length} tasks; {weight})"
                reasons.append(Reason("critical_path", dependents.critical_points, detail))
            count = dependents.unresolved
            noun = "task" if count == 1 else "tasks"
            detail = f"unblocks {count} {noun} ({weight})"
            reasons.append(Reason("unblocks", dependents.unblock_points, detail))
        points, position = self.effort.get(task.effort, (0, -1))
        if points:
            label = "quick win" if position == 0 else f"{position + 1} of {len(self.config.effort)}"
            reasons.append(Reason("effort", points, f"effort {task.effort} ({label})"))
        bonus, position = self._phase_bonus(task.phase)
        if bonus:
            detail = f"phase {task.phase} ({position + 1} of {len(self.phase_index)})"
            reasons.append(Reason("phase", bonus, detail))
        return reasons


def _tier(task: Task, phase_index: dict[str, int], earliest: int, unphased_last: bool) -> int:
    count = len(phase_index)
    if not task.phase:
        return count if unphased_last else earliest
    return phase_index.get(task.phase, count + 1)


def _tier_reason(task: Task, tier: int, config: Config) -> Reason:
    phases = config.phases
    if not task.phase:
        if tier < len(phases):
            return Reason("phase", 0, f"unphased: competes in phase {phases[tier].id}")
        return Reason("phase", 0, "unphased: ranks after the configured phases")
    if tier < len(phases):
        return Reason("phase", 0, f"phase {task.phase} ({tier + 1} of {len(phases)})")
    return Reason("phase", 0, f"phase {task.phase} is not configured: ranks last")


def score_candidates(
    tasks: Sequence[Task] | TaskGraph,
    config: Config,
    *,
    strict_phases: bool = True,
    quick_wins: bool = False,
    predicate: Callable[[Task], bool] | None = None,
    limit: int = 0,
) -> list[Ranked]:
    """The candidates of ``next`` in rank order, the first ``limit`` (``0`` = all).

    Every candidate is scored; only those returned get their reasons written out.
    """
    graph = tasks if isinstance(tasks, TaskGraph) else build_graph(tasks)
    # Tasks a sibling worktree has claimed (or holds alone) are not to be started here.
    actionable = [
        task
        for task in graph.actionable()
        # A task of this worktree alone (no sibling copy) is never claimed elsewhere.
        if task.worktree is None or not claimed_elsewhere(task)
    ]
    scorer = _Scorer(graph, config, strict_phases)
    tiered = strict_phases and bool(config.phases)
    phase_index = scorer.phase_index
    # The earliest phase that still has actionable tasks, judged before any filter.
    earliest = min(
        (phase_index[task.phase] for task in actionable if task.phase in phase_index),
        default=len(phase_index),
    )
    unphased_last = config.next_unphased == "last"
    lowest_effort = config.effort[0] if config.effort else None
    # (tier, -score, position, task): ``actionable`` comes in natural id order, so the
    # position breaks ties in that order, and tuples sort without a key function.
    rows: list[tuple[int, int, int, Task]] = []
    for position, task in enumerate(actionable):
        if quick_wins and (lowest_effort is None or task.effort != lowest_effort):
            continue
        if predicate is not None and not predicate(task):
            continue
        tier = _tier(task, phase_index, earliest, unphased_last) if tiered else 0
        rows.append((tier, -scorer.score(task), position, task))
    shown = heapq.nsmallest(limit, rows) if limit > 0 else sorted(rows)
    ranked = []
    for rank, (tier, negated, _, task) in enumerate(shown, start=1):
        reasons = scorer.reasons(task)
        if tiered:
            reasons.append(_tier_reason(task, tier, config))
        ranked.append(Ranked(rank=rank, task=task, score=-negated, reasons=tuple(reasons)))
    return ranked


def rank_next(
    tasks: Sequence[Task] | TaskGraph,
    config: Config,
    *,
    strict_phases: bool = True,
    quick_wins: bool = False,
    limit: int = DEFAULT_LIMIT,
    predicate: Callable[[Task], bool] | None = None,
) -> list[Ranked]:
    """What to work on next: the top ``limit`` candidates (``0`` = all).

    The one function behind ``next`` in every front end, so they agree exactly.
    """
    return score_candidates(
        tasks,
        config,
        strict_phases=strict_phases,
        quick_wins=quick_wins,
        predicate=predicate,
        limit=limit,
    )
