"""The parse cache never changes an answer: after any sequence of edits, a warm scan returns
exactly what a cold, uncached scan returns, bodies (read from the cache's body stores,
or from the files when a store is damaged or gone) included."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from tasktool.files.parsing import read
from tasktool.files.parsing.read import READ_AHEAD_FROM
from tasktool.files.scanning.scan import read_entry, scan_source, scan_tasks
from tasktool.model.task import Task
from tests.tasktool.cache_entries import CacheEntry, cached_entries, read_bodies, store_entries

PAST_NS = (time.time_ns() // 1_000_000_000 - 3600) * 1_000_000_000  # outside the racy window
STATUSES = ("pending", "blocked", "completed")


def text(task_id: str, status: str, body: str) -> str:
    return f"---\nid: '{task_id}'\ntitle: Task {task_id}\nstatus: {status}\n---\n{body}\n"


operation = st.one_of(
    st.tuples(st.just("edit"), st.integers(0, 7), st.sampled_from(STATUSES), st.booleans()),
    st.tuples(st.just("add"), st.integers(0, 7), st.sampled_from(("", "g", "archive/g"))),
    st.tuples(st.just("remove"), st.integers(0, 7)),
    st.tuples(st.just("rename"), st.integers(0, 7), st.sampled_from(("", "g", "archive/h"))),
    st.tuples(st.just("break"), st.integers(0, 7)),
    st.tuples(st.just("racy"), st.integers(0, 7), st.sampled_from(STATUSES)),
    st.tuples(
        st.just("cache"),
        st.sampled_from(("corrupt", "truncate", "bodies", "bodies-gone", "order", "delete")),
    ),
    st.tuples(st.just("scan")),
)


def damage_cache(root: Path, how: str) -> None:
    cache = root / ".tasktool" / "cache"
    stores = sorted(cache.glob("*.bodies")) if cache.is_dir() else []
    for found in sorted(cache.glob("*.msgpack")) + stores if cache.is_dir() else []:
        bodies = found.suffix == ".bodies"
        if how == "order" and found.name.startswith("tasks-"):
            # Well-formed, but the result order names rows that do not exist.
            head = msgspec.msgpack.decode(found.read_bytes())
            head[6] = [*head[6], 10**6]  # format, token, ignore, folders, files, stores, tasks
            found.write_bytes(msgspec.msgpack.encode(head))
        elif how == "bodies-gone" and bodies:
            found.unlink()
        elif how == "corrupt" or (how == "bodies" and bodies):
            found.write_bytes(b"\x93garbage")
        elif how == "truncate":
            found.write_bytes(found.read_bytes()[: found.stat().st_size // 2])
        elif how == "delete":
            found.unlink()


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
        damage_cache(root, str(op[1]))
    elif kind == "scan":
        scan_tasks(root)
    elif files:
        path = files[int(str(op[1])) % len(files)]
        if kind == "racy":
            # Written just now: within the racy window, so parsed but never cached.
            path.write_text(text(f"r{op[1]}", str(op[2]), "racy body"))
        elif kind == "edit":
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


def settle_folders(root: Path, counter: list[int]) -> None:
    """Date every folder changed a moment ago into the past, each to a time of its own:
    as time passing does, so that unchanged folders are taken from the cache unlisted."""
    for folder in [root, *(path for path in root.rglob("*") if path.is_dir())]:
        if folder.stat().st_mtime_ns > PAST_NS + 10**12:
            counter[0] += 1
            os.utime(folder, ns=(PAST_NS, PAST_NS + counter[0]))


@pytest.mark.parametrize("settled", [False, True], ids=["racy-folders", "settled-folders"])
@settings(max_examples=80, deadline=None)
@given(ops=st.lists(operation, max_size=12))
def test_warm_scans_always_equal_the_cold_scan(
    settled: bool, ops: list[tuple[object, ...]]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for n in range(4):
            (root / f"{n}-task.md").write_text(text(str(n), "pending", f"body {n}"))
            os.utime(root / f"{n}-task.md", ns=(PAST_NS, PAST_NS))
        counter = [100]
        for op in ops:
            apply(root, op, counter)
            if settled:
                settle_folders(root, counter)
            cold = scan_tasks(root, use_cache=False)
            assert read_bodies(scan_tasks(root)) == cold
            assert read_bodies(scan_tasks(root)) == cold  # from the cache the scan wrote


def test_two_processes_writing_the_cache_at_once_never_mix(tmp_path: Path) -> None:
    """Writers racing (threads stand in for processes: each store is whole-file renames)
    leave heads and bodies from the same writer, or a cache that is ignored."""
    for n in range(50):
        path = tmp_path / f"{n}-task.md"
        path.write_text(text(str(n), "pending", f"body {n}"))
        os.utime(path, ns=(PAST_NS, PAST_NS))
    cold = scan_tasks(tmp_path, use_cache=False)
    scan_tasks(tmp_path)  # writes the cache
    entries = cached_entries(tmp_path)
    other = {
        key: msgspec.structs.replace(
            entry, task=msgspec.structs.replace(entry.task, raw_body="other")
        )
        for key, entry in entries.items()
        if entry.task is not None
    }
    start = threading.Barrier(2)

    def write(which: dict[str, CacheEntry]) -> None:
        start.wait()
        for _ in range(20):
            store_entries(tmp_path, which)

    threads = [threading.Thread(target=write, args=(e,)) for e in (entries, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = {e.task.raw_body for e in cached_entries(tmp_path).values() if e.task}
    assert found in (set(), {"other"}, {task.raw_body for task in cold.tasks})
    warm = scan_source(tmp_path)  # the files unchanged: "other" stands for what they hold
    bodies = {warm.bodies.read(task) for task in warm.result.tasks}
    assert bodies in ({"other"}, {task.raw_body for task in cold.tasks})
    warm_tasks = warm.result.tasks
    assert [replace(t, raw_body="") for t in warm_tasks] == [
        replace(t, raw_body="") for t in cold.tasks
    ]


#: A process that scans 15 times, reading every body every second time.
SCANNER = (
    "import sys; from pathlib import Path; from tasktool.files.scanning.scan import scan_source\n"
    "for n in range(15):\n"
    "    scan = scan_source(Path(sys.argv[1]))\n"
    "    [scan.bodies.read(t) for t in scan.result.tasks if n % 2]"
)


def test_two_processes_scanning_at_once_leave_a_cache_that_answers_as_cold(
    tmp_path: Path,
) -> None:
    """Real processes, two scanning at once, each rewriting the cache (a file changes
    between rounds) and reading the bodies; afterwards warm scans still equal the cold
    one."""
    for n in range(80):
        path = tmp_path / ("archive" if n % 9 == 0 else "g") / f"{n}-task.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text(str(n), STATUSES[n % 3], f"body {n}"))
        os.utime(path, ns=(PAST_NS, PAST_NS))
    for round_number in range(3):
        changed = tmp_path / "g" / f"{round_number + 1}-task.md"
        changed.write_text(text(str(round_number + 1), "completed", f"round {round_number}"))
        os.utime(changed, ns=(PAST_NS + round_number, PAST_NS + round_number))
        workers = [
            subprocess.Popen([sys.executable, "-c", SCANNER, str(tmp_path)]) for _ in range(2)
        ]
        assert [worker.wait(timeout=120) for worker in workers] == [0, 0]
        cold = scan_tasks(tmp_path, use_cache=False)
        assert read_bodies(scan_tasks(tmp_path)) == cold
        assert read_bodies(scan_tasks(tmp_path)) == cold


@pytest.mark.parametrize("slow_read_ns", [0, 10**12], ids=["threads", "one-by-one"])
def test_many_changed_files_are_read_ahead_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow_read_ns: int
) -> None:
    """Past the read-ahead threshold slow reads go to threads (0: every read counts as
    slow): the result, unreadable and non-UTF-8 files included, is the one reading them
    one by one gives."""
    monkeypatch.setattr(read, "SLOW_READ_NS", slow_read_ns)
    for n in range(3 * READ_AHEAD_FROM):
        (tmp_path / f"{n}-task.md").write_text(text(str(n), "pending", f"body {n}"))
    (tmp_path / "latin.md").write_bytes(b"---\nid: '900'\ntitle: caf\xe9\n---\n")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    (tmp_path / "loop.md").symlink_to(tmp_path / "loop.md")
    threaded = scan_tasks(tmp_path, use_cache=False)
    one_by_one = sorted(
        (read_entry(str(tmp_path), str(path), "") for path in tmp_path.glob("*.md")),
        key=lambda entry: entry.file_path if isinstance(entry, Task) else str(entry),
    )
    assert len(threaded.tasks) == 3 * READ_AHEAD_FROM
    assert sorted(threaded.tasks, key=lambda task: task.file_path) == [
        entry for entry in one_by_one if isinstance(entry, Task)
    ]
    assert [problem.task_id for problem in threaded.broken] == ["900"]
