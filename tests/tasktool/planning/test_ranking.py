"""``next``: each score component, each phase rule, limits and ties."""

from __future__ import annotations

from typing import Any

import pytest

from tasktool.model.config import Config, Phase
from tasktool.planning.ranking import rank_next

from .conftest import TaskFactory

Spec = dict[str, Any]
PHASES = (Phase(id="alpha", name="Alpha"), Phase(id="beta", name="Beta"))


def _points(ranked: Any, factor: str) -> int:
    return sum(reason.points for reason in ranked.reasons if reason.factor == factor)


@pytest.mark.parametrize(
    ("subject", "others", "factor", "points"),
    [
        pytest.param({"priority": "critical"}, [], "priority", 40, id="critical"),
        pytest.param({"priority": "high"}, [], "priority", 30, id="high"),
        pytest.param({"priority": "medium"}, [], "priority", 20, id="medium"),
        pytest.param({"priority": "low"}, [], "priority", 10, id="low"),
        pytest.param({}, [], "priority", 10, id="unset-is-low"),
        pytest.param({"effort": "small"}, [], "effort", 5, id="effort-lowest"),
        pytest.param({"effort": "medium"}, [], "effort", 3, id="effort-middle"),
        pytest.param({"effort": "large"}, [], "effort", 0, id="effort-highest"),
        pytest.param({}, [], "effort", 0, id="effort-unset"),
        pytest.param(
            {},
            [{"id": "2", "dependencies": ["1"], "priority": "high"}],
            "unblocks",
            3,
            id="unblocks-one-high",
        ),
        pytest.param(
            {},
            [{"id": str(i), "dependencies": ["1"], "priority": "critical"} for i in range(2, 9)],
            "unblocks",
            15,
            id="unblocks-capped",
        ),
        pytest.param(
            {},
            [{"id": str(i), "dependencies": ["1"], "priority": "medium"} for i in range(2, 4)],
            "unblocks",
            3,
            id="unblocks-two-medium",
        ),
        pytest.param(
            {},
            [{"id": "2", "dependencies": ["1"]}],
            "unblocks",
            1,
            id="unblocks-one-low",
        ),
        pytest.param(
            {},
            [{"id": "2", "dependencies": ["1"], "status": "completed"}],
            "unblocks",
            0,
            id="resolved-dependents-do-not-count",
        ),
        pytest.param(
            {},
            [{"id": "2", "dependencies": ["1"], "priority": "high"}],
            "critical_path",
            15,
            id="critical-path-high",
        ),
        pytest.param(
            {},
            [{"id": "2", "dependencies": ["1"], "priority": "medium"}],
            "critical_path",
            8,
            id="critical-path-medium",
        ),
        pytest.param(
            {},
            [
                {"id": "2", "dependencies": ["1"], "priority": "low"},
                {"id": "3"},
                {"id": "4", "dependencies": ["3"]},
                {"id": "5", "dependencies": ["4"]},
            ],
            "critical_path",
            0,
            id="not-on-the-longest-chain",
        ),
    ],
)
def test_score_components(
    make: TaskFactory, subject: Spec, others: list[Spec], factor: str, points: int
) -> None:
    tasks = [make("1", **subject), *(make(**spec) for spec in others)]
    ranked = {item.task.id: item for item in rank_next(tasks, Config(), limit=0)}
    assert _points(ranked["1"], factor) == points
    assert ranked["1"].score == sum(reason.points for reason in ranked["1"].reasons)


@pytest.mark.parametrize(
    ("specs", "unphased", "expected"),
    [
        pytest.param(
            [
                {"id": "1", "phase": "beta", "priority": "critical"},
                {"id": "2", "phase": "alpha", "priority": "low"},
            ],
            "current",
            ["2", "1"],
            id="earlier-phase-first-whatever-the-score",
        ),
        pytest.param(
            [
                {"id": "1", "phase": "alpha", "priority": "low"},
                {"id": "2", "priority": "high"},
                {"id": "3", "phase": "beta", "priority": "critical"},
            ],
            "current",
            ["2", "1", "3"],
            id="unphased-joins-earliest-phase",
        ),
        pytest.param(
            [
                {"id": "1", "phase": "alpha", "status": "completed"},
                {"id": "2", "priority": "low"},
                {"id": "3", "phase": "beta", "priority": "high"},
            ],
            "current",
            ["3", "2"],
            id="unphased-joins-the-earliest-phase-with-actionable-tasks",
        ),
        pytest.param(
            [
                {"id": "1", "phase": "beta", "priority": "low"},
                {"id": "2", "priority": "critical"},
                {"id": "3", "phase": "gamma", "priority": "critical"},
            ],
            "last",
            ["1", "2", "3"],
            id="unphased-last-before-unknown",
        ),
        pytest.param(
            [
                {"id": "1", "phase": "gamma", "priority": "critical"},
                {"id": "2", "phase": "beta", "priority": "low"},
                {"id": "3", "priority": "critical"},
            ],
            "current",
            ["3", "2", "1"],
            id="unknown-phase-ranks-last",
        ),
        pytest.param(
            [
                {"id": "1", "phase": "alpha", "dependencies": ["9"]},
                {"id": "9", "phase": "beta", "priority": "low"},
                {"id": "4", "phase": "beta", "priority": "high"},
            ],
            "current",
            ["4", "9"],
            id="blocked-earlier-phase-does-not-hold-back",
        ),
    ],
)
def test_strict_phase_tiers(
    make: TaskFactory, specs: list[Spec], unphased: str, expected: list[str]
) -> None:
    config = Config(phases=PHASES, next_unphased=unphased)  # type: ignore[arg-type]
    ranked = rank_next([make(**spec) for spec in specs], config, limit=0)
    assert [item.task.id for item in ranked] == expected


@pytest.mark.parametrize(("phase", "bonus"), [("alpha", 25), ("beta", 20), ("gamma", 0), (None, 0)])
def test_strict_off_makes_phase_a_bonus(make: TaskFactory, phase: str | None, bonus: int) -> None:
    (ranked,) = rank_next([make("1", phase=phase)], Config(phases=PHASES), strict_phases=False)
    assert _points(ranked, "phase") == bonus
    assert ranked.score == 10 + bonus


def test_strict_off_lets_score_cross_phases(make: TaskFactory) -> None:
    tasks = [make("1", phase="beta", priority="critical"), make("2", phase="alpha")]
    ranked = rank_next(tasks, Config(phases=PHASES), strict_phases=False)
    assert [item.task.id for item in ranked] == ["1", "2"]
    assert [item.score for item in ranked] == [60, 35]


def test_unphased_setting_has_no_effect_without_phases(make: TaskFactory) -> None:
    tasks = [make("1", phase="x"), make("2", priority="high")]
    for unphased in ("current", "last"):
        config = Config(next_unphased=unphased)
        assert [item.task.id for item in rank_next(tasks, config)] == ["2", "1"]


def test_ties_in_natural_id_order(make: TaskFactory) -> None:
    tasks = [make(task_id) for task_id in ("10", "9", "T-2", "T-10", "1")]
    ranked = rank_next(tasks, Config(), limit=0)
    assert [item.task.id for item in ranked] == ["1", "9", "10", "T-2", "T-10"]
    assert [item.rank for item in ranked] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(("limit", "count"), [(5, 5), (2, 2), (0, 7), (100, 7)])
def test_limit(make: TaskFactory, limit: int, count: int) -> None:
    tasks = [make(str(i)) for i in range(7)]
    assert len(rank_next(tasks, Config(), limit=limit)) == count


def test_quick_wins_keep_only_the_lowest_effort(make: TaskFactory) -> None:
    tasks = [make("1", effort="xs"), make("2", effort="m"), make("3"), make("4", effort="xs")]
    config = Config(effort=("xs", "m", "xl"))
    ranked = rank_next(tasks, config, quick_wins=True)
    assert [item.task.id for item in ranked] == ["1", "4"]
    assert _points(ranked[0], "effort") == 5


def test_only_actionable_and_filtered_candidates(make: TaskFactory) -> None:
    tasks = [
        make("1", status="completed"),
        make("2", dependencies=["3"]),
        make("3", owner="ann"),
        make("4", owner="bob"),
    ]
    ranked = rank_next(tasks, Config(), predicate=lambda task: task.owner == "ann")
    assert [item.task.id for item in ranked] == ["3"]
    assert ranked[0].to_json()["reasons"][0] == {
        "factor": "priority",
        "points": 10,
        "detail": "priority low (unset)",
    }
