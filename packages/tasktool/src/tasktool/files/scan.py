"""Walking the task directory: which files are read, and the parse cache around them.

The built-in skip list (``node_modules``, ``vendor``, ``dist``, ``build``,
``.next``, ``.nuxt``, ``out``, ``target``, ``__pycache__`` and every hidden
directory) plus the ``ignore`` setting decide which directories are entered.
Files under a folder named ``archive`` at any depth (``<task dir>/archive/``, or
taskmd's ``<task dir>/cli/archive/``) are archived tasks.
"""

from __future__ import annotations

import functools
import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, TypeVar

import msgspec

from tasktool.files.cache import (
    SIG_SIZE,
    UNSETTLED,
    Folder,
    Head,
    ParseCache,
    Row,
    ignore_entries,
    pack_signature,
    result_order,
    row_of,
    signature_mtime,
    updated_order,
)
from tasktool.files.forked import Child, usable_cores
from tasktool.files.taskfile import id_in_text, looks_like_task, parse_task
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task, natural_key

if TYPE_CHECKING:
    from tasktool.files.id_columns import IdTable

RACY_NS = 2_000_000_000
SKIPPED_DIRS = frozenset(
    {"node_modules", "vendor", "dist", "build", ".next", ".nuxt", "out", "target", "__pycache__"}
)
ARCHIVE_DIR = "archive"
#: Past this many files to parse, when reading the first ones took more than
#: ``SLOW_READ_NS`` each, threads read the rest ahead: ``READERS`` threads, each reading
#: ``READ_CHUNK`` files at a time, at most ``READ_WINDOW`` chunks ahead.
READ_AHEAD_FROM = 64
SLOW_READ_NS = 100_000
READERS = 4
READ_CHUNK = 32
READ_WINDOW = 8
#: Past this many files, a forked child makes half of a walk's ``stat`` calls.
STAT_FORK_FROM = 5_000
#: Whether a file can be stat-ed through its folder's descriptor (POSIX; not Windows).
_STAT_IN_FOLDER = os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
#: The signature of a listed name that is no regular file (gone since, a symlink loop).
NOT_A_FILE = pack_signature(-2, 0, 0, 0)
#: The row of a file still to be parsed.
_PENDING = Row()
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


def _skipped(name: str, relative: str, ignore: frozenset[str]) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS or name in ignore or relative in ignore


def is_scanned_folder(relative: str, ignore: tuple[str, ...] = ()) -> bool:
    """Whether the scan enters the folder at ``relative`` (``/``-separated, below the task
    directory): no part of it is hidden, on the skip list or ignored."""
    ignored = frozenset(ignore_entries(ignore))
    parts = relative.split("/")
    return not any(
        _skipped(name, "/".join(parts[: depth + 1]), ignored) for depth, name in enumerate(parts)
    )


def walk(
    root: Path, ignore: tuple[str, ...] = (), known: Sequence[Folder] = ()
) -> list[tuple[Folder, str]]:
    """Every folder under ``root`` the scan enters (skipped directories left out), each
    with its ``.md`` files' names and signatures in directory order, and its path
    relative to ``root`` (``""`` at the top).

    An ``ignore`` entry matches a directory name or its path relative to ``root``.
    ``known`` are the folders of an earlier walk with the same ``ignore`` (the parse
    cache's): a folder whose own signature is the one recorded there (and settled) is
    not listed again. Then each file is ``stat``-ed: a warm scan is mostly those calls, so
    past ``STAT_FORK_FROM`` files a forked child makes the second half of them.
    """
    listed = _listed(root, ignore, {folder.path: folder for folder in known})
    count = sum(len(listing.names) for listing in listed)
    shares = [(listing.directory, listing.names) for listing in listed]
    child = None
    if count >= STAT_FORK_FROM and usable_cores() > 1:
        mine, theirs = _halves(shares, count)
        try:
            child = Child(functools.partial(_signatures, theirs))
        except OSError:
            pass  # no process to spare: every file is stat-ed here
        else:
            shares = mine
    try:
        packed = _signatures(shares)
    finally:  # the child is waited for even when this share raised (an interrupt)
        rest = child.result() if child is not None else None
    if child is not None:
        packed += rest if rest is not None else _signatures(theirs)
    found: list[tuple[Folder, str]] = []
    start = 0
    for listing in listed:
        end = start + len(listing.names) * SIG_SIZE
        found.append((listing.folder(packed[start:end]), listing.relative))
        start = end
    return found


class _Listing(msgspec.Struct, frozen=True, gc=False):
    """A folder as listed (or as known, unchanged): its path, relative path, own
    signature, the names of its entries that may be task files (``.md``, no directory)
    and the subfolders entered; ``known``: the cached folder it was taken from."""

    directory: str
    relative: str
    stamp: bytes
    names: list[str]
    subfolders: list[str]
    known: Folder | None = None

    def folder(self, packed: bytes) -> Folder:
        """The folder with its files' packed signatures. Entries that are no file are left
        out, and the folder is then always listed again: such an entry (a dangling
        symlink) can become a file without the folder changing."""
        names, stamp = self.names, self.stamp
        if NOT_A_FILE in packed:
            kept = [
                (name, sig)
                for index, name in enumerate(names)
                if (sig := packed[index * SIG_SIZE : (index + 1) * SIG_SIZE]) != NOT_A_FILE
            ]
            if len(kept) < len(names):
                names, packed = [name for name, _ in kept], b"".join(sig for _, sig in kept)
                stamp = UNSETTLED
        if self.known is not None and names is self.names:
            # Its strings as cached, not joined again: the scan compares them at once.
            return Folder(self.directory, self.known.names, packed, stamp, self.known.subfolders)
        return Folder(self.directory, "\0".join(names), packed, stamp, "\0".join(self.subfolders))


def _listed(root: Path, ignore: tuple[str, ...], known: dict[str, Folder]) -> list[_Listing]:
    """Every folder the scan enters, in walk order; a folder of ``known`` whose signature
    is unchanged and settled is taken from there instead of listed."""
    ignored = frozenset(ignore_entries(ignore))
    racy_after = time.time_ns() - RACY_NS
    found: list[_Listing] = []
    pending = [(str(root), "")]
    while pending:
        directory, relative = pending.pop()
        try:
            with _opened(directory) as folder:
                stamp = _stamp(os.stat(folder), racy_after)
                old = known.get(directory)
                if old is not None and stamp != UNSETTLED and old.stamp == stamp:
                    listing = _Listing(directory, relative, stamp, old.listed(), old.entered(), old)
                else:
                    listing = _Listing(
                        directory, relative, stamp, *_list(folder, relative, ignored)
                    )
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        found.append(listing)
        for name in listing.subfolders:
            pending.append(
                (os.path.join(directory, name), f"{relative}/{name}" if relative else name)
            )
    return found


@contextmanager
def _opened(directory: str) -> Iterator[str | int]:
    """The folder to list and stat its files through: a descriptor, closed after (each
    stat is then an fstatat() of the bare name, which spares the kernel walking the whole
    path again: a fifth of a warm scan), or its path where that is not possible."""
    if not _STAT_IN_FOLDER:
        yield directory
        return
    fd = os.open(directory, _DIRECTORY_FLAGS)
    try:
        yield fd
    finally:
        os.close(fd)


def _stamp(stat: os.stat_result, racy_after: int) -> bytes:
    """A folder's signature, ``UNSETTLED`` when it changed a moment ago: an entry made
    within the same timestamp tick after the listing would leave it as it was. (An entry
    made later sets its mtime to that later time, so a settled mtime is enough, as for
    files.)"""
    if stat.st_mtime_ns > racy_after:
        return UNSETTLED
    return pack_signature(stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


def _list(folder: str | int, relative: str, ignored: frozenset[str]) -> tuple[list[str], list[str]]:
    """The names of a folder's entries that may be task files, and its subfolders the
    scan enters."""
    names: list[str] = []
    subfolders: list[str] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                if not _skipped(name, f"{relative}/{name}" if relative else name, ignored):
                    subfolders.append(name)
            elif name.endswith(".md"):
                names.append(name)
    return names, subfolders


def _halves(
    shares: list[tuple[str, list[str]]], count: int
) -> tuple[list[tuple[str, list[str]]], list[tuple[str, list[str]]]]:
    """``shares`` (folders and file names) cut into two with half the files each, in order."""
    first: list[tuple[str, list[str]]] = []
    second: list[tuple[str, list[str]]] = []
    room = count // 2
    for directory, names in shares:
        taken = names[:room]
        room -= len(taken)
        if taken:
            first.append((directory, taken))
        if len(taken) < len(names):
            second.append((directory, names[len(taken) :]))
    return first, second


def _signatures(shares: list[tuple[str, list[str]]]) -> bytes:
    """The packed signature of every file named in ``shares`` (folders and names), in
    order; ``NOT_A_FILE`` for one that is gone or not a regular file."""
    stat = os.stat
    packed: list[bytes] = []
    for directory, names in shares:
        start = len(packed)
        try:
            with _opened(directory) as folder:
                fd = folder if isinstance(folder, int) else None
                for name in names:
                    path = name if fd is not None else os.path.join(directory, name)
                    try:
                        found = stat(path, dir_fd=fd)
                    except OSError:  # gone since the listing, a symlink loop
                        packed.append(NOT_A_FILE)
                        continue
                    packed.append(
                        pack_signature(
                            found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino
                        )
                        if S_ISREG(found.st_mode)
                        else NOT_A_FILE
                    )
        except OSError:  # the folder itself is gone
            packed[start:] = [NOT_A_FILE] * len(names)
    return b"".join(packed)


def _place(directory: str) -> tuple[str | None, bool]:
    """The ``group`` (the directory's own name) and whether it is archived, from the
    file's directory relative to the task directory."""
    folders = directory.split("/") if directory else []
    if ARCHIVE_DIR not in folders:
        return (folders[-1] if folders else None), False
    # taskmd's layout: an ``archive`` folder at any depth (``tasks/cli/archive/``) holds
    # archived tasks of the folder around it.
    kept = [folder for folder in folders if folder != ARCHIVE_DIR]
    return (kept[-1] if kept else None), True


def _read(path: str) -> bytes | OSError:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        return exc


def _read_many(paths: list[str]) -> list[bytes | OSError]:
    return [_read(path) for path in paths]


def read_all(paths: list[str]) -> Iterator[bytes | OSError]:
    """The bytes (or the error) of each file, in order.

    The first ``READ_AHEAD_FROM`` files are read here; when they took more than
    ``SLOW_READ_NS`` each (not in the OS cache: each read waits on the disk), a few
    threads read the rest ahead of the caller, overlapping those waits. Files in the OS
    cache are read here one by one: threads would only add switching.
    """
    started = time.perf_counter_ns()
    probe = [_read(path) for path in paths[:READ_AHEAD_FROM]]
    slow = time.perf_counter_ns() - started > SLOW_READ_NS * len(probe)
    yield from probe
    rest = paths[len(probe) :]
    if not slow or not rest:
        yield from map(_read, rest)
        return
    from concurrent.futures import Future, ThreadPoolExecutor

    chunks = [rest[at : at + READ_CHUNK] for at in range(0, len(rest), READ_CHUNK)]
    with ThreadPoolExecutor(READERS) as pool:
        window: deque[Future[list[bytes | OSError]]] = deque()
        for chunk in chunks[:READ_WINDOW]:
            window.append(pool.submit(_read_many, chunk))
        for chunk in chunks[READ_WINDOW:]:
            done = window.popleft().result()
            window.append(pool.submit(_read_many, chunk))
            yield from done
        while window:
            yield from window.popleft().result()


def read_entry(root: str, path: str, directory: str | None = None) -> Task | Diagnostic | None:
    """Read and parse one file (no cache); ``directory`` is its folder relative to ``root``."""
    return entry_of(root, path, _read(path), directory)


def parse_files(root: str, files: Sequence[tuple[str, str]]) -> list[Row]:
    """The rows of ``files`` (each a path and its folder relative to ``root``), in order."""
    raws = read_all([path for path, _relative in files])
    return [
        row_of(entry_of(root, path, raw, relative))
        for (path, relative), raw in zip(files, raws, strict=True)
    ]


def entry_of(
    root: str, path: str, raw: bytes | OSError, directory: str | None = None
) -> Task | Diagnostic | None:
    """What the file at ``path`` parses to, from its bytes (or the error reading them)."""
    if isinstance(raw, OSError):
        return _unreadable(path, raw.strerror or str(raw))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not looks_like_task(raw.decode("utf-8", "replace")):
            return None
        # Name the id when the bytes show one, so ``get``/``set`` say why it is missing.
        return _unreadable(path, f"not UTF-8 ({exc})", id_in_text(raw.decode("utf-8", "replace")))
    return parse_entry(root, path, text, directory)


def parse_entry(
    root: str, path: str, text: str, directory: str | None = None
) -> Task | Diagnostic | None:
    """Parse the text of the file at ``path`` (group and archive state from its place)."""
    if directory is None:
        directory = os.path.relpath(os.path.dirname(path), root).replace(os.sep, "/")
        directory = "" if directory == "." else directory
    group, archived = _place(directory)
    return parse_task(text, file_path=path, group=group, archived=archived)


def _unreadable(path: str, reason: str, task_id: str | None = None) -> Diagnostic:
    return Diagnostic(
        severity="error",
        code="task.unreadable",
        message=f"{path}: cannot be read: {reason}",
        file=path,
        task_id=task_id,
    )


def _order(task: Task) -> tuple[object, ...]:
    return (natural_key(task.id), task.file_path)


def scan_tasks(
    root: Path, ignore: tuple[str, ...] = (), *, use_cache: bool = True, bodies: bool = True
) -> ScanResult:
    """Read every task under ``root``, parsing only files changed since the cached run.

    When no folder's names or signatures changed, the cached rows are the answer, in the
    cached result order. Otherwise each folder's files are matched to the cached ones by
    name and signature and only the others are parsed. Without ``bodies`` a task's body
    may be empty (the body file is not read): for commands that never show one;
    :func:`with_body` reads one task's body afterwards.
    """
    return scan_source(root, ignore, use_cache=use_cache, bodies=bodies).result


class Scan:
    """A scan of a task directory: its :attr:`identity` now, its :attr:`result` (what
    :func:`scan_tasks` returns) on first use.

    ``identity`` is the parse cache's identity when every file is as the cache holds it
    (the cache read, or the one this scan wrote with every file settled), else ``None``
    (a file changed a moment ago, no cache): the same identity, the same result (bodies
    aside). Read from the cache, the result is its rows, decoded only when asked for, so
    a command that recalls what it derived from them (a memo keyed on the identity) never
    decodes them: at 100,000 tasks a quarter of a warm run. Until then :attr:`broken` and
    :meth:`tasks_at` read the few rows they need alone.
    """

    def __init__(
        self,
        identity: bytes | None,
        compute: Callable[[], ScanResult],
        *,
        cache: ParseCache | None = None,
        folders: Sequence[str] | None = None,
    ) -> None:
        self.identity = identity
        self._compute = compute
        self._cache = cache  # the cache read for the identity (its rows are the result)
        #: Every folder the walk entered (absolute paths), ``None`` for a scan made
        #: elsewhere: where a worklog lookup looks for ``.worklogs/`` folders.
        self.folders = folders

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
        """The tasks at these positions of the result's active then archived tasks (their
        bodies perhaps empty), read alone from the cache while the result is not decoded;
        ``None`` when a position is out of range or the cache no longer reads as it did."""
        head = self._undecoded()
        if head is None:
            return at_positions(self.result.tasks, self.result.archived, positions)
        numbers = at_positions(head.tasks, head.archived, positions)
        rows = self._rows_at(numbers) if numbers is not None else None
        if rows is None or any(row.task is None for row in rows):
            return None
        return [row.task for row in rows]  # type: ignore[misc]

    @property
    def from_cache(self) -> bool:
        """Whether the result is the cache's rows as read by this scan (it parsed none)."""
        return self._cache is not None

    def id_table(self) -> IdTable | None:
        """The cache's columns of ids, placed in the result (see
        :meth:`ParseCache.id_columns`); ``None`` when this scan parsed files (its result
        is all there is) or the rows no longer read."""
        if self._cache is None or self._cache.head is None:
            return None
        from tasktool.files.id_columns import IdTable  # get alone looks ids up

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


def scan_source(
    root: Path, ignore: tuple[str, ...] = (), *, use_cache: bool = True, bodies: bool = True
) -> Scan:
    """The :class:`Scan` of ``root``: its files walked and compared with the parse cache now,
    the rows decoded (or the changed files parsed) when its result is first asked for."""
    cache = ParseCache.open(root) if use_cache else ParseCache.empty()
    known = cache.walked(ignore)
    walked = walk(root, ignore, known)
    folders = [folder.path for folder, _ in walked]
    if cache.identity is not None and known == [folder for folder, _ in walked]:
        compute = functools.partial(_from_cache, root, ignore, walked, cache, bodies=bodies)
        return Scan(cache.identity, compute, cache=cache, folders=folders)
    result, written = _rescan(root, ignore, walked, cache, bodies=bodies)
    return Scan(written, lambda: result, folders=folders)


def _from_cache(
    root: Path,
    ignore: tuple[str, ...],
    walked: list[tuple[Folder, str]],
    cache: ParseCache,
    *,
    bodies: bool,
) -> ScanResult:
    """The result when every file is as cached: the cached rows in the cached order (or,
    should they not decode, a rescan, which rewrites the cache)."""
    rows = cache.rows(bodies=bodies)
    if rows is None or cache.head is None:
        return _rescan(root, ignore, walked, cache, bodies=bodies)[0]
    head = cache.head
    return _result(rows, head.tasks, head.archived, head.broken)


class _Merge:
    """The rows of a rescan: each folder's files matched to the cached ones by name and
    signature, the others queued for parsing."""

    def __init__(self, cache: ParseCache, *, bodies: bool) -> None:
        self.before_rows = cache.rows(bodies=bodies) or []
        # path -> folder, its first row, its number
        self.before: dict[str, tuple[Folder, int, int]] = {}
        start = 0
        if self.before_rows:
            for number, folder in enumerate(cache.folders):
                self.before[folder.path] = (folder, start, number)
                start += len(folder)
        self.same: dict[int, int] = {}  # folder number -> number of the cached one, unchanged
        self.rows: list[Row] = []
        self.folders: list[Folder] = []
        self.moved = [-1] * len(self.before_rows)  # old row number -> new
        self.fresh: list[int] = []  # rows to parse now
        self.reading: list[tuple[str, str]] = []  # their files and folders (relative)
        self.settled = 0  # parsed files that will be cached
        # A file changed within the last moments may change again within the same
        # timestamp tick at the same size: such "racy" files are parsed, not kept.
        self.racy_after = time.time_ns() - RACY_NS

    def vanished(self, walked: list[tuple[Folder, str]]) -> bool:
        """Whether a cached file is gone (its folder or just its name)."""
        now = {folder.path: folder for folder, _relative in walked}
        for path, (old, _first, _number) in self.before.items():
            folder = now.get(path)
            if len(old) and (folder is None or not set(old.listed()) <= set(folder.listed())):
                return True
        return False

    def regrouped(self, cache: ParseCache, ignore: tuple[str, ...]) -> bool:
        """Whether there is a cache and its folders are not the ones walked with
        ``ignore`` (an empty folder made or removed, a folder's own signature changed,
        another ``ignore`` setting: no row changes, but left uncached it would make
        every run a rescan)."""
        return cache.head is not None and self.folders != cache.walked(ignore)

    def add(self, folder: Folder, relative: str) -> None:
        old, first, number = self.before.get(folder.path, (None, 0, 0))
        rows = self.rows
        if old is not None and (old.names, old.sigs) == (folder.names, folder.sigs):
            self.same[len(self.folders)] = number
            self.moved[first : first + len(folder)] = range(len(rows), len(rows) + len(folder))
            rows += self.before_rows[first : first + len(folder)]
            self.folders.append(folder)
            return
        names = folder.listed()
        known = {name: index for index, name in enumerate(old.listed())} if old else {}
        sigs: list[bytes] = []
        for index, name in enumerate(names):
            sig = folder.signature(index)
            was = known.get(name)
            if was is not None and old is not None and old.signature(was) == sig:
                self.moved[first + was] = len(rows)
                rows.append(self.before_rows[first + was])
            else:
                self.fresh.append(len(rows))
                rows.append(_PENDING)
                self.reading.append((os.path.join(folder.path, name), relative))
                if signature_mtime(sig) > self.racy_after:
                    sig = UNSETTLED
                else:
                    self.settled += 1
            sigs.append(sig)
        self.folders.append(msgspec.structs.replace(folder, sigs=b"".join(sigs)))

    def parse(self, root: Path) -> None:
        """Parse the queued files (on every core when there are many)."""
        from tasktool.files.fanout import parse_rows  # a scan with nothing changed never parses

        parsed = parse_rows(functools.partial(parse_files, str(root)), self.reading)
        for number, row in zip(self.fresh, parsed, strict=True):
            self.rows[number] = row


def _rescan(
    root: Path,
    ignore: tuple[str, ...],
    walked: list[tuple[Folder, str]],
    cache: ParseCache,
    *,
    bodies: bool,
) -> tuple[ScanResult, bytes | None]:
    """The scan when some file changed, appeared or vanished (or nothing is cached), and
    the identity of the cache it wrote when that cache holds every file settled (the
    next run, files unchanged, reads this result from it): a memo keyed on the identity
    can then keep what this run derives."""
    merge = _Merge(cache, bodies=bodies)
    for folder, relative in walked:
        merge.add(folder, relative)
    merge.parse(root)
    rows = merge.rows
    if merge.before_rows and cache.head is not None:
        head = cache.head
        before = (head.tasks, head.archived, head.broken)
        order = updated_order(rows, before, merge.moved, merge.fresh)
    else:
        order = result_order(rows)
    written = None
    # Every file parsed now cached for good (none racy): the next run can read it all.
    settled = merge.settled == len(merge.fresh)
    if cache.path is not None and (
        merge.settled or merge.vanished(walked) or (settled and merge.regrouped(cache, ignore))
    ):
        # Rows taken from a cache read without bodies have none: unless every row was
        # parsed now, write the head only (they keep their slots in the body file).
        complete = bodies or all(row.slot < 0 for row in rows)
        written = cache.write(
            merge.folders, rows, order, ignore=ignore, bodies=complete, same=merge.same
        )
    return _result(rows, *order), written if settled else None


def with_body(root: Path, task: Task) -> Task:
    """``task`` with its body, read from its file again (for a scan without bodies); the
    task as it is when the file no longer parses to the same id."""
    reread = read_entry(str(root), task.file_path)
    if isinstance(reread, Task) and reread.id == task.id:
        return msgspec.structs.replace(task, body=reread.body)
    return task


def _result(
    rows: list[Row], tasks: list[int], archived: list[int], broken: list[int]
) -> ScanResult:
    """The scan result from the rows and the row numbers of each part, in result order."""
    return ScanResult(
        tasks=tuple([rows[number].task for number in tasks]),  # type: ignore[misc]
        archived=tuple([rows[number].task for number in archived]),  # type: ignore[misc]
        broken=tuple([rows[number].broken for number in broken]),  # type: ignore[misc]
    )
