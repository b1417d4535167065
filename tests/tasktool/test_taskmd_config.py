"""A repository that keeps its tasks with taskmd works as it is: its ``.taskmd.yaml`` is
read where a folder has no ``.tasktool.yaml`` (said once on stderr), and a home file does
not take its place."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result

from tasktool.cli.main import main as cli

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project

TASKMD_CONFIG = (
    "dir: ./tasks\nid:\n  strategy: sequential\n  padding: 3\nworkflow: pr-review\n"
    'scopes:\n  cli:\n    paths:\n      - "apps/cli/"\n'
)
NOTE = "note: no .tasktool.yaml found: reading taskmd's config"


def run(*args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


@pytest.fixture
def taskmd_repo(in_project: Project) -> Project:
    in_project.write(".taskmd.yaml", TASKMD_CONFIG)
    in_project.write("tasks/cli/001-a.md", '---\nid: "001"\ntitle: A\ntouches: [cli]\n---\n')
    in_project.write("tasks/002-b.md", '---\nid: "002"\ntitle: B\nstatus: in-progress\n---\n')
    in_project.write("notes/003-not-a-task-dir.md", '---\nid: "003"\ntitle: Outside\n---\n')
    return in_project


def test_taskmd_config_is_read_when_there_is_no_tasktool_yaml(taskmd_repo: Project) -> None:
    listed = run("list", "--format", "json")
    assert [task["id"] for task in json.loads(listed.stdout)] == ["001", "002"]
    assert listed.stderr.count(NOTE) == 1
    shown = json.loads(run("config", "show", "--format", "json").stdout)
    assert shown["file"] == str(taskmd_repo.root / ".taskmd.yaml")
    assert shown["settings"]["workflow"] == {"value": "pr-review", "source": "file"}
    assert shown["settings"]["dir"]["value"] == str(taskmd_repo.root / "tasks")
    # validate loads twice, still one note; -q none; nothing copied into the repository.
    assert run("validate").stderr.count(NOTE) == 1
    assert NOTE not in run("-q", "list").stderr
    assert not (taskmd_repo.root / ".tasktool.yaml").exists()


def test_from_a_subfolder_and_with_a_home_file(
    taskmd_repo: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project's ``.taskmd.yaml`` wins over ``~/.tasktool.yaml`` (a fallback for
    folders outside any project), and ``~/.taskmd.yaml`` (taskmd's registry) is never read."""
    (taskmd_repo.home / ".tasktool.yaml").write_text("dir: elsewhere\nprojects: []\n")
    (taskmd_repo.home / ".taskmd.yaml").write_text("projects:\n  - id: x\n    path: /nowhere\n")
    sub = taskmd_repo.root / "tasks" / "cli"
    result = CliRunner().invoke(cli, ["-d", str(sub), "list", "--format", "json"])
    assert [task["id"] for task in json.loads(result.stdout)] == ["001"]
    monkeypatch.chdir(sub)
    assert [t["id"] for t in json.loads(run("list", "--format", "json").stdout)] == ["001", "002"]


def test_tasktool_yaml_wins_in_the_same_folder(taskmd_repo: Project) -> None:
    taskmd_repo.config("dir: notes\n")
    listed = run("list", "--format", "json")
    assert [task["id"] for task in json.loads(listed.stdout)] == ["003"]
    assert NOTE not in listed.stderr


def test_a_taskmd_repository_can_be_registered(taskmd_repo: Project) -> None:
    assert "registered" in run("projects", "register").stdout


def test_the_dashboard_export_says_it_once_too(taskmd_repo: Project) -> None:
    result = run("web", "export", "-o", str(taskmd_repo.root / "site"))
    assert result.stderr.count("no .tasktool.yaml found: reading taskmd's config") == 1
    assert (taskmd_repo.root / "site" / "index.html").is_file()
