"""What ``get`` needs beside the task's own file, kept from one run to the next, so that a
warm ``get`` decodes one task's row of the parse cache instead of every task's (at 100,000
tasks, decoding them all and indexing them by id took half of a warm ``get``).

The index is one :class:`FolderIndex` per folder of the parse cache, derived from that
folder's rows alone and kept beside its rows file (:meth:`Repository.per_folder
<tasktool.planning.repository.Repository.per_folder>`). A rows file is written once
and never changed, so after an edit one folder's columns are built again (at 100,000
tasks ~20 ms), not every task's (~250 ms, which the first ``get`` after any edit paid
when the index was one whole). The columns hold each row's id, dependencies and parent
and whether it is a completed or archived task; each column is one string, its values
joined by separators, so that the rows holding an id (the copies of the task, its
dependents, its children) are found by ``str.find`` at C speed, nothing decoded per
task. Which copy of an id is the first (what ``get`` and the graph take), and the order
of the answers, are the result's order, which the cache's head holds.

A ``get`` that parsed files (the first run after an edit) takes the full path, as does a
``get`` with sibling worktrees overlaid (the tasks shown are not the rows), of an id that
is empty or holds a separator, or when a folder's ids, dependencies or parents hold one
(or a task's id is empty).

With the index, ``get`` reads the rows of the task and its children alone
(:meth:`Repository.tasks_at <tasktool.planning.repository.Repository.tasks_at>`) and
raises what :meth:`Repository.get <tasktool.planning.repository.Repository.get>` raises.
"""

from __future__ import annotations

import itertools
import operator
import struct
from typing import TYPE_CHECKING

import msgspec

from tasktool.model.task import Status, Task
from tasktool.planning.repository import ambiguous_id

if TYPE_CHECKING:
    from tasktool.files.scan import PerFolder
    from tasktool.planning.repository import Repository

#: The name the columns are kept under, beside each rows file.
KIND = "get_index"
#: Separators: between two values of a column (and the items of one task's
#: dependencies), and before each task's dependencies.
_ITEM, _TASK = "\0", "\1"
#: Flags of a row: a completed task (a dependency on its id is met), an archived one.
_COMPLETED, _ARCHIVED = 1, 2
_ID, _DEPENDENCIES = operator.attrgetter("id"), operator.attrgetter("dependencies")
_PARENT = operator.attrgetter("parent")
_LENGTH = struct.Struct("<I")


class _Fields(msgspec.Struct, frozen=True, gc=False):
    """What the index takes of a task (decoded alone: the rest of each row is skipped)."""

    id: str
    status: str = Status.PENDING.value
    dependencies: tuple[str, ...] = ()
    parent: str | None = None
    archived: bool = False


_NO_TASK = _Fields(id="")  # a row without a task: its id matches none asked for


class FolderIndex(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """Columns over one folder's rows, in order: ``ids`` (``\\0a\\0b\\0``, empty for a row
    without a task, and the running total of their ``lengths``, to slice one out),
    ``dependencies`` (``\\1\\0d1\\0d2\\0`` per row, ``\\1\\0\\0`` for none), ``parents``
    (as ``ids``, empty for none) and ``flags``. ``clean``: no value holds a separator and
    no task's id is empty (else the columns cannot answer)."""

    clean: bool
    ids: str
    lengths: bytes
    dependencies: str
    parents: str
    flags: bytes

    @classmethod
    def of(cls, rows: list[_Fields | None]) -> FolderIndex:
        """The columns of a folder's rows (``None``: a row without a task)."""
        if not rows:  # joined, no values and one empty value would read the same
            return cls(True, _ITEM, b"", "", _ITEM, b"")
        tasks = [_NO_TASK if task is None else task for task in rows]
        # Built by joins and maps over the rows (C loops): a Python loop per row costs.
        ids = list(map(_ID, tasks))
        lists = list(map(_DEPENDENCIES, tasks))
        column = _column(ids)
        parents = _column([parent or "" for parent in map(_PARENT, tasks)])
        between = f"{_ITEM}{_TASK}{_ITEM}"
        dependencies = f"{_TASK}{_ITEM}{between.join(map(_ITEM.join, lists))}{_ITEM}"
        size = len(tasks)
        # Each value holds no separator iff each column holds just the separators it was
        # joined with: counted at C speed, not value by value.
        clean = (
            column.count(_ITEM) == size + 1
            and parents.count(_ITEM) == size + 1
            and dependencies.count(_TASK) == size
            and dependencies.count(_ITEM) == sum(map(len, lists)) + size + lists.count(())
            and _TASK not in column
            and _TASK not in parents
            and ids.count("") == rows.count(None)
        )
        completed = Status.COMPLETED.value
        flags = bytes(
            (task.status == completed) * _COMPLETED | task.archived * _ARCHIVED for task in tasks
        )
        return cls(
            clean=clean,
            ids=column,
            lengths=struct.pack(f"<{size}I", *itertools.accumulate(map(len, ids))),
            dependencies=dependencies,
            parents=parents,
            flags=flags,
        )

    def fits(self, size: int) -> bool:
        """The columns hold ``size`` rows (kept ones that do not are built again)."""
        return len(self.flags) == size and len(self.lengths) == _LENGTH.size * size

    def id_at(self, row: int) -> str:
        """The id of the task in row ``row`` of the folder."""
        # ``lengths`` holds the running total of the ids' lengths, separators left out.
        end = _LENGTH.unpack_from(self.lengths, _LENGTH.size * row)[0] + row + 1
        before = _LENGTH.unpack_from(self.lengths, _LENGTH.size * (row - 1))[0] if row else 0
        return self.ids[before + row + 1 : end]


class _Index:
    """The folders' columns together, answering in the result's positions."""

    def __init__(self, table: PerFolder[FolderIndex]) -> None:
        self._table = table
        self._first: dict[str, int | None] = {}

    def holders(self, task_id: str) -> list[int]:
        """The positions of the tasks with this id, in order."""
        return self._positions(self._rows("ids", _ITEM, task_id))

    def first(self, task_id: str) -> int | None:
        """The position of the first task with this id (the one ``by_id`` gives)."""
        if task_id not in self._first:
            holders = self.holders(task_id)
            self._first[task_id] = holders[0] if holders else None
        return self._first[task_id]

    def dependents(self, task_id: str) -> list[str]:
        """The ids of the active tasks that depend on ``task_id`` (of an id several hold,
        the first copy counts), in order: as the graph's ``dependents``."""
        return [self.id_at(at) for at in self._counted(self._rows("dependencies", _TASK, task_id))]

    def children(self, task_id: str) -> list[int]:
        """The positions of the active tasks whose parent is ``task_id`` (of an id several
        hold, the first copy counts), in order: as the graph's ``children``."""
        return self._counted(self._rows("parents", _ITEM, task_id))

    def met(self, task_id: str) -> bool:
        """The task this id names (active, else archived) is completed (as the graph)."""
        at = self.first(task_id)
        return at is not None and bool(self._flags(self._row(at)) & _COMPLETED)

    def id_at(self, position: int) -> str:
        folder, row = self._table.split(self._row(position))
        return self._table.values[folder].id_at(row)

    def _rows(self, column: str, separator: str, value: str) -> list[int]:
        """The rows (numbered folder by folder) whose ``column`` holds ``value``."""
        found: list[int] = []
        for part, start in zip(self._table.values, self._table.starts, strict=True):
            found += [start + row for row in _holders(getattr(part, column), separator, value)]
        return found

    def _counted(self, rows: list[int]) -> list[int]:
        """The positions of those rows' tasks that are active and the first copy of their
        id, in order."""
        active = [row for row in rows if not self._flags(row) & _ARCHIVED]
        positions = self._positions(active)
        return [at for at in positions if self.first(self.id_at(at)) == at]

    def _positions(self, rows: list[int]) -> list[int]:
        positions: list[int] = []
        for row in rows:
            position = self._table.position(row)
            if position is None:
                raise _Stale
            positions.append(position)
        return sorted(positions)

    def _row(self, position: int) -> int:
        return self._table.row(position)

    def _flags(self, row: int) -> int:
        folder, at = self._table.split(row)
        return self._table.values[folder].flags[at]


class _Stale(Exception):
    """The columns name a row that holds no task: they do not describe these rows."""


def _column(values: list[str]) -> str:
    return f"{_ITEM}{_ITEM.join(values)}{_ITEM}"


def _holders(column: str, separator: str, value: str) -> list[int]:
    """The numbers of the values of ``column`` (each begins with ``separator``) that hold
    ``value`` as an item, in order and once each."""
    needle = f"{_ITEM}{value}{_ITEM}"
    found: list[int] = []
    seen = counted = 0  # separators before ``counted``
    at = column.find(needle)
    while at >= 0:
        seen += column.count(separator, counted, at + 1)
        counted = at + 1
        if not found or found[-1] != seen - 1:
            found.append(seen - 1)
        at = column.find(needle, at + len(needle) - 1)
    return found


class Found(msgspec.Struct, frozen=True, gc=False):
    """What ``get`` shows of an id: its task (body perhaps empty), the ids of its
    dependents, its children, and its unmet dependencies."""

    task: Task
    dependents: list[str]
    children: list[Task]
    unmet: list[str]


def lookup(repo: Repository, task_id: str) -> Found | None:
    """:meth:`Repository.get <tasktool.planning.repository.Repository.get>` of ``task_id``
    (it raises the same errors) with what ``get`` shows beside the task, from the index
    (the folders' columns built now where none is kept); ``None`` when the index does
    not apply, or the cache no longer reads as it says: the caller takes the full path."""
    if not _indexable(task_id):
        return None
    table = repo.per_folder(KIND, FolderIndex, _Fields, FolderIndex.of, FolderIndex.fits)
    if table is None or not all(part.clean for part in table.values):
        return None
    index = _Index(table)
    try:
        holders = index.holders(task_id)
        if not holders:
            raise repo.missing(task_id)
        positions = [*holders, *index.children(task_id)]
        found = repo.tasks_at(positions)
        if found is None or [task.id for task in found] != list(map(index.id_at, positions)):
            return None
        if len(holders) > 1:
            raise ambiguous_id(task_id, [task.file_path for task in found[: len(holders)]])
        task = found[0]
        unmet = [dep for dep in task.dependencies if not index.met(dep)]
        return Found(task, index.dependents(task_id), found[1:], unmet)
    except _Stale:
        return None


def _indexable(task_id: str) -> bool:
    return bool(task_id) and _ITEM not in task_id and _TASK not in task_id
