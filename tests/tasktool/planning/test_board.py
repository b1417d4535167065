"""``board``: column order per field, ``(none)`` last, tags fan out."""

from __future__ import annotations

from typing import Any

import pytest

from tasktool.model.config import Config, Phase
from tasktool.model.errors import TaskToolError
from tasktool.planning.board import build_board

from .conftest import TaskFactory

SETTINGS = Config(
    effort=("xs", "s", "l"), phases=(Phase(id="p1", name="One"), Phase(id="p2", name="Two"))
)


@pytest.mark.parametrize(
    ("field", "specs", "columns"),
    [
        pytest.param(
            "status",
            [{"status": "completed"}, {"status": "weird"}],
            ["pending", "blocked", "in-progress", "in-review", "cancelled", "completed", "weird"],
            id="status",
        ),
        pytest.param(
            "priority",
            [{"priority": "high"}, {}],
            ["low", "medium", "high", "critical", "(none)"],
            id="priority",
        ),
        pytest.param(
            "effort", [{"effort": "l"}, {"effort": "huge"}], ["xs", "s", "l", "huge"], id="effort"
        ),
        pytest.param(
            "type",
            [{"type": "bug"}],
            ["feature", "bug", "improvement", "chore", "docs"],
            id="type",
        ),
        pytest.param(
            "phase",
            [{"phase": "zz"}, {"phase": "p2"}, {}],
            ["p1", "p2", "zz", "(none)"],
            id="phase",
        ),
        pytest.param(
            "owner",
            [{"owner": "bob"}, {"owner": "Ann"}, {}, {"owner": "ann10"}, {"owner": "ann9"}],
            ["Ann", "ann9", "ann10", "bob", "(none)"],
            id="owner-natural",
        ),
        pytest.param("tag", [{"tags": ["ui", "api"]}, {"tags": ["api"]}], ["api", "ui"], id="tag"),
        pytest.param("group", [{"group": "b"}, {"group": "a"}], ["a", "b"], id="group"),
    ],
)
def test_column_order(
    make: TaskFactory, field: str, specs: list[dict[str, Any]], columns: list[str]
) -> None:
    tasks = [make(str(i), **spec) for i, spec in enumerate(specs)]
    board = build_board(tasks, SETTINGS, field)
    assert [column.name for column in board.columns] == columns


def test_tasks_fan_out_by_tag_and_skip_archived(make: TaskFactory) -> None:
    tasks = [
        make("10", tags=["a", "b"]),
        make("9", tags=["a"]),
        make("1", tags=["a"], archived=True),
    ]
    payload = build_board(tasks, SETTINGS, "tag").to_json()
    assert [
        (column["name"], [card["id"] for card in column["tasks"]]) for column in payload["columns"]
    ] == [("a", ["9", "10"]), ("b", ["10"])]
    assert payload["columns"][0]["count"] == 2


def test_unknown_field_is_refused() -> None:
    with pytest.raises(TaskToolError, match="cannot group by 'colour'") as caught:
        build_board([], SETTINGS, "colour")
    assert caught.value.code == "filter.field"
