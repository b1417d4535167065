"""What a user coming from taskmd (or used to git and gh) types: a bare number for an id
in every command, taskmd's worklog default, status names as other tools spell them,
file names that keep every script's letters, ``set --tag`` adding, and a global flag
typed after the command."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from tests.tasktool.cli_run import as_json, run

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project


@pytest.fixture
def three(in_project: Project) -> Project:
    in_project.config("dir: tasks\nworklogs: true\n")
    for title in ("First", "Second", "Third"):
        run("add", title)
    return in_project


def test_a_bare_number_names_a_task_in_every_command(three: Project) -> None:
    assert as_json("set", "1", "--done")["id"] == "001"
    assert as_json("get", "001")["status"] == "completed"
    run("worklog", "3", "--add", "looked at it")
    assert as_json("worklog", "3")["task_id"] == "003"
    assert as_json("set", "2", "--dep", "3", "--parent", "1")["dependencies"] == ["003"]
    run("archive", "1")
    assert as_json("get", "1")["archived"] is True
    run("restore", "1")
    run("rm", "2")
    assert [task["id"] for task in as_json("list")] == ["001", "003"]
    assert "[task.not_found]" in run("set", "9", "--done", code=1).stderr


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("done", "completed"),
        ("Done", "completed"),
        ("in_progress", "in-progress"),
        ("In Progress", "in-progress"),
        ("todo", "pending"),
        ("To Do", "pending"),
        ("won't do", "cancelled"),
        ("in-review", "in-review"),
    ],
)
def test_status_names_of_other_tools_are_understood(
    three: Project, typed: str, stored: str
) -> None:
    assert as_json("set", "1", "--status", typed)["status"] == stored
    assert as_json("add", "More", "--status", typed)["status"] == stored
    (path,) = (three.root / "tasks").glob("001-*.md")
    assert f"status: {stored}\n" in path.read_text()


def test_an_unknown_status_lists_the_statuses(three: Project) -> None:
    refused = run("set", "1", "--status", "finished", code=1)
    assert "[task.invalid_status]" in refused.stderr
    assert "pending, blocked, in-progress, in-review, cancelled, completed" in refused.stderr


def test_set_tag_and_dep_add_and_the_plural_replaces(three: Project) -> None:
    run("set", "1", "--tags", "a,b")
    assert as_json("set", "1", "--tag", "c")["tags"] == ["a", "b", "c"]
    assert as_json("set", "1", "--tags", "d")["tags"] == ["d"]
    run("set", "3", "--dep", "1")
    assert as_json("set", "3", "--dep", "2")["dependencies"] == ["001", "002"]


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Исправить ошибку", "004-исправить-ошибку.md"),
        ("émoji support", "004-émoji-support.md"),
        ("修复 登录", "004-修复-登录.md"),
    ],
)
def test_file_names_keep_the_letters_of_every_script(three: Project, title: str, name: str) -> None:
    added = as_json("add", title)
    assert added["file_path"].endswith(f"/tasks/{name}")
    assert (three.root / "tasks" / name).is_file()


def test_a_global_flag_after_the_command_says_where_it_goes(three: Project) -> None:
    refused = run("list", "-q", code=2)
    assert "-q is a global option: put it before the command (tasktool -q list" in refused.stderr
    assert run("-q", "list").exit_code == 0


def test_worklogs_are_on_where_taskmd_config_is_loaded(in_project: Project) -> None:
    in_project.write(".taskmd.yaml", "dir: ./tasks\n")
    in_project.write("tasks/001-a.md", "---\nid: '001'\ntitle: A\nstatus: pending\n---\n")
    added = run("worklog", "1", "--add", "started")
    assert "reading taskmd's config" in added.stderr
    assert as_json("worklog", "1")["entries"][0]["content"] == "started"
    assert as_json("config", "show")["settings"]["worklogs"]["value"] is True
    # Said off in .taskmd.yaml: the refusal names that file, the one loaded.
    in_project.write(".taskmd.yaml", "dir: ./tasks\nworklogs: false\n")
    refused = run("worklog", "1", "--add", "again", code=1)
    assert "[worklog.disabled]" in refused.stderr
    assert re.search(r"set `worklogs: true` in \S*\.taskmd\.yaml", refused.stderr)


def test_worklogs_stay_off_by_default_in_tasktool_config(in_project: Project) -> None:
    in_project.config("dir: tasks\n")
    in_project.write("tasks/001-a.md", "---\nid: '001'\ntitle: A\nstatus: pending\n---\n")
    refused = run("worklog", "1", "--add", "x", code=1)
    assert re.search(r"set `worklogs: true` in \S*\.tasktool\.yaml", refused.stderr)
