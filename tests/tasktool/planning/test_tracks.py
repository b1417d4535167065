"""``tracks``: greedy placement by rank, flexible tasks, unknown scopes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasktool.model.config import Config, Scope
from tasktool.model.task import Task
from tasktool.planning.tracks import plan_tracks

from .conftest import TaskFactory


def _layout(result: Any) -> list[list[str]]:
    return [[item.task.id for item in track.tasks] for track in result.tracks]


@pytest.mark.parametrize(
    ("specs", "layout", "flexible"),
    [
        pytest.param([], [], [], id="empty"),
        pytest.param(
            [{"id": "1", "touches": ["api"]}, {"id": "2", "touches": ["ui"]}],
            [["1", "2"]],
            [],
            id="disjoint-share-a-track",
        ),
        pytest.param(
            [{"id": "1", "touches": ["api"]}, {"id": "2", "touches": ["api"]}],
            [["1"], ["2"]],
            [],
            id="shared-scope-separate-tracks",
        ),
        pytest.param(
            [
                {"id": "1", "touches": ["api", "db"]},
                {"id": "2", "touches": ["db"]},
                {"id": "3", "touches": ["ui"]},
                {"id": "4", "touches": ["api"]},
                {"id": "5"},
            ],
            [["1", "3"], ["2", "4"]],
            ["5"],
            id="first-fit-in-rank-order",
        ),
        pytest.param(
            [
                {"id": "1", "touches": ["a"], "priority": "low"},
                {"id": "2", "touches": ["a"], "priority": "critical"},
            ],
            [["2"], ["1"]],
            [],
            id="higher-score-goes-first",
        ),
        pytest.param(
            [
                {"id": "1", "touches": ["a"]},
                {"id": "2", "touches": ["a"], "dependencies": ["1"]},
            ],
            [["1"]],
            [],
            id="only-actionable",
        ),
    ],
)
def test_layout(
    make: TaskFactory, specs: list[dict[str, Any]], layout: list[list[str]], flexible: list[str]
) -> None:
    result = plan_tracks([make(**spec) for spec in specs], Config())
    assert _layout(result) == layout
    assert [item.task.id for item in result.flexible] == flexible
    assert result.warnings == ()


def test_no_two_tasks_of_a_track_share_a_scope(make: TaskFactory) -> None:
    scopes = ["a", "b", "c", "d"]
    tasks = [make(str(i), touches=[scopes[i % 4], scopes[i * 7 % 3]]) for i in range(60)]
    result = plan_tracks(tasks, Config())
    placed = [item for track in result.tracks for item in track.tasks]
    assert len(placed) == 60
    for track in result.tracks:
        seen: set[str] = set()
        for item in track.tasks:
            assert not seen & set(item.task.touches)
            seen |= set(item.task.touches)
        assert set(track.scopes) == seen


def test_unknown_scopes_warn_only_when_scopes_are_configured(make: TaskFactory) -> None:
    tasks = [make("1", touches=["api", "nope"])]
    assert plan_tracks(tasks, Config()).warnings == ()
    config = Config(scopes={"api": Scope(description="HTTP API")})
    result = plan_tracks(tasks, config)
    assert result.warnings == (
        "task 1: touches 'nope', which matches no configured scope (api (HTTP API))",
    )
    assert result.to_json()["tracks"][0]["scopes"] == ["api", "nope"]


@given(
    touches=st.lists(st.lists(st.sampled_from("abcdef"), max_size=3), max_size=40),
)
@settings(max_examples=100, deadline=None)
def test_every_actionable_task_is_placed_once_without_scope_clashes(
    touches: list[list[str]],
) -> None:
    tasks = [Task(id=str(i), title="t", touches=tuple(t)) for i, t in enumerate(touches)]
    result = plan_tracks(tasks, Config())
    placed = [item.task.id for track in result.tracks for item in track.tasks]
    placed += [item.task.id for item in result.flexible]
    assert sorted(placed) == sorted(task.id for task in tasks)
    for track in result.tracks:
        scopes = [scope for item in track.tasks for scope in dict.fromkeys(item.task.touches)]
        assert len(scopes) == len(set(scopes))
    # First fit: a task in track k clashes with some task of every earlier track.
    for number, track in enumerate(result.tracks):
        for item in track.tasks:
            for earlier in result.tracks[:number]:
                assert set(item.task.touches) & set(earlier.scopes)
