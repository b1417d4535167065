"""``graph``: selection by root and direction, status exclusion, the four formats."""

from __future__ import annotations

import json

import pytest

from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task
from tasktool.present.graph_render import render_graph, select_graph

from .conftest import TaskFactory


@pytest.fixture
def tasks(make: TaskFactory) -> list[Task]:
    return [
        make("1", status="completed"),
        make("2", dependencies=["1"]),
        make("3", dependencies=["2"]),
        make("4", dependencies=["1"]),
        make("5"),
    ]


@pytest.mark.parametrize(
    ("options", "nodes"),
    [
        ({}, ["1", "2", "3", "4", "5"]),
        ({"root": "2"}, ["1", "2", "3"]),
        ({"root": "2", "upstream": True}, ["1", "2"]),
        ({"root": "1", "downstream": True}, ["1", "2", "3", "4"]),
        ({"root": "3", "upstream": True, "exclude_status": ["completed"]}, ["2", "3"]),
        ({"exclude_status": ["pending"]}, ["1"]),
    ],
)
def test_selection(tasks: list[Task], options: dict[str, object], nodes: list[str]) -> None:
    view = select_graph(tasks, **options)  # type: ignore[arg-type]
    assert [task.id for task in view.nodes] == nodes


def test_unknown_or_excluded_root(tasks: list[Task]) -> None:
    with pytest.raises(TaskToolError) as missing:
        select_graph(tasks, root="99")
    assert missing.value.code == "task.not_found"
    with pytest.raises(TaskToolError) as excluded:
        select_graph(tasks, root="1", exclude_status=["completed"])
    assert excluded.value.code == "graph.root_excluded"


def test_ascii_tree(tasks: list[Task]) -> None:
    text = render_graph(select_graph(tasks), "ascii")
    assert text.splitlines() == [
        "1: Task 1 [completed]",
        "├── 2: Task 2 [pending]",
        "│   └── 3: Task 3 [pending]",
        "└── 4: Task 4 [pending]",
        "5: Task 5 [pending]",
    ]


def test_cycles_in_every_format(make: TaskFactory) -> None:
    view = select_graph([make("a", dependencies=["b"]), make("b", dependencies=["a"])])
    assert view.cycles == (("a", "b", "a"),)
    assert render_graph(view, "ascii").splitlines()[-1] == "cycle: a -> b -> a"
    assert "%% cycle: a -> b -> a" in render_graph(view, "mermaid")
    assert "// cycle: a -> b -> a" in render_graph(view, "dot")
    assert json.loads(render_graph(view, "json"))["cycles"] == [["a", "b", "a"]]


def test_mermaid_dot_json(tasks: list[Task]) -> None:
    view = select_graph(tasks, root="2", upstream=True)
    assert render_graph(view, "mermaid").splitlines() == [
        "graph TD",
        '    t0["1: Task 1 [completed]"]',
        '    t1["2: Task 2 [pending]"]',
        "    t0 --> t1",
    ]
    dot = render_graph(view, "dot")
    assert '"1" -> "2";' in dot
    assert '"2" [label="2: Task 2 [pending]", style="bold"];' in dot
    payload = json.loads(render_graph(view, "json"))
    assert payload["edges"] == [{"from": "1", "to": "2"}]
    assert payload["nodes"][1]["actionable"] is True


def test_ascii_diamond_points_back_instead_of_repeating(make: TaskFactory) -> None:
    tasks = [
        make("1"),
        make("2", dependencies=["1"]),
        make("3", dependencies=["1"]),
        make("4", dependencies=["2", "3"]),
    ]
    assert render_graph(select_graph(tasks), "ascii").splitlines() == [
        "1: Task 1 [pending]",
        "├── 2: Task 2 [pending]",
        "│   └── 4: Task 4 [pending]",
        "└── 3: Task 3 [pending]",
        "    └── 4 (see above)",
    ]
