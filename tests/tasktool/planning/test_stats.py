"""``stats``: counts in natural order, completion rate, blocked, longest chain."""

from __future__ import annotations

from tasktool.model.config import Config
from tasktool.planning.stats import compute_stats

from .conftest import TaskFactory


def test_stats(make: TaskFactory) -> None:
    tasks = [
        make("1", status="completed", priority="high", effort="small"),
        make("2", dependencies=["1"], priority="high"),
        make("3", dependencies=["2"], effort="large"),
        make("4", dependencies=["3", "404"]),
        make("5", status="cancelled"),
        make("6", status="completed", archived=True),
    ]
    payload = compute_stats(tasks, Config()).to_json()
    assert payload["total"] == 5
    assert payload["archived"] == 1
    assert payload["by_status"] == {
        "pending": 3,
        "blocked": 0,
        "in-progress": 0,
        "in-review": 0,
        "cancelled": 1,
        "completed": 1,
    }
    assert list(payload["by_priority"].items()) == [
        ("low", 0),
        ("medium", 0),
        ("high", 2),
        ("critical", 0),
        ("(none)", 3),
    ]
    assert payload["by_effort"] == {"small": 1, "medium": 0, "large": 1, "(none)": 3}
    assert payload["by_phase"] == {"(none)": 5}
    assert payload["completion_rate"] == 0.25
    assert payload["actionable"] == 1
    assert payload["blocked"] == 2
    assert payload["longest_chain"] == {"length": 4, "ids": ["1", "2", "3", "4"]}


def test_empty_stats() -> None:
    payload = compute_stats([], Config()).to_json()
    assert payload["total"] == 0
    assert payload["completion_rate"] == 0.0
    assert payload["longest_chain"] == {"length": 0, "ids": []}
