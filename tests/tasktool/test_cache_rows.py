"""A few rows of the parse cache read alone (``ParseCache.rows_at``), or what is derived
from each folder's rows with a few of its tasks' fields (``per_folder``): the same values
as decoding every row whole, and nothing when the cache changed under the run; and the
rows files' lifetime."""

from __future__ import annotations

import itertools
import os
import random
import time
from typing import TYPE_CHECKING, Any

import msgspec

from tasktool.files.cache import ParseCache
from tasktool.files.scan import Scan, scan_source, scan_tasks
from tests.tasktool.test_scan import age, cache_path

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
    for rows_file in cache_path(project.root).parent.glob("rows-*"):
        rows_file.unlink()  # as a later writer deletes them
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


class _Pairs(msgspec.Struct, frozen=True, array_like=True):
    """What the tests derive from a folder: each row's id and dependencies (or nothing)."""

    pairs: list[tuple[str, tuple[str, ...]] | None]


class _Deriving:
    """``per_folder``'s arguments, counting the folders it builds a value for (of a folder
    without files, whose value of no rows is built each time and kept nowhere, aside)."""

    def __init__(self) -> None:
        self.built: list[int] = []

    def __call__(self, cache: ParseCache | Scan) -> Any:
        return cache.per_folder("pairs", _Pairs, _Few, self._build, self._fits)

    def _build(self, tasks: list[_Few | None]) -> _Pairs:
        if tasks:
            self.built.append(len(tasks))
        return _Pairs([None if task is None else (task.id, task.dependencies) for task in tasks])

    @staticmethod
    def _fits(value: _Pairs, size: int) -> bool:
        return len(value.pairs) == size


def _kept(project: Project) -> dict[str, tuple[int, int]]:
    """Each value kept beside a rows file, and its inode and mtime."""
    folder = cache_path(project.root).parent
    return {
        path.name: (path.stat().st_ino, path.stat().st_mtime_ns)
        for path in folder.glob("rows-*.pairs.msgpack")
    }


def test_values_derived_per_folder_are_kept_beside_its_rows(
    project: Project, write_task: TaskWriter
) -> None:
    """Each folder's value is built from its rows (a few fields of each task decoded: the
    same values as decoding the rows whole), kept beside its rows file and read from
    there next time; a kept value that does not decode or fit is built again."""
    _cached(project, write_task)
    every = ParseCache.open(project.root).rows(bodies=False)
    assert every is not None
    head = ParseCache.open(project.root).head
    assert head is not None
    derive = _Deriving()
    values = derive(ParseCache.open(project.root))
    assert values is not None
    assert [pair for value in values for pair in value.pairs] == [
        (row.task.id, row.task.dependencies) if row.task else None for row in every
    ]
    assert ("31", ("1", "2")) in [pair for value in values for pair in value.pairs]
    assert derive.built == [len(folder) for folder in head.folders if len(folder)]
    named = sorted(name for name in head.files if name)
    kept = _kept(project)
    assert sorted(kept) == [name.replace(".msgpack", ".pairs.msgpack") for name in named]
    assert derive(ParseCache.open(project.root)) == values
    assert len(derive.built) == len(named)  # nothing built again
    assert _kept(project) == kept
    first, second = (cache_path(project.root).parent / name for name in sorted(kept)[:2])
    first.write_bytes(b"\xc1")  # does not decode
    second.write_bytes(msgspec.msgpack.encode(_Pairs([])))  # decodes, does not fit
    assert derive(ParseCache.open(project.root)) == values
    assert len(derive.built) == len(named) + 2


def test_only_a_scan_read_from_the_cache_derives_per_folder(
    project: Project, write_task: TaskWriter
) -> None:
    """A scan that parsed files has its result and nothing else; the next one reads the
    cache, builds the value of the folder that changed alone and places each row in its
    result."""
    _cached(project, write_task)
    derive = _Deriving()
    assert derive(scan_source(project.root, bodies=False)) is not None
    folders = len(derive.built)
    added = write_task("32", where="a")
    os.utime(added, (time.time() - 60, time.time() - 60))
    parsed = scan_source(project.root, bodies=False)
    assert not parsed.from_cache
    assert derive(parsed) is None
    cached = scan_source(project.root, bodies=False)
    assert cached.from_cache
    table = derive(cached)
    assert table is not None
    assert len(derive.built) == folders + 1  # folder a's rows file is new: built again
    result = parsed.result
    everything = result.tasks + result.archived
    rows = [pair for value in table.values for pair in value.pairs]
    sizes = [len(value.pairs) for value in table.values]
    assert table.starts == list(itertools.accumulate(sizes, initial=0))[:-1]
    for row, pair in enumerate(rows):
        position = table.position(row)
        folder, at = table.split(row)
        assert table.values[folder].pairs[at] == pair
        if pair is None:
            assert position is None
        else:
            assert position is not None
            assert everything[position].id == pair[0]
            assert table.row(position) == row
    placed = [table.position(row) for row in range(len(rows))]
    assert sorted(at for at in placed if at is not None) == list(range(len(everything)))


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
    assert [t.title for t in scan_tasks(project.root, bodies=False).tasks if t.id == "1"] == [
        "Changed"
    ]
    after = ParseCache.open(project.root)
    assert after.head is not None
    files_after = dict(zip((f.path for f in after.folders), after.head.files, strict=True))
    renamed = {path for path in files_after if files_after[path] != files_before[path]}
    assert renamed == {str(project.root / "a")}
    assert scan_tasks(project.root) == scan_tasks(project.root, use_cache=False)


def test_rows_files_no_head_names_go_once_old(project: Project, write_task: TaskWriter) -> None:
    """A writer keeps the files the head before it named (a run may be reading them) and
    young ones (another writer's, its head not yet written); it deletes the rest."""
    _cached(project, write_task)
    head_before = ParseCache.open(project.root).head
    assert head_before is not None
    named_before = set(head_before.files)
    folder = cache_path(project.root).parent
    young, old = folder / f"rows-{'1' * 16}.msgpack", folder / f"rows-{'2' * 16}.msgpack"
    young.write_bytes(b"\x90")
    old.write_bytes(b"\x90")
    beside_old = folder / f"rows-{'2' * 16}.pairs.msgpack"  # a value kept beside each
    beside_old.write_bytes(b"\x90")
    _Deriving()(ParseCache.open(project.root))
    for path in (old, beside_old, *folder.glob("*.pairs.msgpack")):
        os.utime(path, ns=(0, 0))
    for number in (1, 2):  # two writes, each after one file changed in folder a
        changed = project.root / "a" / f"{4 * number + 1}-task.md"
        changed.write_text(changed.read_text() + f"\nedit {number}\n")
        os.utime(changed, (time.time() - 60, time.time() - 60))
        scan_tasks(project.root, bodies=False)
    left = set(_rows_files(project))
    assert young.name in left
    assert old.name not in left
    assert beside_old.name not in left
    head = ParseCache.open(project.root).head
    assert head is not None
    named = {name for name in head.files if name}
    assert named <= left
    # Everything old now: the next write keeps what its head and the one before name.
    for name in left:
        os.utime(folder / name, ns=(0, 0))
    changed = project.root / "a" / "13-task.md"
    changed.write_text(changed.read_text() + "\nedit 3\n")
    os.utime(changed, (time.time() - 60, time.time() - 60))
    scan_tasks(project.root, bodies=False)
    newest = ParseCache.open(project.root).head
    assert newest is not None
    named_now = named | {name for name in newest.files if name}
    assert set(_rows_files(project)) == named_now | set(_kept(project))
    # The values kept beside a named rows file stay, however old; the others went with it.
    assert {name.replace(".pairs", "") for name in _kept(project)} == named_now & {
        name for name in named_before if name
    }
    assert scan_tasks(project.root) == scan_tasks(project.root, use_cache=False)


def test_a_head_naming_a_file_outside_the_cache_is_no_cache(
    project: Project, write_task: TaskWriter
) -> None:
    _cached(project, write_task)
    path = cache_path(project.root)
    head = msgspec.msgpack.decode(path.read_bytes())
    head[4] = ["../../" + "x" * 21 if name else name for name in head[4]]
    path.write_bytes(msgspec.msgpack.encode(head))
    assert ParseCache.open(project.root).head is None
    assert scan_tasks(project.root) == scan_tasks(project.root, use_cache=False)


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
