"""Each parse-cache folder's columns of ids: what ``get`` looks an id up in without
decoding the rows (:mod:`tasktool.planning.get_index`).

The columns of a folder hold, row by row, the task's id, dependencies and parent and
whether it is completed or archived. Each column is one string, its values joined by
separators, so that the rows holding an id (the copies of a task, its dependents, its
children) are found by ``str.find`` at C speed, nothing decoded per row. They are
written with the folder's rows file, beside it (:mod:`tasktool.files.caches.cache`): a rows
file never changes, so its columns hold as long as it is named.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
import struct
from collections.abc import Sequence
from contextlib import suppress
from typing import Protocol

import msgspec

from tasktool.model.task import Status

__all__ = ["ARCHIVED", "COMPLETED", "ITEM", "TASK", "Fields", "IdColumns", "IdTable", "Indexed"]

#: Separators: between two values of a column (and the items of one task's
#: dependencies), and before each task's dependencies.
ITEM, TASK = "\0", "\1"
#: Flags of a row: a completed task (a dependency on its id is met), an archived one.
COMPLETED, ARCHIVED = 1, 2
_ID, _DEPENDENCIES = operator.attrgetter("id"), operator.attrgetter("dependencies")
_PARENT = operator.attrgetter("parent")
_STATUS, _ARCHIVED = operator.attrgetter("status"), operator.attrgetter("archived")
_LENGTH = struct.Struct("<I")


class Indexed(Protocol):
    """What the columns take of a task (a :class:`~tasktool.model.task.Task`, or
    :class:`Fields` decoded alone from a row)."""

    @property
    def id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def dependencies(self) -> tuple[str, ...]: ...
    @property
    def parent(self) -> str | None: ...
    @property
    def archived(self) -> bool: ...


class Fields(msgspec.Struct, frozen=True, gc=False):
    """The fields the columns take, decoded from a row alone (the rest is skipped)."""

    id: str
    status: str = Status.PENDING.value
    dependencies: tuple[str, ...] = ()
    parent: str | None = None
    archived: bool = False


_NO_TASK = Fields(id="")  # a row without a task: its id matches none asked for


class IdColumns(msgspec.Struct, frozen=True, array_like=True, gc=False):
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
    def of(cls, rows: Sequence[Indexed | None]) -> IdColumns:
        """The columns of a folder's rows (``None``: a row without a task)."""
        if not rows:  # joined, no values and one empty value would read the same
            return cls(True, ITEM, b"", "", ITEM, b"")
        tasks = [_NO_TASK if task is None else task for task in rows]
        # Built by joins and maps over the rows (C loops): a Python loop per row costs.
        ids = list(map(_ID, tasks))
        lists = list(map(_DEPENDENCIES, tasks))
        column = _column(ids)
        parents = _column([parent or "" for parent in map(_PARENT, tasks)])
        between = f"{ITEM}{TASK}{ITEM}"
        dependencies = f"{TASK}{ITEM}{between.join(map(ITEM.join, lists))}{ITEM}"
        size = len(tasks)
        # Each value holds no separator iff each column holds just the separators it was
        # joined with: counted at C speed, not value by value.
        clean = (
            column.count(ITEM) == size + 1
            and parents.count(ITEM) == size + 1
            and dependencies.count(TASK) == size
            and dependencies.count(ITEM) == sum(map(len, lists)) + size + lists.count(())
            and TASK not in column
            and TASK not in parents
            and ids.count("") == rows.count(None)
        )
        done = map(Status.COMPLETED.value.__eq__, map(_STATUS, tasks))
        archived = map(ARCHIVED.__mul__, map(_ARCHIVED, tasks))
        flags = bytes(map(operator.or_, map(COMPLETED.__mul__, done), archived))
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


class IdTable:
    """Every folder's columns (in the cache head's order), the rows numbered folder by
    folder as the head counts them, and where each row's task stands in the scan's
    result (its active tasks, then its archived ones)."""

    def __init__(
        self, columns: list[IdColumns], sizes: list[int], active: list[int], archived: list[int]
    ) -> None:
        self.columns = columns
        self.starts = list(itertools.accumulate(sizes, initial=0))[:-1]
        self._active = active
        self._archived = archived

    @property
    def clean(self) -> bool:
        """Every folder's columns can answer."""
        return all(part.clean for part in self.columns)

    def rows(self, column: str, separator: str, value: str) -> list[int]:
        """The rows whose ``column`` (``ids``, ``dependencies`` or ``parents``, whose
        values each begin with ``separator``) holds ``value`` as an item, in order."""
        found: list[int] = []
        for part, start in zip(self.columns, self.starts, strict=True):
            found += [start + row for row in _holders(getattr(part, column), separator, value)]
        return found

    def numbered(self, number: str) -> set[str]:
        """The ids that are the all-digit ``number`` but for leading zeros (``001`` for
        ``1``), found in the ids columns at C speed: what ``Repository.same_number``
        finds by decoding every task."""
        pattern = re.compile(f"{ITEM}(0*{int(number)}){ITEM}")
        return {found for part in self.columns for found in pattern.findall(part.ids)}

    def id_at(self, row: int) -> str:
        folder, at = self._split(row)
        return self.columns[folder].id_at(at)

    def flags(self, row: int) -> int:
        folder, at = self._split(row)
        return self.columns[folder].flags[at]

    def position(self, row: int) -> int | None:
        """The position of the task in row ``row`` (``None``: the row holds no task)."""
        # A search at C speed: a lookup asks for a few rows.
        with suppress(ValueError):
            return self._active.index(row)
        with suppress(ValueError):
            return len(self._active) + self._archived.index(row)
        return None

    def row(self, position: int) -> int:
        """The row of the task at ``position``."""
        size = len(self._active)
        return self._active[position] if position < size else self._archived[position - size]

    def _split(self, row: int) -> tuple[int, int]:
        """The number of the folder holding ``row`` and its number there."""
        folder = bisect.bisect_right(self.starts, row) - 1
        return folder, row - self.starts[folder]


def _column(values: list[str]) -> str:
    return f"{ITEM}{ITEM.join(values)}{ITEM}"


def _holders(column: str, separator: str, value: str) -> list[int]:
    """The numbers of the values of ``column`` (each begins with ``separator``) that hold
    ``value`` as an item, in order and once each."""
    needle = f"{ITEM}{value}{ITEM}"
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
