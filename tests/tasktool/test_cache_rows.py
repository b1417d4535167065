"""A few rows of the parse cache, read alone (``ParseCache.rows_at``): the same rows as
decoding them all, in the order asked, and nothing when the cache changed under the run."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from tasktool.files.cache import ParseCache
from tasktool.files.scan import scan_source, scan_tasks
from tests.tasktool.test_scan import age, cache_path

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project, TaskWriter


def _cached(project: Project, write_task: TaskWriter) -> None:
    for number in range(1, 31):
        where = ("", "a", "b/archive", "c/d")[number % 4]
        write_task(str(number), where=where)
    (project.root / "a" / "bad-task.md").write_text("---\nid: '99'\ntitle: [x\n---\n")
    age(project.root)
    scan_tasks(project.root)


def test_rows_read_alone_are_the_rows(project: Project, write_task: TaskWriter) -> None:
    _cached(project, write_task)
    every = ParseCache.open(project.root).rows(bodies=False)
    assert every is not None
    rng = random.Random(7)
    for size in (0, 1, 2, 5, len(every)):
        numbers = rng.sample(range(len(every)), size)
        numbers += numbers[:1]  # asked twice
        assert ParseCache.open(project.root).rows_at(numbers) == [every[n] for n in numbers]


def test_rows_out_of_range_or_of_a_replaced_cache_are_none(
    project: Project, write_task: TaskWriter
) -> None:
    _cached(project, write_task)
    cache = ParseCache.open(project.root)
    total = sum(len(folder) for folder in cache.folders)
    assert cache.rows_at([total]) is None
    assert cache.rows_at([-1]) is None
    assert cache.rows_at([total - 1]) is not None
    path = cache_path(project.root)
    path.write_bytes(path.read_bytes())  # the same bytes, another file identity
    assert cache.rows_at([0]) is None


def test_a_scan_reads_its_broken_files_and_tasks_alone(
    project: Project, write_task: TaskWriter
) -> None:
    """Before its result is decoded, a scan answers ``broken`` and ``tasks_at`` from rows
    read alone; after, from the result: the same answers."""
    _cached(project, write_task)
    result = scan_tasks(project.root, bodies=False)
    everything = result.tasks + result.archived
    positions = [0, len(everything) - 1, len(result.tasks), 3]
    alone = scan_source(project.root, bodies=False)
    assert alone.broken == result.broken
    assert len(alone.broken) == 1
    assert alone.tasks_at(positions) == [everything[at] for at in positions]
    assert alone.tasks_at([len(everything)]) is None
    assert "result" not in vars(alone)  # none of it decoded every row
    assert alone.result == result
    assert alone.tasks_at(positions) == [everything[at] for at in positions]
