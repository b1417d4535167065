"""One source of field orders and the date rule, shared by filters, board, set and validate."""

from __future__ import annotations

import pytest

from tasktool.model.config import Config, Phase
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task
from tasktool.model.vocabulary import field_values, is_date
from tasktool.planning.board import build_board
from tasktool.planning.checks import check_tasks
from tasktool.planning.filters import sort_tasks
from tasktool.planning.writing.changes import check_value

SETTINGS = Config(effort=("xs", "l"), phases=(Phase(id="b", name="B"), Phase(id="a", name="A")))


@pytest.mark.parametrize(
    ("field", "values"),
    [
        ("status", ("pending", "blocked", "in-progress", "in-review", "cancelled", "completed")),
        ("priority", ("low", "medium", "high", "critical")),
        ("type", ("feature", "bug", "improvement", "chore", "docs")),
        ("effort", ("xs", "l")),
        ("phase", ("b", "a")),
        ("owner", None),
    ],
)
def test_field_values(field: str, values: tuple[str, ...] | None) -> None:
    assert field_values(field, SETTINGS) == values


@pytest.mark.parametrize(
    ("text", "valid"),
    [("2024-02-29", True), ("2023-02-29", False), ("2024-01-03T10:00", True), ("soon", False)],
)
def test_is_date(text: str, valid: bool) -> None:
    assert is_date(text) is valid


def test_sort_and_board_share_the_order() -> None:
    tasks = [Task(id="1", title="t", type="docs"), Task(id="2", title="t", type="bug")]
    assert [t.id for t in sort_tasks(tasks, "type", SETTINGS)] == ["2", "1"]
    board = build_board(tasks, SETTINGS, "type")
    assert [column.name for column in board.columns if column.tasks] == ["bug", "docs"]


def test_set_and_validate_share_the_date_rule() -> None:
    with pytest.raises(TaskToolError) as info:
        check_value("created_at", "2023-02-29", SETTINGS)
    assert info.value.code == "task.invalid_date"
    task = Task(id="1", title="t", created_at="2023-02-29")
    assert [d.code for d in check_tasks([task], SETTINGS)] == ["task.invalid_date"]
