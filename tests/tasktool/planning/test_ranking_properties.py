"""Property: ``next`` returns only actionable tasks, respects phase tiers, is deterministic."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tasktool.model.config import Config, Phase
from tasktool.model.task import Task
from tasktool.planning.ranking import rank_next

PHASES = (Phase(id="p1", name="One"), Phase(id="p2", name="Two"), Phase(id="p3", name="Three"))
STATUSES = ["pending", "in-progress", "completed", "cancelled", "blocked", "in-review"]


@st.composite
def task_graphs(draw: st.DrawFn) -> list[Task]:
    count = draw(st.integers(min_value=0, max_value=25))
    ids = [str(i) for i in range(count)]
    refs = st.sampled_from([*ids, "missing"]) if ids else st.just("missing")
    return [
        Task(
            id=task_id,
            title=task_id,
            status=draw(st.sampled_from(STATUSES)),
            priority=draw(st.sampled_from([None, "low", "medium", "high", "critical"])),
            effort=draw(st.sampled_from([None, "small", "medium", "large"])),
            phase=draw(st.sampled_from([None, "p1", "p2", "p3", "unknown"])),
            dependencies=tuple(draw(st.lists(refs, max_size=3))),
            parent=draw(st.one_of(st.none(), refs)),
            archived=draw(st.booleans().map(lambda b: b and draw(st.integers(0, 4)) == 0)),
        )
        for task_id in ids
    ]


def _actionable(task: Task, tasks: list[Task]) -> bool:
    """The design note's definition, written independently of the graph module."""
    if task.archived or task.status not in ("pending", "in-progress"):
        return False
    for dep in task.dependencies:
        found = [t for t in tasks if t.id == dep]
        active = [t for t in found if not t.archived]
        named = active[0] if active else (found[0] if found else None)
        if named is None or named.status != "completed":
            return False
    return not any(
        t.parent == task.id and not t.archived and t.status not in ("completed", "cancelled")
        for t in tasks
    )


@given(tasks=task_graphs(), unphased=st.sampled_from(["current", "last"]), seed=st.integers())
@settings(max_examples=150, deadline=None)
def test_next_properties(tasks: list[Task], unphased: str, seed: int) -> None:
    config = Config(phases=PHASES, next_unphased=unphased)  # type: ignore[arg-type]
    ranked = rank_next(tasks, config, limit=0)
    assert all(_actionable(item.task, tasks) for item in ranked)
    assert len(ranked) == sum(_actionable(task, tasks) for task in tasks)
    positions = {"p1": 0, "p2": 1, "p3": 2}
    phased = [positions[item.task.phase] for item in ranked if item.task.phase in positions]
    assert phased == sorted(phased), "a later-phase task outranks an earlier-phase one"
    unknown = [item.task.phase == "unknown" for item in ranked]
    assert unknown == sorted(unknown), "a task of an unconfigured phase does not rank last"
    if unphased == "last":
        tiers = [
            positions.get(item.task.phase or "", 3 if not item.task.phase else 4) for item in ranked
        ]
        assert tiers == sorted(tiers)
    shuffled = list(tasks)
    random.Random(seed).shuffle(shuffled)
    assert [item.to_json() for item in rank_next(shuffled, config, limit=0)] == [
        item.to_json() for item in ranked
    ]


@given(
    tasks=task_graphs(),
    strict=st.booleans(),
    limit=st.integers(min_value=1, max_value=6),
)
@settings(max_examples=150, deadline=None)
def test_scores_are_their_reasons_and_a_limit_is_a_prefix(
    tasks: list[Task], strict: bool, limit: int
) -> None:
    """Every candidate is ranked by a score computed without its reasons: they must agree,
    and writing reasons out for the first ``limit`` only must not change the ranking."""
    config = Config(phases=PHASES)
    every = rank_next(tasks, config, strict_phases=strict, limit=0)
    for item in every:
        assert item.score == sum(reason.points for reason in item.reasons)
    first = rank_next(tasks, config, strict_phases=strict, limit=limit)
    assert [item.to_json() for item in first] == [item.to_json() for item in every[:limit]]
