"""A file's signature: one type, made in one module, that the parse cache, the walk, the
sibling index and the config cache all record the same way."""

from __future__ import annotations

import os
import time
from pathlib import Path

import tasktool
from tasktool.files.caches import signature
from tasktool.files.caches.cache import ParseCache
from tasktool.files.caches.sibling_index import read_index
from tasktool.files.scanning.scan import scan_tasks

SOURCE = Path(tasktool.__file__).parent
PAST = time.time() - 3600


def _task(path: Path, task_id: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nid: '{task_id}'\ntitle: Task {task_id}\n---\n", encoding="utf-8")
    os.utime(path, (PAST, PAST))
    return path


def test_joined_signatures_are_each_signature_in_turn(tmp_path: Path) -> None:
    paths = [_task(tmp_path / f"{n}-task.md", str(n)) for n in range(5)]
    stats = [os.stat(path) for path in paths]
    joined = signature.of_all(stats)
    assert joined == b"".join(map(signature.of, stats))
    assert [signature.at(joined, n) for n in range(5)] == list(map(signature.of, stats))
    assert len(joined) == 5 * signature.SIZE
    assert signature.mtime(signature.of(stats[0])) == stats[0].st_mtime_ns


def test_an_entry_changed_a_moment_ago_is_unsettled(tmp_path: Path) -> None:
    aged = _task(tmp_path / "1-task.md", "1")
    fresh = tmp_path / "2-task.md"
    fresh.write_text("---\nid: '2'\n---\n", encoding="utf-8")
    racy_after = time.time_ns() - signature.RACY_NS
    assert signature.settled(os.stat(aged), racy_after) == signature.of(os.stat(aged))
    assert signature.settled(os.stat(fresh), racy_after) == signature.UNSETTLED
    assert signature.UNSETTLED not in (signature.of(os.stat(aged)), signature.NOT_A_FILE)


def test_the_parse_cache_and_the_sibling_index_record_the_same_signature(
    tmp_path: Path,
) -> None:
    path = _task(tmp_path / "g" / "1-task.md", "1")
    os.utime(path.parent, (PAST, PAST))
    scan_tasks(tmp_path)
    cache = ParseCache.open(tmp_path)
    (folder,) = [folder for folder in cache.folders if len(folder)]
    expected = signature.of(os.stat(path))
    assert folder.signature(0) == expected
    store = tmp_path / ".tasktool" / "worktrees" / "index.msgpack"
    os.utime(tmp_path, (PAST, PAST))  # settled again after the cache's folder was made
    index = read_index(tmp_path, (), store)
    assert index.identity is not None
    assert expected in store.read_bytes()  # the index's signatures, joined as the cache's


def test_a_file_replaced_at_the_same_size_and_mtime_is_new_to_every_cache(
    tmp_path: Path,
) -> None:
    """Every reader of a file's fingerprint (the parse cache, the walk, the sibling index)
    takes the same one: a file atomically replaced by another of the same size and
    mtime is a changed file to each of them (they once packed ``stat`` three ways)."""
    path = _task(tmp_path / "g" / "1-task.md", "1")
    os.utime(path.parent, (PAST, PAST))
    store = tmp_path / ".tasktool" / "worktrees" / "index.msgpack"
    assert [task.title for task in scan_tasks(tmp_path).tasks] == ["Task 1"]
    os.utime(tmp_path, (PAST, PAST))  # settled again after the cache's folder was made
    before = read_index(tmp_path, (), store).identity
    assert before is not None
    replacement = path.with_name("1-task.md.new")
    replacement.write_text("---\nid: '1'\ntitle: Task X\n---\n", encoding="utf-8")
    assert replacement.stat().st_size == path.stat().st_size
    os.utime(replacement, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns))
    os.replace(replacement, path)
    os.utime(path.parent, (PAST, PAST))
    assert [task.title for task in scan_tasks(tmp_path).tasks] == ["Task X"]
    os.utime(tmp_path, (PAST, PAST))
    after = read_index(tmp_path, (), store).identity
    assert after is not None
    assert after != before
