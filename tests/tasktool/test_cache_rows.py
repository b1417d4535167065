"""A few rows of the parse cache read alone (``ParseCache.rows_at``), and each folder's
columns of ids (``id_columns``): the same values as decoding every row whole, and nothing
when the cache changed under the run; and the lifetime of the rows files."""

from __future__ import annotations

import os
import random
import time
from typing import TYPE_CHECKING

import msgspec

from tasktool.files.caches.cache import ParseCache
from tasktool.files.caches.id_columns import IdColumns
from tasktool.files.scanning.scan import scan_source, scan_tasks
from tests.tasktool.cache_entries import read_bodies
from tests.tasktool.test_scan import age, cache_path, columns_kept, columns_named

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project, TaskWriter


class _Few(msgspec.Struct, frozen=True):
    id: str
    dependencies: tuple[str, ...] = ()


def _cached(project: Project, write_task: TaskWriter) -> None:
    for number in range(1, 31):
        where = ("", "a", "b/archive", "c/d")[number % 4]
        write_task(str(number), where=where)
    (project.root / "a" / "bad-task.md").write_text("---\nid: '99'\ntitle: [x\n---\n")
    write_task("31", where="a", dependencies=["'1'", "'2'"])
    age(project.root)
    scan_tasks(project.root)


def test_rows_read_alone_are_the_rows(project: Project, write_task: TaskWriter) -> None:
    _cached(project, write_task)
    every = ParseCache.open(project.root).rows()
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
    for rows_file in cache_path(project.root).parent.glob("rows-*"):
        rows_file.unlink()  # as a later writer deletes them
    assert cache.rows_at([0]) is None


def test_a_scan_reads_its_broken_files_and_tasks_alone(
    project: Project, write_task: TaskWriter
) -> None:
    """Before its result is decoded, a scan answers ``broken`` and ``tasks_at`` from rows
    read alone; after, from the result: the same answers."""
    _cached(project, write_task)
    result = scan_tasks(project.root)
    everything = result.tasks + result.archived
    positions = [0, len(everything) - 1, len(result.tasks), 3]
    alone = scan_source(project.root)
    assert alone.broken == result.broken
    assert len(alone.broken) == 1
    assert alone.tasks_at(positions) == [everything[at] for at in positions]
    assert alone.tasks_at([len(everything)]) is None
    assert "result" not in vars(alone)  # none of it decoded every row
    assert alone.result == result
    assert alone.tasks_at(positions) == [everything[at] for at in positions]


def test_each_rows_file_has_its_columns_of_ids_beside_it(
    project: Project, write_task: TaskWriter
) -> None:
    """The write puts each rows file's columns beside it: what decoding the rows whole
    gives, read as they are; columns that are missing, do not decode or do not fit are
    built from the rows again and kept."""
    _cached(project, write_task)
    cache = ParseCache.open(project.root)
    every = cache.rows()
    assert every is not None
    assert cache.head is not None
    kept = columns_kept(project.root)
    assert set(kept) == columns_named(cache.head.files)
    columns = cache.id_columns()
    assert columns is not None
    start = 0
    for folder, part in zip(cache.folders, columns, strict=True):
        rows = every[start : start + len(folder)]
        assert part == IdColumns.of([row.task for row in rows])
        assert [part.id_at(at) for at in range(len(rows))] == [
            row.task.id if row.task else "" for row in rows
        ]
        start += len(folder)
    assert any("31" in part.ids and "\x001\x002\x00" in part.dependencies for part in columns)
    assert columns_kept(project.root) == kept  # read, not built
    first, second, third = (cache_path(project.root).parent / name for name in sorted(kept)[:3])
    first.write_bytes(b"\xc1")  # does not decode
    second.write_bytes(msgspec.msgpack.encode(IdColumns.of([])))  # decodes, does not fit
    third.unlink()
    assert ParseCache.open(project.root).id_columns() == columns
    again = columns_kept(project.root)
    assert set(again) == set(kept)
    assert {name for name in kept if again[name] != kept[name]} == {
        first.name,
        second.name,
        third.name,
    }


def test_only_a_scan_read_from_the_cache_has_the_id_table(
    project: Project, write_task: TaskWriter
) -> None:
    """A scan that parsed files has its result and nothing else (its write put the new
    rows file's columns beside it, and no other's); the next one reads the cache, and
    its table places each row in the result."""
    _cached(project, write_task)
    kept = columns_kept(project.root)
    added = write_task("32", where="a")
    os.utime(added, (time.time() - 60, time.time() - 60))
    parsed = scan_source(project.root)
    assert parsed.id_table() is None
    now = columns_kept(project.root)
    assert {name: now[name] for name in kept if name in now} == {
        name: kept[name] for name in kept if name in now
    }
    assert len(set(now) - set(kept)) == 1  # folder a's
    cached = scan_source(project.root)
    table = cached.id_table()
    assert table is not None
    assert table.clean
    result = parsed.result
    everything = result.tasks + result.archived
    count = sum(len(folder) for folder in ParseCache.open(project.root).folders)
    placed = [table.position(row) for row in range(count)]
    assert sorted(at for at in placed if at is not None) == list(range(len(everything)))
    for row, position in enumerate(placed):
        if position is None:
            assert table.id_at(row) == ""
        else:
            assert everything[position].id == table.id_at(row)
            assert table.row(position) == row
            assert table.rows("ids", "\0", table.id_at(row)) == [row]
    depending = [
        row
        for row, at in enumerate(placed)
        if at is not None and "1" in everything[at].dependencies
    ]
    assert table.rows("dependencies", "\1", "1") == depending
    assert [table.id_at(row) for row in depending] == ["31"]


def _rows_files(project: Project) -> dict[str, int]:
    """Each rows file of the cache and its inode."""
    folder = cache_path(project.root).parent
    return {path.name: path.stat().st_ino for path in folder.glob("rows-*")}


def test_one_changed_file_rewrites_its_folder_rows_alone(
    project: Project, write_task: TaskWriter
) -> None:
    _cached(project, write_task)
    before = ParseCache.open(project.root)
    assert before.head is not None
    files_before = dict(zip((f.path for f in before.folders), before.head.files, strict=True))
    changed = project.root / "a" / "1-task.md"
    changed.write_text(changed.read_text().replace("A task", "Changed"))
    os.utime(changed, (time.time() - 60, time.time() - 60))
    assert [t.title for t in scan_tasks(project.root).tasks if t.id == "1"] == ["Changed"]
    after = ParseCache.open(project.root)
    assert after.head is not None
    files_after = dict(zip((f.path for f in after.folders), after.head.files, strict=True))
    renamed = {path for path in files_after if files_after[path] != files_before[path]}
    assert renamed == {str(project.root / "a")}
    assert read_bodies(scan_tasks(project.root)) == scan_tasks(project.root, use_cache=False)


def _cache_files(project: Project) -> set[str]:
    """The files of the cache's folder, whatever their names."""
    return {path.name for path in cache_path(project.root).parent.iterdir() if path.is_file()}


def _aged_cache(project: Project) -> None:
    """Every file of the cache's folder made old (as if written long ago)."""
    for path in cache_path(project.root).parent.iterdir():
        os.utime(path, ns=(0, 0))


def _edit(project: Project, number: int) -> None:
    """Change one file of folder ``a`` and scan: the cache is written again."""
    changed = project.root / "a" / f"{4 * number + 1}-task.md"
    changed.write_text(changed.read_text() + f"\nedit {number}\n")
    os.utime(changed, (time.time() - 60, time.time() - 60))
    scan_tasks(project.root)


def test_old_cache_files_no_head_names_go(project: Project, write_task: TaskWriter) -> None:
    """A writer keeps what the head before it named (a run may be reading it) and young
    files (another writer's, its head not yet written); it deletes the rest, so the cache
    does not grow with writes, and every run still reads what the files hold."""
    _cached(project, write_task)
    before = _cache_files(project)
    for number in (1, 2):  # two writes, each after one file changed in folder a
        _edit(project, number)
    grown = _cache_files(project)
    assert before < grown  # nothing young deleted: the first head's files all stay
    _aged_cache(project)
    _edit(project, 3)
    after = _cache_files(project)
    assert before - after  # old files no head names went (rows, columns and store)
    assert len(before - after) >= 3
    assert len(after) < len(grown)
    for number in (4, 5):  # steady: each write adds what the one before it let go
        _aged_cache(project)
        _edit(project, number)
        assert len(_cache_files(project)) == len(after)
    assert read_bodies(scan_tasks(project.root)) == scan_tasks(project.root, use_cache=False)


def test_a_head_naming_a_file_outside_the_cache_is_no_cache(
    project: Project, write_task: TaskWriter
) -> None:
    _cached(project, write_task)
    path = cache_path(project.root)
    head = msgspec.msgpack.decode(path.read_bytes())
    head[4] = ["../../" + "x" * 21 if name else name for name in head[4]]
    path.write_bytes(msgspec.msgpack.encode(head))
    assert ParseCache.open(project.root).head is None
    assert read_bodies(scan_tasks(project.root)) == scan_tasks(project.root, use_cache=False)


def test_a_write_removes_other_versions_files_and_no_others(
    project: Project, write_task: TaskWriter
) -> None:
    """Another version's head and bodies go; the config file's cache (the config sits in
    the task directory here) and unknown files stay."""
    _cached(project, write_task)
    folder = cache_path(project.root).parent
    others = ["tasks-6.msgpack", "bodies-tasks-6.msgpack"]
    kept = ["config-.tasktool.yaml.msgpack", "notes.msgpack"]
    for name in others + kept:
        (folder / name).write_bytes(b"\x90")
    changed = project.root / "a" / "1-task.md"
    changed.write_text(changed.read_text() + "\nedit\n")
    os.utime(changed, (time.time() - 60, time.time() - 60))
    scan_tasks(project.root)
    assert not any((folder / name).exists() for name in others)
    assert all((folder / name).exists() for name in kept)
