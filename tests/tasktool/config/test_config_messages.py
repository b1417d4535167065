"""Configuration that says what it did: rejected environment values, ``dir`` with
``task-dir``, ``TASKTOOL_*`` variables without effect, ``workflow: pr-review`` and
``init`` in a subdirectory (through the real CLI)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result

from tasktool.cli.main import main as cli

Invoke = Callable[..., Result]

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project


@pytest.fixture
def run(in_project: Project) -> Invoke:

    def invoke(*args: str, code: int = 0, env: dict[str, str] | None = None) -> Result:
        result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result

    return invoke


def test_a_rejected_env_value_is_an_error_with_its_source(project: Project, run: Invoke) -> None:
    project.config("dir: tasks\n")
    result = run("config", "show", "--format", "json", code=1, env={"TASKTOOL_ID_LENGTH": "abc"})
    assert "error: TASKTOOL_ID_LENGTH" in result.stderr
    assert "[config.env.invalid]" in result.stderr
    setting = json.loads(result.stdout)["settings"]["id.length"]
    assert setting == {"value": "abc", "source": "rejected: TASKTOOL_ID_LENGTH"}


def test_dir_and_task_dir_warn_which_is_used(project: Project, run: Invoke) -> None:
    project.config("dir: a\ntask-dir: b\n")
    (project.root / "b").mkdir()
    result = run("config", "show")
    assert "task-dir ('b') is used" in result.stderr
    assert "[config.both_dirs]" in result.stderr


def test_env_variables_without_effect_are_named(project: Project, run: Invoke) -> None:
    project.config("dir: tasks\n")
    (project.root / "tasks").mkdir()
    env = {"TASKTOOL_BOGUS": "1", "TASKTOOL_TASK_DIR": "elsewhere"}
    shown = run("config", "show", env=env).stderr
    report = run("validate", env=env).stdout
    for text in (shown, report):
        assert "TASKTOOL_BOGUS" in text
        assert "config.unknown_env" in text
        assert "TASKTOOL_TASK_DIR is ignored" in text
        assert "config.ignored_env" in text


def test_pr_review_workflow_done_means_in_review(project: Project, run: Invoke) -> None:
    project.config("dir: tasks\nworkflow: pr-review\n")
    project.write("tasks/1-a.md", "---\nid: '1'\ntitle: A\n---\n")
    done = json.loads(
        run("set", "1", "--done", "--add-pr", "https://x/pull/1", "--format", "json").stdout
    )
    assert (done["status"], done["pr"], done["completed_at"]) == (
        "in-review",
        ["https://x/pull/1"],
        None,
    )
    final = json.loads(run("set", "1", "--status", "completed", "--format", "json").stdout)
    assert final["status"] == "completed"
    project.config("dir: tasks\n")
    project.write("tasks/2-b.md", "---\nid: '2'\ntitle: B\n---\n")
    assert json.loads(run("set", "2", "--done", "--format", "json").stdout)["status"] == (
        "completed"
    )


def test_init_in_a_subdirectory_warns_and_keeps_the_task_dir(
    project: Project,
    run: Invoke,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project.config("dir: tasks\n")
    sub = project.root / "service"
    sub.mkdir()
    monkeypatch.chdir(sub)
    result = run("init")
    assert f"{sub / '.tasktool.yaml'} shadows {project.root / '.tasktool.yaml'}" in result.stderr
    assert "[config.shadowed]" in result.stderr
    assert (sub / "tasks" / ".gitkeep").is_file()
    subprocess.run(["git", "init", "-q", str(sub)], check=True)
    subprocess.run(["git", "-C", str(sub), "add", "-A"], check=True)
    listed = subprocess.run(
        ["git", "-C", str(sub), "ls-files"], check=True, capture_output=True, text=True
    ).stdout
    assert "tasks/.gitkeep" in listed
