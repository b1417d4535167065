"""A real git repository with real linked worktrees, and the CLI run inside any of them."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from tests.tasktool.conftest import task_text
from tests.tasktool.test_cli import DIAGNOSTIC, tasktool_group

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd)}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


class Repo:
    """``main`` (branch main) and linked worktrees added with :meth:`worktree`."""

    def __init__(self, base: Path, home: Path) -> None:
        self.base = base
        self.home = home
        self.main = base / "main"
        self.main.mkdir()
        git(self.main, "init", "-q", "-b", "main")
        (self.main / ".tasktool.yaml").write_text("dir: tasks\n", encoding="utf-8")
        self.write(self.main, "001", "Design", priority="high")
        self.write(self.main, "002", "Build", dependencies=["'001'"], priority="low")
        self.write(self.main, "003", "Ship", priority="medium")
        git(self.main, "add", "-A")
        git(self.main, "commit", "-q", "-m", "tasks")

    def worktree(self, name: str, *, branch: str | None = None) -> Path:
        path = self.base / name
        git(self.main, "worktree", "add", "-q", "-b", branch or name, str(path))
        return path

    def completed_sibling(self, name: str, branch: str, age: Callable[[Path], None]) -> Path:
        """A linked worktree where 001 is completed, both worktrees' task directories then
        dated back by ``age`` (settled: a scan of them has an identity)."""
        sibling = self.worktree(name, branch=branch)
        self.write(sibling, "001", "Design", status="completed")
        for worktree in (self.main, sibling):
            age(worktree / "tasks")
        return sibling

    @staticmethod
    def write(worktree: Path, task_id: str, title: str, **fields: object) -> Path:
        path = worktree / "tasks" / f"{task_id}-task.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(task_text(task_id, title, **fields), encoding="utf-8")
        return path


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    home = tmp_path / "home"
    home.mkdir()
    base = tmp_path / "repos"
    base.mkdir()
    return Repo(base, home)


Run = Callable[..., Result]


@pytest.fixture
def run(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> Run:
    """``run(cwd, *args, code=0)``: the CLI in ``cwd``; stderr holds only coded lines."""
    for name in [name for name in os.environ if name.startswith("TASKTOOL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(repo.home))
    group: click.Group = tasktool_group()

    def invoke(cwd: Path, *args: str, code: int = 0, env: dict[str, str] | None = None) -> Result:
        monkeypatch.chdir(cwd)
        result = CliRunner().invoke(
            group, list(args), prog_name="tasktool", catch_exceptions=False, env=env
        )
        assert "Traceback" not in result.stderr, result.stderr
        for line in result.stderr.splitlines():
            assert DIAGNOSTIC.fullmatch(line), f"uncoded stderr line: {line!r}"
        assert result.exit_code == code, (args, result.exit_code, result.stderr, result.stdout)
        return result

    return invoke


def as_json(result: Result) -> Any:
    return json.loads(result.stdout)
