"""The sibling status reader: trusted only while the parse cache answers for every file,
and the overlay through it gives what the full scan gives."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tasktool.files.scan import scan_tasks
from tasktool.files.statuses import scan_statuses
from tests.tasktool.conftest import task_text

from .conftest import Repo, Run, as_json


def _age(folder: Path) -> None:
    past = time.time() - 3600
    for path in folder.rglob("*.md"):
        os.utime(path, (past, past))


def _tasks(folder: Path) -> Path:
    (folder / "archive").mkdir(parents=True)
    (folder / "1-a.md").write_text(task_text("1", "A", status="in-progress"))
    (folder / "2-b.md").write_text(task_text("2", "B"))
    (folder / "archive" / "3-c.md").write_text(task_text("3", "C", status="completed"))
    (folder / "notes.md").write_text("# not a task\n")
    _age(folder)
    return folder


def test_statuses_come_from_a_current_cache_only(tmp_path: Path) -> None:
    folder = _tasks(tmp_path / "tasks")
    assert scan_statuses(folder) is None  # no cache yet
    scan_tasks(folder)
    statuses = scan_statuses(folder)
    assert statuses is not None
    assert sorted((s.id, s.status, s.archived) for s in statuses) == [
        ("1", "in-progress", False),
        ("2", "pending", False),
        ("3", "completed", True),
    ]
    (folder / "2-b.md").write_text(task_text("2", "B", status="completed"))
    assert scan_statuses(folder) is None  # a changed file
    _age(folder)  # files written a moment ago are not cached (racy timestamps)
    scan_tasks(folder)
    assert scan_statuses(folder) is not None
    (folder / "4-d.md").write_text(task_text("4", "D"))
    assert scan_statuses(folder) is None  # a new file
    (folder / "4-d.md").unlink()
    assert scan_statuses(folder) is not None
    (folder / "1-a.md").unlink()
    assert scan_statuses(folder) is None  # a file gone


def test_the_overlay_through_warm_sibling_caches(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a", branch="feature-a")
    run(a, "set", "001", "--status", "in-progress")
    Repo.write(a, "005", "Only in A", priority="high", tags=["x"])
    _age(a / "tasks")
    first = as_json(run(repo.main, "list", "--format", "json"))  # full scan: writes the cache
    assert scan_statuses(a / "tasks") is not None
    second = as_json(run(repo.main, "list", "--format", "json"))  # the status reader
    assert first == second
    only = next(task for task in second if task["id"] == "005")
    assert (only["title"], only["tags"], only["sibling_only"]) == ("Only in A", ["x"], True)
    assert next(task for task in second if task["id"] == "001")["status"] == "in-progress"
