"""The loaded repository: what commands (and the planning helpers) get."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tasktool.config import Overrides
from tasktool.model.errors import TaskToolError
from tasktool.planning.repository import load_context

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project, TaskWriter


def test_context_holds_config_tasks_archive_and_broken(
    project: Project, write_task: TaskWriter
) -> None:
    project.config("dir: tasks\ncolour: red\n")
    write_task("2", where="tasks", dependencies=["1"])
    write_task("1", where="tasks/archive", status="completed")
    write_task("3", where="tasks", parent="2")
    project.write("tasks/4-x.md", "---\nid: 4\ntitle: [\n---\n")
    repo = load_context(Overrides(), cwd=project.root, env=project.env, home=project.home)
    assert repo.task_dir == project.root / "tasks"
    assert repo.config is repo.loaded.config
    assert repo.loaded.file == str(project.root / ".tasktool.yaml")
    assert [t.id for t in repo.tasks] == ["2", "3"]
    assert [t.id for t in repo.archived] == ["1"]
    assert [d.code for d in repo.broken] == ["task.yaml"]
    assert [d.code for d in repo.config_diagnostics] == ["config.unknown_key"]
    assert repo.ids == {"1", "2", "3"}
    assert repo.graph.dependents["1"] == ["2"]
    assert repo.graph.children["2"] == ["3"]
    assert repo.graph.references("1") == ["2"]
    assert repo.graph.references("2") == ["3"]
    assert repo.get("1").archived
    with pytest.raises(TaskToolError) as info:
        repo.get("4")  # its YAML is broken, but the id line still names it
    assert info.value.code == "task.broken"
    with pytest.raises(TaskToolError) as info:
        repo.get("9")
    assert info.value.code == "task.not_found"


def test_rejected_config_raises_unless_tolerant(project: Project) -> None:
    project.config("effort: []\n")
    with pytest.raises(TaskToolError) as info:
        load_context(Overrides(), cwd=project.root, env=project.env, home=project.home)
    assert info.value.code == "config.effort.empty"
    repo = load_context(
        Overrides(), cwd=project.root, env=project.env, home=project.home, tolerant=True
    )
    assert [d.code for d in repo.config_diagnostics] == ["config.effort.empty"]


def test_missing_task_dir(project: Project) -> None:
    """A task directory not made yet reads as no tasks (and makes nothing); a path that is
    not a directory is an error."""
    repo = load_context(
        Overrides(task_dir="nope"), cwd=project.root, env=project.env, home=project.home
    )
    assert (repo.absent, repo.tasks, repo.archived, repo.broken) == (True, (), (), ())
    note = repo.absent_note()
    assert note is not None
    assert note.code == "task.dir_absent"
    assert "nope does not exist yet" in note.message
    assert not (project.root / "nope").exists()
    project.write("afile", "")
    with pytest.raises(TaskToolError) as info:
        load_context(
            Overrides(task_dir="afile"), cwd=project.root, env=project.env, home=project.home
        )
    assert "afile is not a directory" in info.value.message
    assert info.value.code == "task.dir_missing"


def test_get_names_a_broken_file(project: Project) -> None:
    project.write("4-x.md", "---\nid: '4'\nstatus: pending\n---\n")
    repo = load_context(Overrides(), cwd=project.root, env=project.env, home=project.home)
    with pytest.raises(TaskToolError) as info:
        repo.get("4")
    assert info.value.code == "task.broken"
    assert "4-x.md" in info.value.message
