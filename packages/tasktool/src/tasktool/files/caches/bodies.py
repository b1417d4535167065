"""Tasks' bodies, read when a caller first asks for one (:meth:`Bodies.read`).

The parse cache keeps each rows file's bodies in a body store beside it
(``rows-N.bodies``: the offsets of the folder's bodies, one per row, then their UTF-8
bytes), written with the rows and never changed. A task decoded from the rows holds
:data:`~tasktool.model.task.KEPT` instead of its body: nothing per task to decode or
hold, and a listing's JSON is as fast as without bodies. No command decides up front
whether it needs bodies: a listing never reads one, ``get`` reads one, ``search`` reads
them a store at a time (:meth:`Bodies.each`).

Where a kept body is belongs to the load that decoded the task, as a response's body
belongs to the response: each :class:`~tasktool.files.caches.cache.ParseCache` owns a
:class:`Bodies` (held by the scan, and so by the
:class:`~tasktool.planning.repository.Repository`, that read the cache: ``repo.bodies``).
It holds the rows the cache decoded, folder by folder (:class:`Part`, with the number of
their store), and the cache's :class:`Stores`: where each store is, only the last
:data:`OPEN_STORES` open, closed when the load goes. A task finds its row by its file's
folder and name; the row holds the task itself, or (the overlay shows a task with its
status from another worktree) one with the same fields. No body is kept after it was
handed out, so the bodies are never all resident, and nothing here is process-wide: two
loads never see each other's rows.

A body is always the one its fields came with. From a store it is by construction (the
store was written from the same parse as the row). When no row matches (the store is
gone or damaged, the task came from another load), the task's file is parsed again and
its body returned only when its frontmatter is still the task's; otherwise the file
changed since the task was loaded, and mixing the new body with the old fields would
show a version that never existed: ``task.changed`` (run again).
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple, Protocol

import msgspec

from tasktool.files.parsing.taskfile import parse_task
from tasktool.model.errors import TaskToolError
from tasktool.model.task import KEPT, Task

__all__ = [
    "OPEN_STORES",
    "Bodies",
    "Part",
    "Stores",
    "encode_store",
    "store_name",
    "store_number",
]

#: Body stores one cache keeps open at once (the least recently read one is closed first).
OPEN_STORES = 32
_OFFSET = array("Q").itemsize


class _Row(Protocol):
    @property
    def task(self) -> Task | None: ...


class Part:
    """One folder's rows (all, or some by index) as a cache read decoded them, and the
    number of the store that keeps their bodies."""

    __slots__ = ("_index", "count", "names", "path", "rows", "store")

    def __init__(
        self, path: str, names: str, store: int, rows: Sequence[_Row] | Mapping[int, _Row]
    ) -> None:
        self.path, self.names, self.store, self.rows = path, names, store, rows
        #: The folder's number of rows.
        self.count = names.count("\0") + 1 if names else 0
        self._index: dict[str, int] | None = None

    def row_of(self, task: Task, name: str) -> int | None:
        """The index of the row of ``task`` (its file named ``name``) here."""
        if self._index is None:
            listed = self.names.split("\0") if self.names else []
            self._index = {name: index for index, name in enumerate(listed)}
        index = self._index.get(name)
        if index is None:
            return None
        rows = self.rows
        row = rows.get(index) if isinstance(rows, dict) else rows[index]
        found = row.task if row is not None else None
        # The task itself; or, shown with another worktree's status (the overlay makes a
        # new task), one with its fields. Any other task holding KEPT (a body that is one
        # NUL) is not taken for a row: its file tells.
        same = found is task or (
            found is not None and task.worktree is not None and _same_fields(found, task)
        )
        return index if same else None


class _Open(NamedTuple):
    """A store open: its descriptor and offsets."""

    fd: int
    offsets: array[int]

    def body(self, index: int) -> bytes | None:
        """The bytes of body ``index`` (``None``: out of the store or short)."""
        offsets = self.offsets
        start, end = offsets[index], offsets[index + 1]
        if not 0 < start <= end <= offsets[-1]:
            return None
        found = os.pread(self.fd, end - start, start)
        return found if len(found) == end - start else None


def store_number(rows_name: str) -> int:
    """The number of the rows file ``rows-<16 hex digits>.msgpack`` and its body store."""
    return int(rows_name[5:21], 16)


def store_name(number: int) -> str:
    """The file name of the body store numbered ``number``."""
    return f"rows-{number:016x}.bodies"


def encode_store(texts: Sequence[bytes]) -> bytes:
    """A body store of these bodies, one per row (empty for a row without a task)."""
    start = _OFFSET * (len(texts) + 1)
    offsets = array("Q", itertools.accumulate(map(len, texts), initial=start))
    if sys.byteorder == "big":
        offsets.byteswap()
    return b"".join([offsets.tobytes(), *texts])  # one copy of the bodies, not two


class Stores:
    """The body stores of one cache's rows files, owned by its :class:`Bodies`: where each
    is, and the last :data:`OPEN_STORES` read open (closed when the cache goes). Read from
    any thread."""

    __slots__ = ("_lock", "_open", "_where")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: Store number -> the cache folder holding it and its length (rows files are
        #: named at random, so a number is one file).
        self._where: dict[int, tuple[str, int]] = {}
        #: Store number -> the store open, the most recently read last.
        self._open: OrderedDict[int, _Open] = OrderedDict()

    def __del__(self) -> None:
        """Close the stores left open (not ``weakref.finalize``: its first use registers
        an ``atexit`` handler, which would keep a read command from ending at once)."""
        opened = self._open
        while opened:
            os.close(opened.popitem()[1].fd)

    def know(self, cache_folder: str, rows_names: Iterable[str], lengths: Iterable[int]) -> None:
        """Record that the body stores of these rows files are in ``cache_folder``, each
        ``lengths`` bytes long (a store of another length is damaged and never read)."""
        with self._lock:
            for name, length in zip(rows_names, lengths, strict=True):
                if name:
                    self._where[store_number(name)] = (cache_folder, length)

    def kept(self, part: Part, index: int) -> bytes | None:
        """The bytes of body ``index`` of ``part`` (``None``: not readable)."""
        with self._lock:
            opened = self._opened(part.store, part.count)
            try:
                return opened.body(index) if opened is not None else None
            except OSError:
                return None

    def whole(self, part: Part) -> tuple[bytes, array[int]] | None:
        """The store of ``part`` read whole, and its offsets (``None``: not readable)."""
        with self._lock:
            opened = self._opened(part.store, part.count)
            if opened is None:
                return None
            length = opened.offsets[-1]
            try:
                found = os.pread(opened.fd, length, 0)
            except OSError:
                return None
        return (found, opened.offsets) if len(found) == length else None

    def _opened(self, number: int, count: int) -> _Open | None:
        """The store open (``None``: unknown, gone, damaged), with the lock held. An open
        store outlives its file: deleted now, it still reads."""
        found = self._open.get(number)
        if found is not None:
            self._open.move_to_end(number)
            return found if len(found.offsets) == count + 1 else None
        folder, length = self._where.get(number, ("", -1))
        header = _OFFSET * (count + 1)
        if length < header:
            return None
        try:
            fd = os.open(os.path.join(folder, store_name(number)), os.O_RDONLY)
        except OSError:
            return None
        offsets = array("Q")
        try:
            if os.fstat(fd).st_size == length:
                offsets.frombytes(os.pread(fd, header, 0))
        except OSError:
            pass
        if sys.byteorder == "big":
            offsets.byteswap()
        if len(offsets) != count + 1 or offsets[0] != header or offsets[-1] != length:
            os.close(fd)
            return None
        opened = self._open[number] = _Open(fd, offsets)
        while len(self._open) > OPEN_STORES:
            os.close(self._open.popitem(last=False)[1].fd)
        return opened


class Bodies:
    """The kept bodies of the tasks one parse cache decoded: its rows, folder by folder,
    and its :class:`Stores`. Owned by that cache (and so by the scan and the repository
    that read it); read from any thread."""

    __slots__ = ("_lock", "_parts", "stores")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: Folder path -> the parts decoded from its rows files, newest last.
        self._parts: dict[str, list[Part]] = {}
        #: The body stores of the rows files the cache's heads name.
        self.stores = Stores()

    def add(self, part: Part) -> None:
        """Have the tasks of ``part``'s rows find their bodies here."""
        with self._lock:
            self._parts.setdefault(part.path, []).append(part)

    def read(self, task: Task) -> str:
        """The body of ``task``: held inline, else kept in its store, else read from its
        file when the file still holds the task's frontmatter (``task.changed`` when not)."""
        if task.raw_body != KEPT:
            return task.raw_body
        found = self._find(task)
        if found is not None:
            part, index = found
            kept = self.stores.kept(part, index)
            if kept is not None:
                try:
                    return kept.decode("utf-8")
                except UnicodeDecodeError:
                    pass  # a damaged store: the file says what the body is
        return _from_file(task)

    def stored(self, part: Part | None, tasks: Sequence[Task | None]) -> list[bytes]:
        """The UTF-8 bodies of one folder's rows (``None``: no task), for its new store: a
        body held inline encoded, a kept one copied from the store of ``part`` (the
        folder's rows the cache read: its store is read once) or read anew."""
        if part is None and not any(task is not None and task.raw_body == KEPT for task in tasks):
            # Every body inline (a cold scan's): encoded in one comprehension.
            return [b"" if task is None else task.raw_body.encode() for task in tasks]
        whole = self.stores.whole(part) if part is not None else None
        texts: list[bytes] = []
        for task in tasks:
            if task is None:
                texts.append(b"")
            elif task.raw_body != KEPT:
                texts.append(task.raw_body.encode())
            else:
                name = os.path.basename(task.file_path)
                index = part.row_of(task, name) if part is not None and whole is not None else None
                if whole is not None and index is not None:
                    store, offsets = whole
                    texts.append(store[offsets[index] : offsets[index + 1]])
                else:
                    texts.append(self.read(task).encode())
        return texts

    def each(self, tasks: Sequence[Task]) -> Iterator[tuple[int, str]]:
        """Each task's position in ``tasks`` and its body, for a reader of many
        (``search``): the bodies held inline first, then those kept, a store at a time
        (most of a store's read with it whole, then let go: one store's bytes in memory at
        a time, never every body), then any other (:meth:`read`)."""
        wanted: dict[int, int] = {}  # id of a kept task -> its position
        for position, task in enumerate(tasks):
            if task.raw_body == KEPT:
                wanted[id(task)] = position
            else:
                yield position, task.raw_body
        with self._lock:
            parts = [part for listed in self._parts.values() for part in listed]
        for part in parts:
            if not wanted:
                break
            rows = part.rows
            numbered = rows.items() if isinstance(rows, Mapping) else enumerate(rows)
            found = [
                (wanted.pop(id(row.task)), index)
                for index, row in numbered
                if id(row.task) in wanted
            ]
            if found:
                yield from self._read_part(part, found, tasks)
        for position in wanted.values():
            yield position, self.read(tasks[position])

    def _find(self, task: Task) -> tuple[Part, int] | None:
        """The part holding ``task``'s row and the row's index (the newest part first)."""
        folder, _, name = task.file_path.rpartition(os.sep)
        with self._lock:
            listed = list(self._parts.get(folder, ()))
        for part in reversed(listed):
            index = part.row_of(task, name)
            if index is not None:
                return part, index
        return None

    def _read_part(
        self, part: Part, found: list[tuple[int, int]], tasks: Sequence[Task]
    ) -> Iterator[tuple[int, str]]:
        """The bodies of rows ``found`` (position in ``tasks``, index here) of ``part``."""
        # A few of a store's bodies are read alone, most of them with the store at once.
        whole = self.stores.whole(part) if len(found) * 8 > part.count else None
        for position, index in found:
            if whole is not None:
                store, offsets = whole
                kept: bytes | None = store[offsets[index] : offsets[index + 1]]
            else:
                kept = self.stores.kept(part, index)
            try:
                text = kept.decode("utf-8") if kept is not None else None
            except UnicodeDecodeError:
                text = None  # a damaged store: the file says what the body is
            yield position, text if text is not None else _from_file(tasks[position])


def _from_file(task: Task) -> str:
    try:
        with open(task.file_path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _changed(task, f"cannot be read again ({exc})") from None
    parsed = parse_task(text, file_path=task.file_path, group=task.group, archived=task.archived)
    if not isinstance(parsed, Task) or not _same_fields(parsed, task):
        raise _changed(task, "changed since it was loaded")
    return parsed.raw_body  # the text itself, even one NUL (not a row's: the file's)


def _same_fields(found: Task, task: Task) -> bool:
    """Whether ``found`` (a file's task) has ``task``'s fields, its body and what another
    worktree gives it aside (its provenance; its status and dates, when it has one)."""
    given: dict[str, object] = {
        "raw_body": task.raw_body,
        "worktree": task.worktree,
        "branch": task.branch,
        "sibling_only": task.sibling_only,
    }
    if task.worktree is not None:
        given.update(
            status=task.status, completed_at=task.completed_at, cancelled_at=task.cancelled_at
        )
    return msgspec.structs.replace(found, **given) == task


def _changed(task: Task, why: str) -> TaskToolError:
    return TaskToolError(
        f"the file of task {task.id}, {task.file_path}, {why}: its body is no longer the one "
        "loaded with its fields; run the command again",
        code="task.changed",
    )
