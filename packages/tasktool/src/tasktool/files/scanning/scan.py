"""Scanning the task directory: its folders walked (:mod:`tasktool.files.scanning.walk`),
compared with the parse cache (:mod:`tasktool.files.caches.cache`), the changed files read
and parsed (:mod:`tasktool.files.parsing.read`) and merged with the cached rows
(:mod:`tasktool.files.scanning.merge`)::

    scan = scan_source(root, ignore)  # walked and compared now
    scan.identity                     # the same identity, the same result (or None)
    scan.result                       # the tasks, decoded or parsed on first use

The names a caller of the scan needs are here too (``__all__``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import msgspec

from tasktool.files.caches.bodies import Bodies
from tasktool.files.caches.cache import ParseCache
from tasktool.files.caches.cache_files import Folder, Head, Row
from tasktool.files.parsing.read import ARCHIVE_DIR, parse_entry, read_entry
from tasktool.files.scanning.walk import SKIPPED_DIRS, is_scanned_folder, walk
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task

if TYPE_CHECKING:
    from tasktool.files.caches.id_columns import IdTable
    from tasktool.files.scanning.merge import Identity

__all__ = [
    "ARCHIVE_DIR",
    "SKIPPED_DIRS",
    "Scan",
    "ScanResult",
    "at_positions",
    "is_scanned_folder",
    "parse_entry",
    "read_entry",
    "scan_source",
    "scan_tasks",
]

T = TypeVar("T")


class ScanResult(msgspec.Struct, frozen=True, kw_only=True):
    """Tasks found under the task directory, split active / archived, and broken files."""

    tasks: tuple[Task, ...]
    archived: tuple[Task, ...]
    broken: tuple[Diagnostic, ...]

    @property
    def taken_ids(self) -> frozenset[str]:
        """Ids a new task must not take: every task's, and those of task files that do not
        load (once fixed, they would collide)."""
        broken = (problem.task_id for problem in self.broken if problem.task_id)
        return frozenset((*(task.id for task in self.tasks + self.archived), *broken))


def scan_tasks(root: Path, ignore: tuple[str, ...] = (), *, use_cache: bool = True) -> ScanResult:
    """Read every task under ``root``, parsing only files changed since the cached run.

    When no folder's names or signatures changed, the cached rows are the answer, in the
    cached result order. Otherwise each folder's files are matched to the cached ones by
    name and signature and only the others are parsed. A task read from the cache holds
    no body; the result holds no reader of it either, so its file gives it
    (:meth:`Bodies.read <tasktool.files.caches.bodies.Bodies.read>`): a caller that reads bodies
    keeps the :class:`Scan` (:func:`scan_source`) and reads them with its :attr:`~Scan.bodies`.
    """
    return scan_source(root, ignore, use_cache=use_cache).result


class Scan:
    """A scan of a task directory: its :attr:`identity` now, its :attr:`result` (what
    :func:`scan_tasks` returns) on first use.

    ``identity`` is the parse cache's identity when every file is as the cache holds it
    (the cache read, or the one this scan wrote with every file settled), else ``None``
    (a file changed a moment ago, no cache): the same identity, the same result. Read from
    the cache, the result is its rows, decoded only when asked for, so
    a command that recalls what it derived from them (a memo keyed on the identity) never
    decodes them (a good share of a warm run). Until then :attr:`broken` and
    :meth:`tasks_at` read the few rows they need alone.
    """

    def __init__(
        self,
        identity: Identity,
        compute: Callable[[], ScanResult],
        *,
        cache: ParseCache | None = None,
        folders: Sequence[str] | None = None,
        read: ParseCache | None = None,
    ) -> None:
        self._identity = identity
        #: Whether the identity names a cache this scan wrote (or a child of it is writing):
        #: nothing derived from it can be kept yet, so a memo need not be looked up (nor
        #: the write waited for before the answer).
        self.new = cache is None and identity is not None
        self._compute = compute
        self._cache = cache  # the cache read for the identity (its rows are the result)
        read = read or cache
        #: Where the tasks taken from the rows of the cache this scan read find their
        #: bodies (any other task's is inline or in its file).
        self.bodies: Bodies = read.bodies if read is not None else Bodies()
        #: Every folder the walk entered (absolute paths), ``None`` for a scan made
        #: elsewhere: where a worklog lookup looks for ``.worklogs/`` folders.
        self.folders = folders

    @property
    def identity(self) -> bytes | None:
        """See the class; a cache a forked child is writing is waited for."""
        if callable(self._identity):
            self._identity = self._identity()
        return self._identity

    @property
    def broken(self) -> tuple[Diagnostic, ...]:
        """The result's broken files: read alone from the cache (none to read when it says
        that every file parsed) while the result is not decoded."""
        head = self._undecoded()
        if head is not None:
            rows = self._rows_at(head.broken)
            if rows is not None and all(row.broken is not None for row in rows):
                return tuple([row.broken for row in rows])  # type: ignore[misc]
        return self.result.broken

    def tasks_at(self, positions: Sequence[int]) -> list[Task] | None:
        """The tasks at these positions of the result's active then archived tasks, read
        alone from the cache while the result is not decoded;
        ``None`` when a position is out of range or the cache no longer reads as it did."""
        head = self._undecoded()
        if head is None:
            return at_positions(self.result.tasks, self.result.archived, positions)
        numbers = at_positions(head.tasks, head.archived, positions)
        rows = self._rows_at(numbers) if numbers is not None else None
        if rows is None or any(row.task is None for row in rows):
            return None
        return [row.task for row in rows]  # type: ignore[misc]

    def id_table(self) -> IdTable | None:
        """The cache's columns of ids, placed in the result (see
        :meth:`ParseCache.id_columns`); ``None`` when this scan parsed files (its result
        is all there is) or the rows no longer read."""
        if self._cache is None or self._cache.head is None:
            return None
        from tasktool.files.caches.id_columns import IdTable  # get alone looks ids up

        head = self._cache.head
        columns = self._cache.id_columns()
        if columns is None:
            return None
        return IdTable(columns, list(map(len, head.folders)), head.tasks, head.archived)

    def _undecoded(self) -> Head | None:
        """The cache's head while the result is still to be decoded from its rows."""
        if self._cache is None or "result" in self.__dict__:
            return None
        return self._cache.head

    def _rows_at(self, numbers: Sequence[int]) -> list[Row] | None:
        assert self._cache is not None
        return self._cache.rows_at(numbers) if numbers else []

    @classmethod
    def of(cls, result: ScanResult) -> Scan:
        """A scan already made (no identity)."""
        return cls(None, lambda: result)

    @functools.cached_property
    def result(self) -> ScanResult:
        return self._compute()


def at_positions(first: Sequence[T], then: Sequence[T], positions: Sequence[int]) -> list[T] | None:
    """``first + then`` at these positions, without joining them (``None``: out of range)."""
    size = len(first)
    if any(not 0 <= position < size + len(then) for position in positions):
        return None
    return [first[position] if position < size else then[position - size] for position in positions]


def scan_source(root: Path, ignore: tuple[str, ...] = (), *, use_cache: bool = True) -> Scan:
    """The :class:`Scan` of ``root``: its files walked and compared with the parse cache now,
    the rows decoded (or the changed files parsed) when its result is first asked for."""
    cache = ParseCache.open(root) if use_cache else ParseCache.empty()
    known = cache.walked(ignore)
    walked = walk(root, ignore, known)
    folders = [folder.path for folder, _ in walked]
    if cache.identity is not None and known == [folder for folder, _ in walked]:
        compute = functools.partial(_from_cache, root, ignore, walked, cache)
        return Scan(cache.identity, compute, cache=cache, folders=folders)
    from tasktool.files.scanning.merge import rescan  # a run with nothing changed never merges

    rows, order, written = rescan(root, ignore, walked, cache)
    result = _result(rows, *order)
    return Scan(written, lambda: result, folders=folders, read=cache)


def _from_cache(
    root: Path,
    ignore: tuple[str, ...],
    walked: list[tuple[Folder, str]],
    cache: ParseCache,
) -> ScanResult:
    """The result when every file is as cached: the cached rows in the cached order (or,
    should they not decode, a rescan, which rewrites the cache)."""
    rows = cache.rows()
    if rows is None or cache.head is None:
        from tasktool.files.scanning.merge import rescan

        rows, order, _written = rescan(root, ignore, walked, cache)
        return _result(rows, *order)
    head = cache.head
    return _result(rows, head.tasks, head.archived, head.broken)


def _result(
    rows: list[Row], tasks: list[int], archived: list[int], broken: list[int]
) -> ScanResult:
    """The scan result from the rows and the row numbers of each part, in result order."""
    return ScanResult(
        tasks=tuple([rows[number].task for number in tasks]),  # type: ignore[misc]
        archived=tuple([rows[number].task for number in archived]),  # type: ignore[misc]
        broken=tuple([rows[number].broken for number in broken]),  # type: ignore[misc]
    )
