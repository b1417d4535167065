"""Parsing on every core: forked workers give exactly the one-process rows, in order."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest

from tasktool.files.caches.cache_files import Row
from tasktool.files.parsing.read import parse_files
from tasktool.files.scanning import fanout
from tasktool.files.scanning.scan import scan_tasks

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
