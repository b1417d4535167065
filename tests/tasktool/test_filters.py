"""--filter, --sort and --group-by."""

from __future__ import annotations

import pytest

from tasktool.model.config import Config, Phase
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task
from tasktool.planning.filters import apply_filters, group_tasks, parse_filter, sort_tasks

TASKS = [
    Task(id="1", title="Login page", priority="low", effort="large", tags=("ui",), phase="b"),
    Task(id="2", title="API", priority="critical", effort="small", tags=("api", "ui"), phase="a"),
    Task(id="10", title="Docs", priority="high", status="in-progress", owner="ann"),
    Task(id="3", title="Misc", effort="medium", created_at="2024-05-01"),
]
SETTINGS = Config(phases=(Phase(id="a", name="A"), Phase(id="b", name="B")))


def ids(tasks: list[Task]) -> list[str]:
    return [task.id for task in tasks]


@pytest.mark.parametrize(
    ("expressions", "expected"),
    [
        (["priority>=high"], ["2", "10"]),
        (["priority<medium"], ["1"]),
        (["effort>small"], ["1", "3"]),
        (["status>=in-progress"], ["10"]),
        (["created_at<2025-01-01"], ["3"]),
        (["tags=ui"], ["1", "2"]),
        (["tags!=ui"], ["10", "3"]),
        (["owner="], ["1", "2", "3"]),
        (["title~LOG"], ["1"]),
        (["status=pending,in-progress", "priority!=low"], ["2", "10", "3"]),
    ],
)
def test_filters(expressions: list[str], expected: list[str]) -> None:
    assert ids(apply_filters(TASKS, expressions, SETTINGS)) == expected


def test_effort_order_follows_the_configured_vocabulary() -> None:
    config = Config(effort=("large", "small"))
    assert ids(apply_filters(TASKS, ["effort<=large"], config)) == ["1"]


@pytest.mark.parametrize(
    ("expression", "code"),
    [
        ("colour=red", "filter.field"),
        ("title>a", "filter.comparison"),
        ("nonsense", "filter.syntax"),
    ],
)
def test_bad_filters(expression: str, code: str) -> None:
    with pytest.raises(TaskToolError) as info:
        parse_filter(expression)
    assert info.value.code == code


def test_unknown_vocabulary_value_in_a_comparison() -> None:
    """Refused by its stable code, naming the value (the message may be reworded)."""
    with pytest.raises(TaskToolError) as info:
        apply_filters(TASKS, ["priority>urgent"], SETTINGS)
    assert info.value.code == "filter.value"
    assert "'urgent'" in info.value.message


def test_sort_orders_and_unset_last() -> None:
    assert ids(sort_tasks(TASKS, "effort", SETTINGS)) == ["2", "3", "1", "10"]
    assert ids(sort_tasks(TASKS, "-priority", SETTINGS)) == ["2", "10", "1", "3"]
    assert ids(sort_tasks(TASKS, "id", SETTINGS)) == ["1", "2", "3", "10"]
    assert ids(sort_tasks(TASKS, "phase,-id", SETTINGS)) == ["2", "1", "10", "3"]


def test_group_by_natural_order() -> None:
    grouped = group_tasks(TASKS, "phase", SETTINGS)
    assert [(value, ids(tasks)) for value, tasks in grouped] == [
        ("a", ["2"]),
        ("b", ["1"]),
        (None, ["10", "3"]),
    ]
    by_priority = [value for value, _ in group_tasks(TASKS, "priority", SETTINGS)]
    assert by_priority == ["low", "high", "critical", None]
