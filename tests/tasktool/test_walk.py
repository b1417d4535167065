"""The walk: folders unchanged since the cache are not listed again, and past a size the
files are stat-ed by two processes; either way it finds what a plain walk finds."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tasktool.files.caches import signature
from tasktool.files.caches.cache import ParseCache
from tasktool.files.scanning import forked
from tasktool.files.scanning import walk as walking
from tasktool.files.scanning.scan import scan_tasks
from tasktool.files.scanning.walk import walk
from tests.tasktool.cache_entries import read_bodies

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project, TaskWriter

PAST_NS = (time.time_ns() // 1_000_000_000 - 3600) * 1_000_000_000


def settle(root: Path, offset: int = 0) -> None:
    """Date every file and folder under ``root`` an hour back (``offset`` ns later)."""
    for path in [root, *root.rglob("*")]:
        if path.name != ".tasktool" and ".tasktool" not in path.parts:
            os.utime(path, ns=(PAST_NS, PAST_NS + offset), follow_symlinks=False)


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders the walks list (by path or descriptor number)."""
    calls: list[str] = []
    original = walking._list

    def recording(folder: str | int, relative: str, ignored: frozenset[str]) -> object:
        calls.append(relative)
        return original(folder, relative, ignored)

    monkeypatch.setattr(walking, "_list", recording)
    return calls


def tree(project: Project, write_task: TaskWriter) -> None:
    for number, where in enumerate(["", "backend", "backend/archive", "deep/er", "deep"], 1):
        write_task(str(number), where=where)
    (project.root / ".tasktool").mkdir()  # the cache's: made now, the root would be racy
    settle(project.root)


def test_folders_unchanged_since_the_cache_are_not_listed(
    project: Project, write_task: TaskWriter, listed: list[str]
) -> None:
    tree(project, write_task)
    cold = scan_tasks(project.root, use_cache=False)
    assert read_bodies(scan_tasks(project.root)) == cold  # writes the cache
    listed.clear()
    assert read_bodies(scan_tasks(project.root)) == cold
    assert listed == []
    # A file made in one folder changes that folder's mtime: only it is listed again.
    write_task("6", where="deep/er")
    settle(project.root / "deep" / "er", offset=1)
    assert [task.id for task in scan_tasks(project.root).tasks] == ["1", "2", "4", "5", "6"]
    assert listed == ["deep/er"]


def test_a_folder_changed_a_moment_ago_is_listed_every_time(
    project: Project, write_task: TaskWriter, listed: list[str]
) -> None:
    tree(project, write_task)
    (project.root / "backend" / "recent").mkdir()  # both folders' mtimes are now
    scan_tasks(project.root)
    listed.clear()
    scan_tasks(project.root)
    assert listed == ["backend", "backend/recent"]


def test_a_dangling_link_that_comes_to_point_at_a_file_is_found(
    project: Project, write_task: TaskWriter, tmp_path: Path, listed: list[str]
) -> None:
    """A name that is no file is left out; its folder is listed every time, since the
    link's target can appear without the folder changing."""
    tree(project, write_task)
    target = tmp_path / "elsewhere.md"
    (project.root / "backend" / "7-link.md").symlink_to(target)
    settle(project.root)
    assert "7" not in [task.id for task in scan_tasks(project.root).tasks]
    target.write_text("---\nid: '7'\ntitle: Linked\n---\n")
    os.utime(target, ns=(PAST_NS, PAST_NS))
    listed.clear()
    assert "7" in [task.id for task in scan_tasks(project.root).tasks]
    assert listed == ["backend"]


def test_another_ignore_setting_lists_the_folders_again(
    project: Project, write_task: TaskWriter, listed: list[str]
) -> None:
    tree(project, write_task)
    scan_tasks(project.root)
    listed.clear()
    assert [task.id for task in scan_tasks(project.root, ("deep",)).tasks] == ["1", "2"]
    assert "" in listed
    assert [task.id for task in scan_tasks(project.root, ("deep",)).tasks] == ["1", "2"]
    assert [task.id for task in scan_tasks(project.root).tasks] == ["1", "2", "4", "5"]


def test_a_cache_whose_folders_changed_signature_is_rewritten(
    project: Project, write_task: TaskWriter, listed: list[str]
) -> None:
    """A folder changed with no task file changed (an editor's swap file made and gone)
    gets its new signature cached, or every later run would list it again."""
    tree(project, write_task)
    scan_tasks(project.root)
    swap = project.root / "deep" / ".1.md.swp"
    swap.write_text("x")
    swap.unlink()
    settle(project.root / "deep", offset=5)
    scan_tasks(project.root)
    listed.clear()
    scan_tasks(project.root)
    assert listed == []
    assert ParseCache.open(project.root).identity is not None


@pytest.fixture
def many_files(project: Project, write_task: TaskWriter) -> Path:
    for number in range(1, 61):
        write_task(str(number), where=("a", "b/c", "")[number % 3])
    os.mkfifo(project.root / "a" / "fifo.md")  # listed, stat-ed, no file
    settle(project.root)
    return project.root


def test_two_processes_stat_what_one_does(
    many_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = walk(many_files)
    delivered: list[bytes | None] = []

    class Recorded(forked.Child):
        """A child whose bytes are recorded: a child that failed would leave its share to
        this process and the walk would still be right."""

        def result(self) -> bytes | None:
            delivered.append(super().result())
            return delivered[-1]

    monkeypatch.setattr(walking, "Child", Recorded)
    monkeypatch.setattr(walking, "STAT_FORK_FROM", 10)
    monkeypatch.setattr(walking, "usable_cores", lambda: 2)
    assert walk(many_files) == alone
    assert len(delivered) == 1
    assert delivered[0] is not None
    assert len(delivered[0]) == 31 * signature.SIZE  # the second half of 61 names (the fifo too)
    assert sum(len(folder) for folder, _ in alone) == 60


def test_a_child_that_fails_leaves_its_share_to_this_process(
    many_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = walk(many_files)
    here = os.getpid()
    signatures = walking._signatures

    def failing_in_a_child(shares: list[tuple[str, list[str]]]) -> bytes:
        if os.getpid() != here:
            raise RuntimeError("the child's share fails")
        return signatures(shares)

    monkeypatch.setattr(walking, "_signatures", failing_in_a_child)
    monkeypatch.setattr(walking, "STAT_FORK_FROM", 10)
    monkeypatch.setattr(walking, "usable_cores", lambda: 2)
    assert walk(many_files) == alone


def test_a_child_returns_its_bytes_or_none() -> None:
    assert forked.Child(lambda: b"x" * 200_000).result() == b"x" * 200_000  # past a pipe's buffer

    def fails() -> bytes:
        raise RuntimeError("no")

    assert forked.Child(fails).result() is None


def test_no_split_while_another_thread_runs() -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert forked.usable_cores() == 1
    finally:
        release.set()
        other.join()
