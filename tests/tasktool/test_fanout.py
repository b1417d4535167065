"""Parsing on every core: forked workers give exactly the one-process rows, in order."""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest
from msgspec.structs import replace

from tasktool.files.caches.cache_files import Row
from tasktool.files.parsing.read import parse_files
from tasktool.files.scanning import fanout
from tasktool.files.scanning.scan import Scan, ScanResult, scan_source, scan_tasks
from tasktool.model.task import Task

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project, TaskWriter


def numbered_by_process(items: Sequence[int]) -> list[Row]:
    """Each item's row names it (``broken.message``) and the process that made it (``broken.file``):
    module level, so a worker can unpickle it."""
    from tasktool.model.diagnostics import Diagnostic

    pid = str(os.getpid())
    return [
        Row(broken=Diagnostic(severity="error", code="pid", message=str(item), file=pid))
        for item in items
    ]


@pytest.mark.parametrize("workers", [2, 3])
def test_each_process_parses_a_contiguous_share_and_the_order_is_kept(workers: int) -> None:
    rows = fanout.parse_rows(numbered_by_process, list(range(1000)), workers=workers)
    assert [row.broken.message for row in rows if row.broken] == list(map(str, range(1000)))
    made_by = [row.broken.file for row in rows if row.broken is not None]
    first = -(-1000 // workers)
    assert set(made_by[:first]) == {str(os.getpid())}  # the first share: here
    # The others in forked workers (a pool may give one worker two shares).
    assert str(os.getpid()) not in made_by[first:]
    assert 2 <= len(set(made_by)) <= workers


def cores_to_use() -> int:
    """The workers a large parse should get here: every usable core, unless a thread left
    over from another test in this process rules out forking."""
    if threading.active_count() > 1:
        return 1
    return min(len(os.sched_getaffinity(0)), fanout.MAX_WORKERS)


def files_of_every_kind(project: Project, write_task: TaskWriter) -> list[tuple[str, str]]:
    for number in range(1, 40):
        write_task(str(number), where="backend" if number % 3 else "archive")
    (project.root / "broken.md").write_text("---\nid: 90\ntitle: [unclosed\n---\n")
    (project.root / "latin1.md").write_bytes(b"---\nid: 91\ntitle: caf\xe9\n---\n")
    (project.root / "notes.md").write_text("# just notes\n")
    files = []
    for path in sorted(project.root.rglob("*.md")):
        relative = os.path.relpath(path.parent, project.root)
        files.append((str(path), "" if relative == "." else relative))
    return files


def test_forked_parse_equals_the_one_process_parse(
    project: Project, write_task: TaskWriter
) -> None:
    files = files_of_every_kind(project, write_task)
    parse = functools.partial(parse_files, str(project.root))
    alone = parse(files)
    assert any(row.broken is not None for row in alone)  # the broken files are in the set
    assert fanout.parse_rows(parse, files, workers=2) == alone


def test_a_large_cold_scan_goes_through_the_workers(
    project: Project, write_task: TaskWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    files_of_every_kind(project, write_task)
    alone = scan_tasks(project.root, use_cache=False)
    monkeypatch.setattr(fanout, "PARALLEL_FROM", 10)
    decided: list[int] = []
    decide = fanout.default_workers

    def recorded(count: int) -> int:
        decided.append(decide(count))
        return decided[-1]

    monkeypatch.setattr(fanout, "default_workers", recorded)
    assert scan_tasks(project.root, use_cache=False) == alone
    assert decided == [cores_to_use()]


def test_no_fork_below_the_threshold_or_while_another_thread_runs() -> None:
    assert fanout.default_workers(fanout.PARALLEL_FROM - 1) == 1
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert fanout.default_workers(fanout.PARALLEL_FROM * 10) == 1
    finally:
        release.set()
        other.join()


def test_every_core_is_used_past_the_threshold_when_alone() -> None:
    assert fanout.default_workers(fanout.PARALLEL_FROM) == cores_to_use()


def test_one_item_or_one_worker_stays_in_this_process() -> None:
    rows = fanout.parse_rows(numbered_by_process, [7], workers=4)
    assert rows[0].broken is not None
    assert rows[0].broken.file == str(os.getpid())
    rows = fanout.parse_rows(numbered_by_process, list(range(5)), workers=1)
    assert {row.broken.file for row in rows if row.broken} == {str(os.getpid())}


def test_when_no_worker_can_be_forked_the_parse_runs_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process limit or no memory for a fork is not an error of the scan: the rows are
    the same, parsed in this process."""

    def refuse() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    rows = fanout.parse_rows(numbered_by_process, list(range(100)), workers=2)
    assert [row.broken.message for row in rows if row.broken] == list(map(str, range(100)))
    assert {row.broken.file for row in rows if row.broken} == {str(os.getpid())}


def _seen_by_child(rows: list[Row]) -> bytes:
    """What ``then`` saw, from which process: module level, run in the forked child."""
    return json.dumps([os.getpid(), [row.broken.message for row in rows if row.broken]]).encode()


@pytest.mark.parametrize("workers", [2, 3])
def test_the_first_child_runs_what_follows_the_parse_on_every_row(workers: int) -> None:
    """A handoff: this process gets every row, and the first child runs ``then`` over all
    of them (this process's, its own, the other children's) in order."""
    rows, handoff = fanout.parse_handing_off(
        numbered_by_process, list(range(1000)), _seen_by_child, workers=workers
    )
    assert [row.broken.message for row in rows if row.broken] == list(map(str, range(1000)))
    assert handoff is not None
    result = handoff.result()
    assert result is not None
    pid, seen = json.loads(result)
    assert pid != os.getpid()
    assert seen == list(map(str, range(1000)))


def _fails(rows: list[Row]) -> bytes:
    raise RuntimeError("the cache cannot be written")


def test_a_child_that_fails_after_the_parse_gives_no_result() -> None:
    rows, handoff = fanout.parse_handing_off(numbered_by_process, list(range(100)), _fails, 2)
    assert len(rows) == 100
    assert handoff is not None
    assert handoff.result() is None


def test_with_no_child_forked_the_caller_runs_what_follows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    rows, handoff = fanout.parse_handing_off(numbered_by_process, list(range(100)), _fails, 2)
    assert [row.broken.message for row in rows if row.broken] == list(map(str, range(100)))
    assert handoff is None


def test_a_large_cold_scan_hands_the_cache_write_to_a_child(
    project: Project, write_task: TaskWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child writes the cache this process would have: the next scan reads it (the
    same identity, the same result), and until it is asked for, the identity is not
    waited for (the scan says it is new: nothing is kept under it yet)."""
    files_of_every_kind(project, write_task)
    an_hour_ago = time.time() - 3600  # no file racy: the cache holds them all
    for path in project.root.rglob("*"):
        os.utime(path, (an_hour_ago, an_hour_ago))
    monkeypatch.setattr(fanout, "PARALLEL_FROM", 10)
    cold = scan_source(project.root)
    assert cold.new
    identity = cold.identity
    assert identity is not None
    warm = scan_source(project.root)
    assert not warm.new
    assert warm.identity == identity
    assert _with_bodies(warm) == _with_bodies(cold) == scan_tasks(project.root, use_cache=False)


def _with_bodies(scan: Scan) -> ScanResult:
    """The scan's result with every body read (a warm scan's are kept in the cache)."""
    result = scan.result

    def read(tasks: tuple[Task, ...]) -> tuple[Task, ...]:
        return tuple(replace(task, raw_body=scan.bodies.read(task)) for task in tasks)

    return ScanResult(
        tasks=read(result.tasks), archived=read(result.archived), broken=result.broken
    )


def _only_in(pid: int, items: Sequence[int]) -> list[Row]:
    """Rows in process ``pid``; anywhere else the parse fails (a child that dies)."""
    if os.getpid() != pid:
        raise MemoryError("killed")
    return numbered_by_process(items)


def test_a_child_that_dies_before_its_share_leaves_it_and_the_rest_here() -> None:
    parse = functools.partial(_only_in, os.getpid())
    rows, handoff = fanout.parse_handing_off(parse, list(range(100)), _seen_by_child, 2)
    assert [row.broken.message for row in rows if row.broken] == list(map(str, range(100)))
    assert {row.broken.file for row in rows if row.broken} == {str(os.getpid())}
    assert handoff is None  # the caller runs ``then``
