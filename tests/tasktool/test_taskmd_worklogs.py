"""Worklogs where taskmd leaves them: in the folder a task was archived from, beside
another group's tasks, and with headings that are dates alone; found with one listing
per folder at most, whatever the number of tasks asked about."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tasktool.config import Overrides
from tasktool.planning.repository import Repository, load_context
from tasktool.planning.writing.worklog import parse_worklog, read_worklog

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project


def task(task_id: str, status: str = "pending") -> str:
    return f'---\nid: "{task_id}"\ntitle: Task {task_id}\nstatus: {status}\n---\n'


def log(stamp: str, text: str) -> str:
    return f"# Worklog: {text}\n\n## {stamp}\n\n{text}\n"


@pytest.fixture
def repo_files(project: Project) -> Project:
    project.config("dir: tasks\n")
    project.write("tasks/cli/010-t.md", task("010"))
    project.write("tasks/archive/cli/011-t.md", task("011", "completed"))
    project.write("tasks/cli/archive/012-t.md", task("012", "completed"))
    project.write("tasks/archive/013-t.md", task("013", "completed"))
    project.write("tasks/cli/014-t.md", task("014"))
    project.write("tasks/cli/015-t.md", task("015"))
    project.write("tasks/016-t.md", task("016"))
    # 011 moved to archive/cli/ and 012 to cli/archive/: their worklogs stayed in cli/.
    project.write("tasks/cli/.worklogs/011.md", log("2026-02-01T10:00:00Z", "archived from cli"))
    project.write("tasks/cli/.worklogs/012.md", log("2026-02-02T10:00:00Z", "nested archive"))
    project.write("tasks/.worklogs/013.md", log("2026-02-03T10:00:00Z", "root"))
    # 014 is a cli task whose worklog was written beside the web tasks.
    project.write("tasks/web/.worklogs/014.md", log("2026-02-04T10:00:00Z", "elsewhere"))
    # Two candidates for 015 elsewhere: neither is taken as its worklog.
    project.write("tasks/web/.worklogs/015.md", log("2026-02-05T10:00:00Z", "one"))
    project.write("tasks/docs/.worklogs/015.md", log("2026-02-05T11:00:00Z", "two"))
    project.write("tasks/.worklogs/016.md", log("2026-02-25", "date only"))
    return project


def load(project: Project) -> Repository:
    return load_context(Overrides(), cwd=project.root, env=project.env, home=project.home)


def contents(repo: Repository, task_id: str) -> list[str]:
    return [entry.content for entry in read_worklog(repo, task_id).entries]


def test_an_archived_tasks_worklog_is_found_in_the_folder_it_was_archived_from(
    repo_files: Project,
) -> None:
    repo = load(repo_files)
    cli = repo_files.root / "tasks/cli/.worklogs"
    assert repo.worklog_path("011") == cli / "011.md"
    assert repo.worklog_path("012") == cli / "012.md"
    assert contents(repo, "011") == ["archived from cli"]
    assert contents(repo, "012") == ["nested archive"]
    assert contents(repo, "013") == ["root"]


def test_the_one_worklog_of_an_id_elsewhere_in_the_tree_is_found(repo_files: Project) -> None:
    repo = load(repo_files)
    assert repo.worklog_path("014") == repo_files.root / "tasks/web/.worklogs/014.md"
    assert contents(repo, "014") == ["elsewhere"]
    # Two candidates: a guess would be wrong half the time; a new entry goes beside the
    # task (its folder has a .worklogs/ folder).
    assert repo.worklog_path("015") == repo_files.root / "tasks/cli/.worklogs/015.md"
    assert contents(repo, "015") == []
    assert contents(repo, "010") == []


def test_date_only_headings_are_entries(repo_files: Project) -> None:
    repo = load(repo_files)
    (entry,) = read_worklog(repo, "016").entries
    assert (entry.timestamp, entry.content) == ("2026-02-25", "date only")
    text = "## 2026-02-25\n\nfirst\n\n## 2026-02-26 \u2014 Done\n\nsecond\n\n### Notes\n\nmore\n"
    assert [(e.timestamp, e.title, e.content) for e in parse_worklog(text)] == [
        ("2026-02-25", None, "first"),
        ("2026-02-26", "Done", "second\n\n### Notes\n\nmore"),
    ]


def test_the_tree_is_listed_once_for_every_lookup(
    repo_files: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fallback lists each scanned folder's ``.worklogs/`` once per run, never a walk
    per task: asking for every task lists as many folders as asking for one."""
    repo = load(repo_files)
    listed: list[str] = []
    real = os.scandir

    def counting(path: str) -> Iterator[os.DirEntry[str]]:
        listed.append(path)
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    for task_id in ("010", "014", "015", "011", "012", "013", "016", "014", "010"):
        repo.worklog_path(task_id)
    folders = {Path(path).parent for path in listed}
    assert len(listed) == len(folders)  # each folder at most once
    assert all(Path(path).name == ".worklogs" for path in listed)
