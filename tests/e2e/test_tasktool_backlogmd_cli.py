"""tasktool's writes to a Backlog.md repository, read back by Backlog.md's own CLI.

The repository is made by ``backlog init`` (1.52.0, as ``.ci/run`` installs it) and holds
one task ``backlog task create`` wrote; tasktool then adds and changes tasks, and
``backlog task view --plain``, ``backlog task list --plain`` and ``backlog doctor`` must
read what it wrote as a Backlog.md user expects: title, status, priority, labels,
assignee, parent and dependencies. Backlog.md runs with its own empty home, without
auto-commit nor remote operations (its init writes both off; checked here), and with
``DO_NOT_TRACK`` for the Bun runtime it ships in."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .tasktool_process import git_repository, run_tasktool, tasktool_env

pytestmark = pytest.mark.backlogmd

Run = Callable[..., str]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repository(tmp_path)


@pytest.fixture
def backlog(backlog_cli: str, repo: Path) -> Run:
    """``backlog ARGS`` in the repository; its stdout, failing on a non-zero exit."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("BACKLOG_")}
    env.update(HOME=str(repo.parent / "home"), DO_NOT_TRACK="1", NO_COLOR="1")

    def run(*args: str) -> str:
        done = subprocess.run(
            [backlog_cli, *args],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, f"backlog {args}: exit {done.returncode}: {done.stderr}"
        return done.stdout

    return run


@pytest.fixture
def tt(repo: Path) -> Run:
    """``tasktool -q ARGS`` in the repository; its stdout, failing on a non-zero exit."""
    env = tasktool_env(repo.parent / "home")

    def run(*args: str) -> str:
        done = run_tasktool(("-q", *args), cwd=repo, env=env)
        assert done.returncode == 0, f"tasktool {args}: exit {done.returncode}: {done.stderr}"
        return done.stdout

    return run


def sections(listing: str) -> dict[str, list[str]]:
    """``backlog task list --plain`` as {status: [its lines]}."""
    found: dict[str, list[str]] = {}
    current: list[str] = []
    for line in listing.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            current = found.setdefault(line.removesuffix(":"), [])
        elif line.strip():
            current.append(line.strip())
    return found


def test_tasktool_writes_read_back_by_backlog_cli(repo: Path, backlog: Run, tt: Run) -> None:
    backlog(
        *("init", "Demo", "--defaults", "--integration-mode", "none", "--task-prefix", "back"),
        *("--check-branches", "false", "--include-remote", "false"),
        *("--auto-open-browser", "false"),
    )
    config = (repo / "backlog" / "config.yml").read_text().splitlines()
    assert {"auto_commit: false", "remote_operations: false"} <= set(config)
    backlog("task", "create", "Existing one", "--plain")

    tt("add", "Ship: the thing!", "--priority", "high", "--tag", "api", "--owner", "alice")
    tt("set", "back-2", "--dep", "back-1", "--parent", "BACK-1")
    tt("add", "Write the docs")
    tt("set", "back-3", "--status", "In Progress", "--tag", "docs,web", "--owner", "@bob")
    tt("set", "3", "--dep", "BACK-2", "--priority", "medium")
    tt("set", "back-1", "--done")

    assert sorted(path.name for path in (repo / "backlog" / "tasks").iterdir()) == [
        "back-1 - Existing-one.md",
        "back-2 - Ship-the-thing.md",
        "back-3 - Write-the-docs.md",
    ]
    #: Lines of `backlog task view ID --plain`, by the id Backlog.md is given.
    expected = {
        "BACK-3": (
            "Task BACK-3 - Write the docs",
            "Status: ◒ In Progress",
            "Priority: Medium",
            "Assignee: @bob",
            "Labels: docs, web",
            "└─ BACK-2 - Ship: the thing! [To Do]",
        ),
        "back-2": (
            "Task BACK-2 - Ship: the thing!",
            "Status: ○ To Do",
            "Priority: High",
            "Assignee: @alice",
            "Labels: api",
            "Parent: BACK-1 - Existing one",
            "└─ BACK-1 - Existing one [completed]",
            "└─ BACK-3 - Write the docs [In Progress]",
        ),
        "BACK-1": ("Task BACK-1 - Existing one", "Status: ✔ Done"),
    }
    for task_id, lines in expected.items():
        view = backlog("task", "view", task_id, "--plain").splitlines()
        assert [line for line in lines if line not in view] == [], "\n".join(view)

    assert sections(backlog("task", "list", "--plain")) == {
        "To Do": ["[HIGH] BACK-2 - Ship: the thing!"],
        "In Progress": ["[MEDIUM] BACK-3 - Write the docs"],
        "Done": ["BACK-1 - Existing one"],
    }
    # tasktool's own table names the statuses as Backlog.md's list does.
    rows = tt("list", "--columns", "id,status").splitlines()[1:]
    assert dict(row.rstrip().split(maxsplit=1) for row in rows) == {
        "BACK-1": "Done",
        "BACK-2": "To Do",
        "BACK-3": "In Progress",
    }
    doctor = backlog("doctor")
    assert "No duplicate IDs, self-referential dependencies, or dependency cycles found." in doctor
    # Nothing was committed: Backlog.md's auto-commit stayed off.
    commits = subprocess.run(
        ["git", "rev-list", "--all"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert commits.stdout == ""
