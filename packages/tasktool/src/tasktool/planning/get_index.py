"""What ``get`` needs beside the task's own file, kept from one run to the next, so that a
warm ``get`` decodes one task's row of the parse cache instead of every task's (at 100,000
tasks, decoding them all and indexing them by id took half of a warm ``get``).

The index (a :mod:`~tasktool.planning.derived_memo` of kind ``get-index``, keyed on the
repository's identity and settings) holds, for every position of
:attr:`Repository.all_tasks <tasktool.planning.repository.Repository.all_tasks>`, the
task's id, dependencies and parent and two flags (the first copy of its id, completed),
one column each. Each column is one string, its values joined by separators, so that
the tasks holding an id (the copies of the task, its dependents, its children) are found
by ``str.find`` at C speed, nothing decoded per task: reading it takes a few
milliseconds.

It is built by a ``get`` whose tasks are the parse cache's rows as it read them, from
those four fields alone (:meth:`Repository.project
<tasktool.planning.repository.Repository.project>`: a third of the cost of decoding whole
tasks, less than the full path). A ``get`` that parsed files (the first run after an
edit: that identity may not outlive the next edit) takes the full path and builds none,
as do a ``get`` with sibling worktrees overlaid (the tasks shown are not the rows), of an
id that is empty or holds a separator, or of tasks whose ids, dependencies or parents
hold one.

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
from tasktool.planning.derived_memo import derived
from tasktool.planning.repository import ambiguous_id

if TYPE_CHECKING:
    from tasktool.planning.repository import Repository

KIND = "get-index"
#: Separators: between two values of a column (and the items of one task's
#: dependencies), and before each task's dependencies.
_ITEM, _TASK = "\0", "\1"
#: Flags of a position: completed (a dependency on that id is met), and the first copy
#: of its id (what ``get`` and the graph take).
_COMPLETED, _FIRST = 1, 2
_ALL_FIRST = bytes.maketrans(bytes([0, _COMPLETED]), bytes([_FIRST, _FIRST | _COMPLETED]))
_ID, _STATUS = operator.attrgetter("id"), operator.attrgetter("status")
_DEPENDENCIES, _PARENT = operator.attrgetter("dependencies"), operator.attrgetter("parent")
_LENGTH = struct.Struct("<I")


class _Fields(msgspec.Struct, frozen=True, gc=False):
    """What the index takes of a task (decoded alone: the rest of each row is skipped)."""

    id: str
    status: str = Status.PENDING.value
    dependencies: tuple[str, ...] = ()
    parent: str | None = None


class GetIndex(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """Columns over the positions of ``all_tasks``: ``ids`` (``\\0a\\0b\\0``, and the running
    total of their ``lengths``, to slice one out), ``dependencies`` (``\\1\\0d1\\0d2\\0`` per
    task, ``\\1\\0\\0`` for none), ``parents`` (as ``ids``, empty for
    none) and ``flags``; the first ``active`` positions are the active tasks."""

    active: int
    ids: str
    lengths: bytes
    dependencies: str
    parents: str
    flags: bytes

    @classmethod
    def of(cls, repo: Repository) -> GetIndex | None:
        """The index of ``repo``'s tasks, their fields decoded from the parse cache's rows
        (:meth:`Repository.project`); ``None`` when they do not read, or a value holds a
        separator (or an id is empty)."""
        projected = repo.project(_Fields)
        if projected is None:
            return None
        active, archived = projected
        tasks = active + archived
        if not tasks:
            return cls(active=0, ids="", lengths=b"", dependencies="", parents="", flags=b"")
        # Built by joins and maps over the tasks (C loops): at 100,000 tasks every Python
        # loop over them costs milliseconds.
        ids = list(map(_ID, tasks))
        lists = list(map(_DEPENDENCIES, tasks))
        column = _column(ids)
        parents = _column([parent or "" for parent in map(_PARENT, tasks)])
        # Each task's dependencies as ``\1\0d1\0d2\0`` (``\1\0\0`` for none).
        between = f"{_ITEM}{_TASK}{_ITEM}"
        dependencies = f"{_TASK}{_ITEM}{between.join(map(_ITEM.join, lists))}{_ITEM}"
        size = len(ids)
        # Each value holds no separator iff each column holds just the separators it was
        # joined with: counted at C speed, not value by value.
        if (
            column.count(_ITEM) != size + 1
            or parents.count(_ITEM) != size + 1
            or dependencies.count(_TASK) != size
            or dependencies.count(_ITEM) != sum(map(len, lists)) + size + lists.count(())
            or _TASK in column
            or _TASK in parents
        ):
            return None
        # The first position of each id (the task ``by_id`` gives): built from the end, the
        # earliest position of an id is written last.
        first = dict(zip(reversed(ids), range(size - 1, -1, -1), strict=True))
        if "" in first:
            return None
        flags = bytearray(map(Status.COMPLETED.value.__eq__, map(_STATUS, tasks)))
        if len(first) == size:  # no id held twice: every position is its id's first
            flags = flags.translate(_ALL_FIRST)
        else:
            for position in first.values():
                flags[position] |= _FIRST
        return cls(
            active=len(active),
            ids=column,
            lengths=struct.pack(f"<{size}I", *itertools.accumulate(map(len, ids))),
            dependencies=dependencies,
            parents=parents,
            flags=bytes(flags),
        )

    def fits(self) -> bool:
        """The columns agree in length (a memo that decodes but does not is not used)."""
        size = len(self.flags)
        return 0 <= self.active <= size and len(self.lengths) == _LENGTH.size * size

    def holders(self, task_id: str) -> list[int]:
        """The positions of the tasks with this id, in order."""
        return _holders(self.ids, _ITEM, task_id)

    def dependents(self, task_id: str) -> list[str]:
        """The ids of the active tasks that depend on ``task_id`` (of an id several hold,
        the first copy counts), in order: as the graph's ``dependents``."""
        return [
            self.id_at(position)
            for position in _holders(self.dependencies, _TASK, task_id)
            if position < self.active and self.flags[position] & _FIRST
        ]

    def children(self, task_id: str) -> list[int]:
        """The positions of the active tasks whose parent is ``task_id`` (of an id several
        hold, the first copy counts), in order: as the graph's ``children``."""
        return [
            position
            for position in _holders(self.parents, _ITEM, task_id)
            if position < self.active and self.flags[position] & _FIRST
        ]

    def met(self, task_id: str) -> bool:
        """The task this id names (active, else archived) is completed (as the graph)."""
        at = self.ids.find(f"{_ITEM}{task_id}{_ITEM}")
        return at >= 0 and bool(self.flags[self.ids.count(_ITEM, 0, at)] & _COMPLETED)

    def id_at(self, position: int) -> str:
        """The id of the task at ``position``."""
        # ``lengths`` holds the running total of the ids' lengths, separators left out.
        end = _LENGTH.unpack_from(self.lengths, _LENGTH.size * position)[0] + position + 1
        before = (
            _LENGTH.unpack_from(self.lengths, _LENGTH.size * (position - 1))[0] if position else 0
        )
        return self.ids[before + position + 1 : end]


def _column(values: list[str] | tuple[str, ...]) -> str:
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
    (built now when there is none yet); ``None`` when the index does not apply, or the
    cache no longer reads as it says: the caller takes the full path."""
    if not repo.from_cache or repo.identity is None or not _indexable(task_id):
        return None
    index = derived(repo, KIND, (), GetIndex | None, lambda: GetIndex.of(repo), valid=_fits, kept=1)
    if index is None:
        return None
    holders = index.holders(task_id)
    if not holders:
        raise repo.missing(task_id)
    positions = [*holders, *index.children(task_id)]
    found = repo.tasks_at(positions)
    if found is None or [task.id for task in found] != [index.id_at(at) for at in positions]:
        return None
    if len(holders) > 1:
        raise ambiguous_id(task_id, [task.file_path for task in found[: len(holders)]])
    task = found[0]
    unmet = [dep for dep in task.dependencies if not index.met(dep)]
    return Found(task, index.dependents(task_id), found[1:], unmet)


def _fits(index: GetIndex | None) -> bool:
    return index is None or index.fits()


def _indexable(task_id: str) -> bool:
    return bool(task_id) and _ITEM not in task_id and _TASK not in task_id
