"""Finding worktrees from git's administrative files, checked against ``git worktree list``."""

from __future__ import annotations

import shutil
from pathlib import Path

from tasktool.files.scanning.worktrees import discover_worktrees

from .conftest import Repo, git


def _porcelain(cwd: Path) -> set[tuple[str, str | None]]:
    found: set[tuple[str, str | None]] = set()
    path: str | None = None
    branch: str | None = None
    for line in [*git(cwd, "worktree", "list", "--porcelain").splitlines(), ""]:
        if line.startswith("worktree "):
            path, branch = line.removeprefix("worktree "), None
        elif line.startswith("branch refs/heads/"):
            branch = line.removeprefix("branch refs/heads/")
        elif not line and path is not None:
            found.add((path, branch))
            path = None
    return found


def test_a_plain_directory_and_a_single_worktree(repo: Repo, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert discover_worktrees(plain) is None
    alone = discover_worktrees(repo.main / "tasks")
    assert alone is not None
    assert alone.siblings == ()
    assert alone.current.path == str(repo.main)
    assert alone.root == str(repo.main)


def test_every_worktree_is_found_from_each_of_them(repo: Repo) -> None:
    a = repo.worktree("wt-a", branch="feature/a")
    b = repo.worktree("wt-b")
    git(b, "checkout", "-q", "--detach")
    expected = _porcelain(repo.main)
    assert len(expected) == 3
    for where in (repo.main, a / "tasks", b):
        found = discover_worktrees(where)
        assert found is not None
        everyone = {(w.path, w.branch) for w in (found.current, *found.siblings)}
        assert everyone == expected
        assert found.root == str(repo.main)  # one identity for the whole repository
    current = discover_worktrees(a)
    assert current is not None
    assert (current.current.path, current.current.branch) == (str(a), "feature/a")


def test_a_worktree_whose_folder_is_gone_is_skipped(repo: Repo) -> None:
    a = repo.worktree("wt-a")
    repo.worktree("wt-b")
    shutil.rmtree(a)
    found = discover_worktrees(repo.main)
    assert found is not None
    assert [w.path for w in found.siblings] == [str(repo.base / "wt-b")]
