"""Repositories in taskmd's layout, read without moving a file: group folders with nested
``archive/`` folders and per-folder ``.worklogs/``, titled worklog headings, committed
merge-conflict markers; and ``deduplicate`` carrying worklogs, its dry run matching."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from tasktool.cli.main import main as cli
from tasktool.config import Overrides
from tasktool.planning.repository import Repository, load_context
from tasktool.planning.writing.worklog import read_worklog
from tasktool.planning.writing.writes import archive_task, remove_task

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project

GROUPS = ("cli", "web", "docs/guides")


def task(task_id: str, title: str, status: str = "pending", deps: str = "") -> str:
    extra = f"dependencies: [{deps}]\n" if deps else ""
    return f"---\nid: '{task_id}'\ntitle: {title}\nstatus: {status}\n{extra}---\nBody.\n"


def worklog(title: str, *stamps: str) -> str:
    entries = "".join(
        f"## {stamp} \u2014 Step {n}\n\nDid {n}.\n\n" for n, stamp in enumerate(stamps)
    )
    return f"# Worklog: {title}\n\n{entries}"


@pytest.fixture
def taskmd(project: Project) -> Project:
    """Per group: two active tasks, one archived task in ``<group>/archive/`` and a
    per-folder worklog; one task with a conflict committed; a root-level worklog."""
    project.config("dir: tasks\nworklogs: true\n")
    number = 0
    for group in GROUPS:
        for state in ("active", "active", "archived"):
            number += 1
            folder = f"tasks/{group}/archive" if state == "archived" else f"tasks/{group}"
            status = "completed" if state == "archived" else "pending"
            project.write(f"{folder}/{number:03d}-t.md", task(f"{number:03d}", group, status))
        project.write(
            f"tasks/{group}/.worklogs/{number - 2:03d}.md",
            worklog(group, "2026-02-18T10:00:00Z", "2026-02-19T00:00:00Z"),
        )
    project.write("tasks/100-root.md", task("100", "Root", deps="003"))
    project.write("tasks/.worklogs/100.md", "## 2026-01-01T00:00:00Z: First\n\nroot log\n")
    project.write(
        "tasks/web/200-conflict.md",
        "---\nid: '200'\n<<<<<<< HEAD\ntitle: Ours\n=======\ntitle: Theirs\n>>>>>>> feature\n---\n",
    )
    return project


def load(project: Project) -> Repository:
    return load_context(Overrides(), cwd=project.root, env=project.env, home=project.home)


def test_nested_archives_and_groups(taskmd: Project) -> None:
    repo = load(taskmd)
    assert [task.id for task in repo.tasks] == ["001", "002", "004", "005", "007", "008", "100"]
    assert [(task.id, task.group) for task in repo.archived] == [
        ("003", "cli"),
        ("006", "web"),
        ("009", "guides"),
    ]
    assert "100" in [task.id for task in repo.graph.actionable()]  # archived 003 meets it


def test_merge_conflict_is_one_error_naming_file_and_line(taskmd: Project) -> None:
    repo = load(taskmd)
    (problem,) = repo.broken
    assert problem.code == "task.merge_conflict"
    assert problem.file is not None
    assert problem.file.endswith("200-conflict.md")
    assert "200-conflict.md:3:" in problem.message
    assert len(repo.tasks) == 7  # every other task loads


def test_per_folder_worklogs_with_titles_are_read(taskmd: Project) -> None:
    repo = load(taskmd)
    log = read_worklog(repo, "001")
    assert [(entry.timestamp, entry.title) for entry in log.entries] == [
        ("2026-02-18T10:00:00Z", "Step 0"),
        ("2026-02-19T00:00:00Z", "Step 1"),
    ]
    assert log.entries[1].content == "Did 1."
    root = read_worklog(repo, "100")
    assert [(entry.title, entry.content) for entry in root.entries] == [("First", "root log")]


def run(project: Project, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), env=project.env, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.stdout


@pytest.fixture
def inside(taskmd: Project, in_project: Project) -> Project:
    return in_project


def test_get_and_worklog_add_use_the_per_folder_file(inside: Project) -> None:
    detail = json.loads(run(inside, "get", "004", "--format", "json"))
    assert detail["worklog"]["path"].endswith("web/.worklogs/004.md")
    assert detail["worklog"]["entries"] == 2
    run(inside, "worklog", "004", "--add", "Third")
    text = (inside.root / "tasks/web/.worklogs/004.md").read_text()
    assert text.startswith("# Worklog: web\n")
    assert text.rstrip().endswith("Third")
    assert not (inside.root / "tasks/.worklogs/004.md").exists()
    entries = json.loads(run(inside, "worklog", "004", "--format", "json"))["entries"]
    assert [entry["title"] for entry in entries] == ["Step 0", "Step 1", None]


def test_archive_and_rm_carry_per_folder_worklogs(taskmd: Project) -> None:
    target = archive_task(load(taskmd), "007")
    assert target == taskmd.root / "tasks/docs/guides/archive/007-t.md"
    assert (taskmd.root / "tasks/docs/guides/archive/.worklogs/007.md").is_file()
    assert not (taskmd.root / "tasks/docs/guides/.worklogs/007.md").exists()
    assert len(read_worklog(load(taskmd), "007").entries) == 2
    removed = remove_task(load(taskmd), "001")
    assert taskmd.root / "tasks/cli/.worklogs/001.md" in removed
    assert not (taskmd.root / "tasks/cli/.worklogs/001.md").exists()


def test_deduplicate_dry_run_matches_and_worklogs_follow(in_project: Project) -> None:
    project = in_project
    project.config("dir: tasks\nid:\n  strategy: random\n  length: 8\n")
    project.write("tasks/a/7-t.md", "---\nid: '7'\ntitle: A\ncreated_at: 2026-01-01\n---\n")
    project.write("tasks/b/7-t.md", "---\nid: '7'\ntitle: B\ncreated_at: 2026-02-01\n---\n")
    project.write("tasks/c/7-t.md", "---\nid: '7'\ntitle: C\ncreated_at: 2026-03-01\n---\n")
    project.write("tasks/b/.worklogs/7.md", "## 2026-02-02T00:00:00Z\n\nfrom b\n")
    dry = json.loads(run(project, "deduplicate", "--dry-run", "--format", "json"))
    real = json.loads(run(project, "deduplicate", "--format", "json"))
    assert [row["new_id"] for row in dry] == [row["new_id"] for row in real]
    assert len(real) == 2
    new_b = next(row["new_id"] for row in real if "/b/" in row["file_path"])
    assert (project.root / f"tasks/b/.worklogs/{new_b}.md").read_text().endswith("from b\n")
    assert not (project.root / "tasks/b/.worklogs/7.md").exists()
    entries = json.loads(run(project, "worklog", new_b, "--format", "json"))["entries"]
    assert [entry["content"] for entry in entries] == ["from b"]
