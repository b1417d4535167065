"""``graph`` past :data:`WHOLE_UP_TO` tasks draws the actionable subgraph (the dashboard's
rule, :mod:`tasktool.planning.graph_part`) and says on stderr what it left out; ``--all``
draws every task, ``--root`` its part as before; a piped repeat replays the note too."""

from __future__ import annotations

import contextlib
import json

import pytest
from click.testing import CliRunner, Result

from tasktool.cli.commands.graph import WHOLE_UP_TO
from tasktool.cli.main import main
from tasktool.model.config import Config
from tasktool.model.task import Task
from tasktool.planning.graph import build_graph
from tasktool.planning.graph_part import actionable_part
from tests.tasktool.conftest import Project
from tests.tasktool.planning.test_derived_memo import _age, _write
from tests.tasktool.test_output_memo import POISON, _kept, _poison

#: Done tasks past the threshold, beside the five that make the part.
FILLER = WHOLE_UP_TO + 5
TOTAL = FILLER + 5
NOTE = (
    f"note: {TOTAL:,} tasks in the graph, drawing 4: the actionable ones, highest priority "
    f"first, and what each unblocks; {TOTAL - 4:,} left out (--all draws every task, "
    "--root ID one task's part)\n"
)


def _task(task_id: str, *, priority: str = "medium", deps: tuple[str, ...] = ()) -> Task:
    return Task(
        id=task_id, title=f"Task {task_id}", status="pending", priority=priority,
        dependencies=deps,
    )  # fmt: skip


def test_the_actionable_part_is_the_ready_tasks_by_priority_then_what_they_unblock() -> None:
    graph = build_graph(
        [
            _task("1", priority="low"),
            _task("2", priority="critical"),
            _task("3", deps=("2",)),
            _task("4", deps=("3",)),  # two steps from 2
            _task("5", deps=("1",)),
            _task("6", deps=("9",)),  # waits on a task the status filter leaves out
            _task("9"),
        ]
    )
    allowed = {"1", "2", "3", "4", "5", "6"}
    config = Config()
    assert actionable_part(graph, config, allowed, depth=1, limit=10) == ["2", "1", "3", "5"]
    assert actionable_part(graph, config, allowed, depth=2, limit=10) == [
        *("2", "1", "3", "5", "4"),
    ]
    assert actionable_part(graph, config, allowed, depth=1, limit=3) == ["2", "1", "3"]


@pytest.fixture
def big(project: Project) -> Project:
    """Tasks 001 (low) and 002 (high) ready, 003 and 004 waiting on 002, 005 on 003,
    then enough done tasks to pass the threshold; every file aged."""
    root = project.root
    (root / ".tasktool.yaml").write_text("dir: tasks\n", encoding="utf-8")
    _write(root, 1, status="pending", priority="low")
    _write(root, 2, status="pending", priority="high")
    _write(root, 3, status="pending", dependencies=["'002'"])
    _write(root, 4, status="pending", dependencies=["'002'"])
    _write(root, 5, status="pending", dependencies=["'003'"])
    for number in range(6, 6 + FILLER):
        _write(root, number, status="completed")
    _age(root)
    return project


def _graph(project: Project, *argv: str, quiet: bool = False) -> Result:
    line = ["--quiet"] * quiet + ["graph", *argv]
    with contextlib.chdir(project.root):
        done = CliRunner().invoke(main, line, env={"HOME": str(project.home)})
    assert done.exit_code == 0, done.output
    return done


def _ids(done: Result) -> list[str]:
    return [node["id"] for node in json.loads(done.stdout)["nodes"]]


def test_a_large_graph_opens_on_its_actionable_part_with_a_note(big: Project) -> None:
    done = _graph(big, "--format", "json")
    assert _ids(done) == ["001", "002", "003", "004"]
    assert json.loads(done.stdout)["edges"] == [
        {"from": "002", "to": "003"},
        {"from": "002", "to": "004"},
    ]
    assert done.stderr == NOTE
    ascii_drawing = _graph(big).stdout
    assert "005" not in ascii_drawing
    assert "└── 004: Task 004 [pending]" in ascii_drawing


def test_all_draws_every_task_and_root_its_part_without_a_note(big: Project) -> None:
    done = _graph(big, "--all", "--format", "json")
    assert len(_ids(done)) == TOTAL
    assert done.stderr == ""
    rooted = _graph(big, "--root", "003", "--format", "json")
    assert _ids(rooted) == ["002", "003", "005"]
    assert rooted.stderr == ""
    for _ in range(2):  # kept with its note; --quiet is a setting: another key
        assert _graph(big, "--format", "json").stderr == NOTE
    assert _graph(big, "--format", "json", quiet=True).stderr == ""


def test_a_small_selection_is_drawn_whole(big: Project) -> None:
    done = _graph(big, "--exclude-status", "completed", "--format", "json")
    assert _ids(done) == ["001", "002", "003", "004", "005"]
    assert done.stderr == ""


def test_a_piped_repeat_replays_the_drawing_and_its_note(big: Project) -> None:
    first = _graph(big, "--format", "json")
    assert _graph(big, "--format", "json").stdout == first.stdout  # the cache settles
    assert _kept(big.root)
    _poison(big.root)  # the notes too: replayed bytes are told from computed ones
    again = _graph(big, "--format", "json")
    assert again.stdout_bytes == POISON
    assert again.stderr_bytes == POISON
