"""Scanning: the skip list, ignore, archive, groups and the parse cache."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest

from tasktool.files.caches.cache import ParseCache
from tasktool.files.scanning.scan import scan_tasks
from tests.tasktool.cache_entries import cached_entries, read_bodies, store_entries

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tests.tasktool.conftest import Project, TaskWriter


def age(root: Path, seconds: int = 60) -> None:
    """Move every file's mtime into the past: recent files are deliberately not cached."""
    past = time.time() - seconds
    for path in root.rglob("*.md"):
        os.utime(path, (past, past))


def cache_path(root: Path) -> Path:
    path = ParseCache.open(root).path
    assert path is not None
    return path


def columns_kept(root: Path) -> dict[str, tuple[int, int]]:
    """Each rows file's columns of ids in ``root``'s cache, and the file's inode and mtime."""
    return {
        path.name: (path.stat().st_ino, path.stat().st_mtime_ns)
        for path in cache_path(root).parent.glob("rows-*.ids.msgpack")
    }


def columns_named(names: Iterable[str]) -> set[str]:
    """The names of the columns of these rows files (``""``: a folder without one)."""
    return {name.replace(".msgpack", ".ids.msgpack") for name in names if name}


def ids(root: Path, ignore: tuple[str, ...] = (), **kw: bool) -> list[str]:
    return [task.id for task in scan_tasks(root, ignore, **kw).tasks]


def test_skip_list_hidden_and_ignore(project: Project, write_task: TaskWriter) -> None:
    write_task("1")
    for folder in (
        "node_modules",
        "vendor",
        "dist",
        "build",
        ".next",
        ".nuxt",
        "out",
        "target",
        "__pycache__",
        ".hidden",
        "generated",
        "deep/skipme",
    ):
        write_task(f"x-{folder.replace('/', '-')}", where=folder)
    write_task("2", where="deep")
    assert ids(project.root, ("generated", "deep/skipme")) == ["1", "2"]


def test_natural_order_groups_and_archive(project: Project, write_task: TaskWriter) -> None:
    write_task("10", where="backend")
    write_task("9")
    write_task("2", where="archive/backend", status="completed")
    result = scan_tasks(project.root)
    assert [(t.id, t.group) for t in result.tasks] == [("9", None), ("10", "backend")]
    assert [(t.id, t.group, t.archived) for t in result.archived] == [("2", "backend", True)]
    assert result.tasks[0].file_path == str(project.root / "9-task.md")


@pytest.mark.parametrize("other", [None, "T-3"])
def test_all_digit_ids_sort_as_the_natural_key_does(
    project: Project, write_task: TaskWriter, other: str | None
) -> None:
    """The cold scan sorts all-digit ids by their number (a cheaper key than the natural
    key); with another id among them, by the natural key: the same order either way,
    ties (``010`` and ``10``) by file."""
    from tasktool.model.task import natural_key

    for task_id, where in (("10", "b"), ("010", "a"), ("9", "c"), ("100", "a"), ("0", "")):
        write_task(task_id, where=where)
    if other is not None:
        write_task(other)
    tasks = scan_tasks(project.root, use_cache=False).tasks
    found = [(task.id, task.file_path) for task in tasks]
    assert found == sorted(found, key=lambda pair: (natural_key(pair[0]), pair[1]))
    assert [task.id for task in tasks][:4] == ["0", "9", "010", "10"]


def test_all_digit_ids_of_distinct_numbers_sort_by_number(
    project: Project, write_task: TaskWriter
) -> None:
    """No two ids one number: the number alone orders them (files never compared)."""
    for task_id, where in (("10", "b"), ("9", "c"), ("0100", "a"), ("0", ""), ("11", "a")):
        write_task(task_id, where=where)
    tasks = scan_tasks(project.root, use_cache=False).tasks
    assert [task.id for task in tasks] == ["0", "9", "10", "11", "0100"]


def test_broken_task_like_file_is_reported(project: Project, write_task: TaskWriter) -> None:
    write_task("1")
    project.write("2-bad.md", "---\nid: 2\ntitle: [oops\n---\n")
    project.write("README.md", "# not a task\n")
    result = scan_tasks(project.root)
    assert [t.id for t in result.tasks] == ["1"]
    assert [d.file for d in result.broken] == [str(project.root / "2-bad.md")]


def test_warm_scan_uses_the_cache_and_sees_changes(
    project: Project, write_task: TaskWriter
) -> None:
    write_task("1", status="pending")
    write_task("2")
    age(project.root)
    first = scan_tasks(project.root)
    assert len(cached_entries(project.root)) == 2
    assert (project.root / ".tasktool" / ".gitignore").read_text() == "*\n"
    # Same size, same mtime: still detected (the write gives a new inode / ctime).
    path = project.root / "1-task.md"
    stat = path.stat()
    text = path.read_text().replace("pending", "blocked")
    temp = path.with_name("tmp.txt")
    temp.write_text(text)
    os.replace(temp, path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = scan_tasks(project.root)
    assert first.tasks[0].status == "pending"
    assert second.tasks[0].status == "blocked"
    (project.root / "2-task.md").unlink()
    assert ids(project.root) == ["1"]


def test_corrupt_cache_is_rebuilt(project: Project, write_task: TaskWriter) -> None:
    write_task("1")
    age(project.root)
    scan_tasks(project.root)
    cache_file = cache_path(project.root)
    cache_file.write_bytes(b"\x00garbage")
    assert ids(project.root) == ["1"]
    assert cached_entries(project.root)


def test_uncached_scan_writes_nothing(project: Project, write_task: TaskWriter) -> None:
    write_task("1")
    assert ids(project.root, use_cache=False) == ["1"]
    assert not (project.root / ".tasktool").exists()


def test_recently_modified_files_are_not_cached(project: Project, write_task: TaskWriter) -> None:
    write_task("1")
    write_task("2")
    age(project.root)
    write_task("3")  # just written: its timestamp tick may still change under us
    assert ids(project.root) == ["1", "2", "3"]
    cached = cached_entries(project.root)
    assert sorted(Path(path).name for path in cached) == ["1-task.md", "2-task.md"]


def test_cache_is_rewritten_only_when_something_changed(
    project: Project, write_task: TaskWriter
) -> None:
    write_task("1")
    write_task("2")
    age(project.root)
    scan_tasks(project.root)
    cache_file = cache_path(project.root)
    inode = cache_file.stat().st_ino
    scan_tasks(project.root)
    write_task("3")  # racy: parsed, not cached, no rewrite
    assert ids(project.root) == ["1", "2", "3"]
    assert cache_file.stat().st_ino == inode
    (project.root / "2-task.md").unlink()
    assert ids(project.root) == ["1", "3"]
    assert cache_file.stat().st_ino != inode
    assert sorted(Path(p).name for p in cached_entries(project.root)) == ["1-task.md"]


def test_warm_scan_returns_the_cold_order(project: Project, write_task: TaskWriter) -> None:
    for task_id in ("10", "9", "b", "A-2", "A-10"):
        write_task(task_id, where="archive" if task_id == "b" else "")
    project.write("broken-2.md", "---\nid: z2\nstatus: [\n---\n")
    project.write("broken-1.md", "---\nid: z1\nstatus: [\n---\n")
    project.write("notes.md", "# not a task\n")
    age(project.root)
    cold = scan_tasks(project.root, use_cache=False)
    assert [t.id for t in cold.tasks] == ["9", "10", "A-2", "A-10"]
    first = scan_tasks(project.root)  # writes the cache
    warm = scan_tasks(project.root)  # every entry from the cache, nothing sorted
    assert first == cold
    assert read_bodies(warm) == cold
    assert [d.task_id for d in warm.broken] == ["z1", "z2"]
    write_task("1")
    age(project.root)
    assert [t.id for t in scan_tasks(project.root).tasks] == ["1", "9", "10", "A-2", "A-10"]
    assert [t.id for t in scan_tasks(project.root).tasks] == ["1", "9", "10", "A-2", "A-10"]


def test_warm_scan_takes_unchanged_files_from_the_cache(
    project: Project, write_task: TaskWriter
) -> None:
    write_task("1")
    age(project.root)
    parsed = scan_tasks(project.root).tasks[0]
    ((path, entry),) = cached_entries(project.root).items()
    assert entry.task is not None
    planted = msgspec.structs.replace(entry.task, title="from the cache")
    store_entries(project.root, {path: msgspec.structs.replace(entry, task=planted)})
    # Same stat signature: the file is not read again, so the planted entry shows.
    assert [t.title for t in scan_tasks(project.root).tasks] == ["from the cache"]
    age(project.root, seconds=30)  # a new mtime: the file is parsed again
    assert [t.title for t in scan_tasks(project.root).tasks] == [parsed.title]


def test_a_cache_from_another_version_is_ignored_and_removed(
    project: Project, write_task: TaskWriter
) -> None:
    write_task("1")
    age(project.root)
    scan_tasks(project.root)
    old = cache_path(project.root).with_name("tasks-2.msgpack")
    old.write_bytes(msgspec.msgpack.encode({"format": "tasks-2", "entries": {}}))
    cache_path(project.root).write_bytes(msgspec.msgpack.encode({"format": "tasks-9"}))
    assert ids(project.root) == ["1"]
    assert not old.exists()
    assert cached_entries(project.root)


def test_a_walk_by_path_finds_what_a_walk_by_descriptor_finds(
    project: Project, write_task: TaskWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where folders cannot be listed through a descriptor (Windows), they are listed by
    path, with the same names and signatures."""
    from tasktool.files.scanning import walk as walking

    for number, where in enumerate(["", "backend", "backend/archive", "deep/er"], start=1):
        write_task(str(number), where=where)
    by_descriptor = walking.walk(project.root)
    assert walking._STAT_IN_FOLDER  # this machine stats by descriptor
    monkeypatch.setattr(walking, "_STAT_IN_FOLDER", False)
    assert walking.walk(project.root) == by_descriptor
    assert sum(len(folder) for folder, _relative in by_descriptor) == 4
