"""The change feed's filter, the graph layout and the JSON edit decoding."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from mtcommon import CodedError
from tasktool.model.config import Config
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task
from tasktool.planning.writing.changes import change_from_json
from tasktool.web.events import ChangeFeed, is_task_change
from tasktool.web.graph.graphsvg import _layers, graph_svg
from tasktool.web.layout import Links, export_name

ROOT = Path("/t")


@pytest.mark.parametrize(
    ("path", "counts"),
    [("/t/001-a.md", True), ("/t/sub/001-a.md", True), ("/t/.worklogs/001.md", True),
     ("/t/archive/001-a.md", True), ("/t/.tasktool/cache/x.md", False), ("/t/.git/x.md", False),
     ("/t/node_modules/x.md", False), ("/t/notes.txt", False), ("/elsewhere/x.md", False),
     ("/t/skipme/x.md", False)],
)  # fmt: skip
def test_only_task_files_count_as_changes(path: str, counts: bool) -> None:
    assert is_task_change(ROOT, path, ("skipme",)) is counts


def test_layers_follow_the_longest_chain_and_survive_cycles() -> None:
    deps = {"a": [], "b": ["a"], "c": ["b", "a"], "x": ["y"], "y": ["x"]}
    layer = _layers(list(deps), deps)
    assert (layer["a"], layer["b"], layer["c"]) == (0, 1, 2)
    assert {layer["x"], layer["y"]} == {0, 1}


def test_a_long_chain_does_not_recurse() -> None:
    deps = {str(i): [str(i - 1)] if i else [] for i in range(5000)}
    assert _layers(list(deps), deps)["4999"] == 4999


def test_graph_svg_links_every_task_and_escapes_titles() -> None:
    graph = {
        "nodes": [
            {"id": "1", "title": "<b>x</b>", "status": "pending", "actionable": True},
            {"id": "2", "title": "y", "status": "completed", "actionable": False},
        ],
        "edges": [{"from": "1", "to": "2"}],
        "cycles": [],
    }
    svg = graph_svg(graph, Links())
    assert svg.count("<a href=") == 2
    assert "<b>x</b>" not in svg
    assert "&lt;b&gt;" in svg
    assert 'marker-end="url(#arrow)"' in svg


def test_export_names_stay_inside_the_folder() -> None:
    assert export_name("007") == "007.html"
    odd = export_name("../../etc/passwd")
    assert "/" not in odd
    assert odd.startswith("task-")
    assert Links(static=True, depth=1).task("007") == "../tasks/007.html"
    assert Links().task("a/b") == "/tasks/a%2Fb"


TASK = Task(id="7", title="T", status="pending", tags=("a",))


def test_change_from_json_builds_the_cli_change() -> None:
    change = change_from_json(
        {"status": "completed", "owner": None, "tags": ["b", " "], "body": "x"},
        TASK, Config(), {"7"}, "2030-01-01",
    )  # fmt: skip
    assert change.set == {"status": "completed", "owner": None}
    assert change.replace == {"tags": ("b",)}
    assert change.body == "x"


def test_change_from_json_reports_every_bad_field() -> None:
    with pytest.raises(CodedError) as caught:
        change_from_json(
            {"priority": 3, "type": "epic", "tags": "a", "id": "8", "title": ""},
            TASK, Config(), {"7"}, "2030-01-01",
        )  # fmt: skip
    assert caught.value.code == "task.invalid_fields"
    fields = (caught.value.details or {})["fields"]
    assert {name: item["code"] for name, item in fields.items()} == {
        "priority": "task.invalid_value",
        "type": "task.invalid_type",
        "tags": "task.invalid_value",
        "id": "task.unknown_field",
        "title": "task.invalid_title",
    }


def test_a_feed_without_watchfiles_fails_to_start_instead_of_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher's import failing must end ``start`` (it used to wait for ever)."""
    monkeypatch.setitem(sys.modules, "watchfiles", None)

    async def start() -> None:
        await asyncio.wait_for(ChangeFeed(tmp_path).start(), timeout=30)

    with pytest.raises(TaskToolError) as caught:
        asyncio.run(start())
    assert caught.value.code == "tasktool.missing_extra"
    assert "watchfiles" in caught.value.message
