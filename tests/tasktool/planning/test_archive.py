"""Archive selection and its plan, in the planning layer (the CLI only parses options):
which tasks a selection takes, where each goes, and which need ``--force``."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import pytest

from tasktool.config import Overrides
from tasktool.model.errors import TaskToolError
from tasktool.planning.repository import Repository, load_context
from tasktool.planning.writing.archive import archive_plan, choose_to_archive, refuse_unresolved

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project, TaskWriter

TODAY = dt.date(2026, 3, 1)


def _repo(project: Project) -> Repository:
    return load_context(Overrides(), cwd=project.root, env=project.env, home=project.home)


@pytest.fixture
def tasks(project: Project, write_task: TaskWriter) -> Repository:
    write_task("1", status="completed", completed_at="2026-01-01", tags=["ui"])
    write_task("2", status="cancelled", cancelled_at="2026-02-25")
    write_task("3", status="pending", where="api", tags=["ui"])
    write_task("4", status="completed", completed_at="not a date")
    return _repo(project)


def _ids(
    repo: Repository,
    *,
    statuses: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
    older_than: int | None = None,
) -> list[str]:
    chosen = choose_to_archive(
        repo, (), statuses=statuses, tags=tags, older_than=older_than, today=TODAY
    )
    return [task.id for task in chosen]


def test_a_selection_takes_resolved_tasks_unless_statuses_are_given(tasks: Repository) -> None:
    assert _ids(tasks) == ["1", "2", "4"]
    assert _ids(tasks, statuses=("pending",)) == ["3"]
    assert _ids(tasks, tags=("ui",)) == ["1"]
    assert _ids(tasks, statuses=("pending", "completed"), tags=("ui",)) == ["1", "3"]
    assert _ids(tasks, older_than=30) == ["1"]  # 4's date cannot be read: never old enough


def test_ids_are_taken_as_given(tasks: Repository) -> None:
    chosen = choose_to_archive(tasks, ["3", "1"], statuses=["cancelled"], today=TODAY)
    assert [task.id for task in chosen] == ["3", "1"]


def test_the_plan_marks_unresolved_tasks_and_a_real_run_refuses_it(
    tasks: Repository, project: Project
) -> None:
    chosen = choose_to_archive(tasks, ["1", "3"], today=TODAY)
    plan = archive_plan(tasks, chosen, force=False)
    assert [move.to_json() for move in plan] == [
        {
            "id": "1",
            "from": str(project.root / "1-task.md"),
            "to": str(project.root / "archive" / "1-task.md"),
            "needs_force": False,
        },
        {
            "id": "3",
            "from": str(project.root / "api" / "3-task.md"),
            "to": str(project.root / "archive" / "api" / "3-task.md"),
            "needs_force": True,
        },
    ]
    with pytest.raises(TaskToolError, match="not completed or cancelled: 3") as refused:
        refuse_unresolved(plan)
    assert refused.value.code == "task.unresolved"
    forced = archive_plan(tasks, chosen, force=True)
    assert not any(move.needs_force for move in forced)
    refuse_unresolved(forced)
