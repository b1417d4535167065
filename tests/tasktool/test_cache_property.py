"""The parse cache never changes an answer: after any sequence of edits, a warm scan (with or
without bodies) returns exactly what a cold, uncached scan returns."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from tasktool.files.cache import ParseCache
from tasktool.files.scan import ScanResult, scan_tasks, with_body

PAST_NS = (time.time_ns() // 1_000_000_000 - 3600) * 1_000_000_000  # outside the racy window
STATUSES = ("pending", "blocked", "completed")


def text(task_id: str, status: str, body: str) -> str:
    return f"---\nid: '{task_id}'\ntitle: Task {task_id}\nstatus: {status}\n---\n{body}\n"


def stripped(result: ScanResult) -> ScanResult:
    """The result as a scan without bodies may give it (every body empty)."""
    empty = [msgspec.structs.replace(task, body="") for task in result.tasks]
    gone = [msgspec.structs.replace(task, body="") for task in result.archived]
    return msgspec.structs.replace(result, tasks=tuple(empty), archived=tuple(gone))


operation = st.one_of(
    st.tuples(st.just("edit"), st.integers(0, 7), st.sampled_from(STATUSES), st.booleans()),
    st.tuples(st.just("add"), st.integers(0, 7), st.sampled_from(("", "g", "archive/g"))),
    st.tuples(st.just("remove"), st.integers(0, 7)),
    st.tuples(st.just("rename"), st.integers(0, 7), st.sampled_from(("", "g", "archive/h"))),
    st.tuples(st.just("break"), st.integers(0, 7)),
    st.tuples(st.just("cache"), st.sampled_from(("corrupt", "truncate", "bodies", "delete"))),
    st.tuples(st.just("scan"), st.booleans()),
)


def apply(root: Path, op: tuple[object, ...], counter: list[int]) -> None:
    files = sorted(root.rglob("*.md"))
    kind = op[0]
    if kind == "add":
        counter[0] += 1
        where = root / str(op[2])
        where.mkdir(parents=True, exist_ok=True)
        path = where / f"{counter[0]}-new.md"
        path.write_text(text(str(counter[0]), "pending", "new body"))
        os.utime(path, ns=(PAST_NS, PAST_NS))
    elif kind == "cache":
        cache = root / ".tasktool" / "cache"
        for found in sorted(cache.glob("*.msgpack")) if cache.is_dir() else []:
            wanted = op[1] == "bodies" and found.name.startswith("bodies-")
            if op[1] == "corrupt" or wanted:
                found.write_bytes(b"\x93garbage")
            elif op[1] == "truncate":
                found.write_bytes(found.read_bytes()[: found.stat().st_size // 2])
            elif op[1] == "delete":
                found.unlink()
    elif kind == "scan":
        scan_tasks(root, bodies=bool(op[1]))
    elif files:
        path = files[int(str(op[1])) % len(files)]
        if kind == "edit":
            # Same size, same mtime: only ctime (and with the rename, the inode) tells.
            stat = path.stat()
            old = path.read_text()
            new = old
            for status in STATUSES:
                new = new.replace(f"status: {status}\n", f"status: {op[2]}\n")
            new = new.replace("body", "BODY") if op[3] else new
            if op[3]:
                temp = path.with_name(".swap")
                temp.write_text(new)
                os.replace(temp, path)
            else:
                path.write_text(new)
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        elif kind == "remove":
            path.unlink()
        elif kind == "rename":
            where = root / str(op[2])
            where.mkdir(parents=True, exist_ok=True)
            os.replace(path, where / f"moved-{path.name}")
        elif kind == "break":
            path.write_text("---\nid: 99\ntitle: [oops\n---\n")
            os.utime(path, ns=(PAST_NS, PAST_NS))


@settings(max_examples=60, deadline=None)
@given(st.lists(operation, max_size=12))
def test_warm_scans_always_equal_the_cold_scan(ops: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for n in range(4):
            (root / f"{n}-task.md").write_text(text(str(n), "pending", f"body {n}"))
            os.utime(root / f"{n}-task.md", ns=(PAST_NS, PAST_NS))
        counter = [100]
        for op in ops:
            apply(root, op, counter)
            cold = scan_tasks(root, use_cache=False)
            lean = scan_tasks(root, bodies=False)
            assert stripped(lean) == stripped(cold)
            assert [with_body(root, task) for task in lean.tasks] == list(cold.tasks)
            assert scan_tasks(root) == cold
            assert scan_tasks(root) == cold  # from the cache the previous scan wrote


def test_two_processes_writing_the_cache_at_once_never_mix(tmp_path: Path) -> None:
    """Writers racing (threads stand in for processes: each store is whole-file renames)
    leave heads and bodies from the same writer, or a cache that is ignored."""
    for n in range(50):
        path = tmp_path / f"{n}-task.md"
        path.write_text(text(str(n), "pending", f"body {n}"))
        os.utime(path, ns=(PAST_NS, PAST_NS))
    cold = scan_tasks(tmp_path, use_cache=False)
    scan_tasks(tmp_path)  # writes the cache
    entries = ParseCache.open(tmp_path).entries
    other = {
        key: msgspec.structs.replace(entry, task=msgspec.structs.replace(entry.task, body="other"))
        for key, entry in entries.items()
        if entry.task is not None
    }
    start = threading.Barrier(2)

    def write(which: dict[str, object]) -> None:
        start.wait()
        for _ in range(20):
            ParseCache.open(tmp_path, bodies=False).store(which)  # type: ignore[arg-type]

    threads = [threading.Thread(target=write, args=(e,)) for e in (entries, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = {e.task.body for e in ParseCache.open(tmp_path).entries.values() if e.task}
    assert found in (set(), {"other"}, {task.body for task in cold.tasks})
    assert stripped(scan_tasks(tmp_path, bodies=False)) == stripped(cold)
