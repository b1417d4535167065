"""The parse cache: msgpack files under ``<task dir>/.tasktool/cache/`` (their format and
readers: :mod:`tasktool.files.caches.cache_files`).

The head file holds, per scanned folder, its own signature, the subfolders the walk
entered, its ``.md`` file names and their signatures (:mod:`tasktool.files.caches.signature`)
as two strings, and the name of the folder's rows file: what each file parsed to (a
task, a broken file or nothing) as one msgpack array, decoded only when a scan needs it.
Then the result order. A warm scan compares each folder's names and signatures with two
string comparisons and, when nothing changed, decodes the rows and is done (no sorting,
no per-file lookups). A missing, stale or corrupt cache is rebuilt silently; a read-only
task directory just runs uncached.

A rows file is written once, under a new random name, and never changed: a write after
one file changed writes that folder's rows and the head, and names the other folders'
files again. The head is replaced atomically last, so a reader holds one head and the
files it names; files that neither the new head nor the one before it names are deleted
once a minute old. Each rows file has its columns of ids beside it
(``rows-N.ids.msgpack``, :mod:`tasktool.files.caches.id_columns`), written with it and deleted
with it: what ``get`` looks an id up in.

The tasks' bodies are half of the bytes and most commands never show them, so each rows
file has a body store beside it (``rows-N.bodies``, written with it, deleted with it,
its length in the head): a row's task holds :data:`~tasktool.model.task.KEPT`, and
the cache's :class:`~tasktool.files.caches.bodies.Bodies` read it from the row's place in the
store on first use. A folder's new rows file takes its bodies along, those
of the files parsed now and those of the unchanged ones (copied from the old store), so
every store stands alone.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from tasktool.files.caches import bodies, signature
from tasktool.files.caches.cache_files import (
    FORMAT,
    ROWS_PREFIX,
    Folder,
    Head,
    Row,
    cache_path,
    columns_name,
    encoder,
    ignore_entries,
    no_collection,
    projected,
    read_head,
    read_rows,
    read_some_rows,
    rows_bytes,
    rows_name,
)
from tasktool.files.storage import STATE_DIR, atomic_write_bytes, ensure_state_dir
from tasktool.model.errors import TaskToolError
from tasktool.model.task import KEPT, natural_key

if TYPE_CHECKING:
    from tasktool.files.caches.id_columns import IdColumns

__all__ = ["ORPHAN_AGE_NS", "Order", "ParseCache", "result_order", "updated_order"]

#: A rows file no head names is deleted once this old: until then a run that read the
#: head before, or a writer whose head is not written yet, may still need it.
ORPHAN_AGE_NS = 60 * 1_000_000_000

#: Row numbers in result order: active tasks, archived tasks, broken files.
Order = tuple[list[int], list[int], list[int]]


def _bodies_moved(
    rows: Sequence[Row], kept: bodies.Bodies, old: bodies.Part | None
) -> tuple[list[Row], bytes]:
    """One folder's rows with their tasks' bodies moved out (each task :data:`KEPT`) and
    their body store: the bodies held inline, and those kept in the folder's old store
    (``old``: its rows as this cache read them, in ``kept``) copied from it."""
    replace = msgspec.structs.replace
    texts = kept.stored(old, [row.task for row in rows])
    moved = [
        row
        if row.task is None or row.task.raw_body == KEPT
        else Row(replace(row.task, raw_body=KEPT))
        for row in rows
    ]
    return moved, bodies.encode_store(texts)


def _task_key(row: Row) -> tuple[object, ...]:
    task = row.task
    assert task is not None
    return (natural_key(task.id), task.file_path)


def _sort_tasks(rows: Sequence[Row], numbers: list[int]) -> None:
    """Sort row numbers by :func:`_task_key`. When every id is all ASCII digits (nearly
    every repository), ``(int(id), file)`` orders them as that key does (its natural key
    is then ``((0, int(id)),)``) at a fraction of the cost: a third of a cold scan's
    serial work at 100,000 tasks (docs/benchmarks.md); when no two ids are one number,
    by the number alone (no tuple per task)."""
    tasks = [rows[number].task for number in numbers]
    ids = [task.id for task in tasks]  # type: ignore[union-attr]
    joined = "".join(ids)
    if joined.isascii() and joined.isdigit() and all(ids):
        ints = list(map(int, ids))
        if len(set(ints)) == len(ints):  # no two ids one number: the number alone orders
            numbers[:] = [numbers[at] for at in sorted(range(len(ints)), key=ints.__getitem__)]
            return
        paths = [task.file_path for task in tasks]  # type: ignore[union-attr]
        # Files differ, so no two keys tie and the row numbers are never compared.
        ordered = sorted(zip(ints, paths, numbers, strict=True))
        numbers[:] = [number for _id, _path, number in ordered]
        return
    numbers.sort(key=lambda number: _task_key(rows[number]))


def _broken_key(row: Row) -> str:
    assert row.broken is not None
    return row.broken.file or ""


def result_order(rows: Sequence[Row]) -> Order:
    """The row numbers of the active tasks and the archived ones (by natural id, then
    file) and of the broken files (by file): a cold scan's order."""
    tasks: list[int] = []
    archived: list[int] = []
    broken: list[int] = []
    for number, row in enumerate(rows):
        if row.task is not None:
            (archived if row.task.archived else tasks).append(number)
        elif row.broken is not None:
            broken.append(number)
    _sort_tasks(rows, tasks)
    _sort_tasks(rows, archived)
    broken.sort(key=lambda number: _broken_key(rows[number]))
    return tasks, archived, broken


def updated_order(
    rows: Sequence[Row], before: Order, moved: Sequence[int], fresh: Sequence[int]
) -> Order:
    """:func:`result_order` of ``rows`` from the previous order: its row numbers renumbered
    by ``moved`` (old number -> new, -1: gone), then the ``fresh`` rows inserted in place.
    The keys are total (files differ), so this is the order a full sort gives."""
    import bisect  # only when files changed: a warm run with none does not load it

    tasks, archived, broken = ([moved[n] for n in part if moved[n] >= 0] for part in before)
    for number in fresh:
        row = rows[number]
        if row.task is not None:
            part = archived if row.task.archived else tasks
            bisect.insort(part, number, key=lambda n: _task_key(rows[n]))
        elif row.broken is not None:
            bisect.insort(broken, number, key=lambda n: _broken_key(rows[n]))
    return tasks, archived, broken


class _Encoded(msgspec.Struct, frozen=True):
    """A cache write, encoded: the new rows files, their columns and body stores (name,
    bytes), the head, and every rows file the head names with its body store's length."""

    written: list[tuple[str, bytes]]
    head: bytes
    token: bytes
    files: list[str]
    stores: list[int]


class ParseCache:
    """The previous run's head (``None``: no usable cache) and, on demand, its rows."""

    def __init__(self, root: Path | None, found: tuple[Head, bytes] | None) -> None:
        self.root = root
        self.path = cache_path(root) if root is not None else None
        self._found = found
        self.head = found[0] if found is not None else None
        self._rows: list[Row] | None = None
        #: The rows decoded, by folder path, where their tasks find their bodies.
        self._parts: dict[str, bodies.Part] = {}
        #: The bodies of the rows it decoded, and the stores of the rows files its heads
        #: name (open while it is held): where its tasks' kept bodies are read.
        self.bodies = bodies.Bodies()
        if self.head is not None and self.path is not None:
            self.bodies.stores.know(str(self.path.parent), self.head.files, self.head.stores)

    @classmethod
    def empty(cls) -> ParseCache:
        return cls(None, None)

    @classmethod
    def open(cls, root: Path) -> ParseCache:
        return cls(root, read_head(root))

    @property
    def identity(self) -> bytes | None:
        """What identifies the cache's content (``None``: no cache): its head's token and
        the head file's signature. A scan answered from the cache alone returns the same
        result for the same identity, which is what a memo of something derived from it
        keys on."""
        if self._found is None:
            return None
        return self._found[0].token + self._found[1]

    @property
    def folders(self) -> list[Folder]:
        return self.head.folders if self.head is not None else []

    def rows(self) -> list[Row] | None:
        """The cached rows (folder by folder, name by name; their tasks' bodies read on
        first use); ``None`` when they do not decode."""
        if self._found is None or self.path is None:
            return None
        head = self._found[0]
        if self._rows is None:
            parts = read_rows(self.root, head) if self.root is not None else None
            rows = [row for part in parts for row in part] if parts is not None else []
            order = (head.tasks, head.archived, head.broken)
            if parts is None or any(
                part and (min(part) < 0 or max(part) >= len(rows)) for part in order
            ):
                return None  # gone, damaged, or an order naming a row not there
            for folder, name, part in zip(head.folders, head.files, parts, strict=True):
                self._keep(folder, name, part)
            self._rows = rows
        return self._rows

    def _keep(self, folder: Folder, name: str, rows: Sequence[Row] | Mapping[int, Row]) -> None:
        """Register a folder's rows decoded (all, or some by index) with their store."""
        if name:
            number = bodies.store_number(name)
            part = bodies.Part(folder.path, folder.names, number, rows)
            self.bodies.add(part)
            self._parts[folder.path] = part

    def id_columns(self) -> list[IdColumns] | None:
        """Each folder's columns of ids (:mod:`tasktool.files.caches.id_columns`), in the head's
        order: read from beside its rows file, where :meth:`write` puts them; built from
        its rows and kept again when missing or damaged (best effort). ``None`` when a
        rows file no longer reads (a later writer deleted it)."""
        from tasktool.files.caches.id_columns import Fields, IdColumns  # get alone reads them

        if self.root is None or self.head is None:
            return None
        cache = os.path.join(self.root, STATE_DIR, "cache")
        kept = msgspec.msgpack.Decoder(IdColumns)
        columns: list[IdColumns] = []
        for folder, name in zip(self.head.folders, self.head.files, strict=True):
            if not name:
                columns.append(IdColumns.of([]))
                continue
            beside = os.path.join(cache, columns_name(name))
            with suppress(OSError, msgspec.DecodeError), open(beside, "rb") as handle:
                found = kept.decode(handle.read())
                if found.fits(len(folder)):
                    columns.append(found)
                    continue
            try:
                with no_collection():
                    rows = projected(Fields).decode(rows_bytes(self.root, name))
            except (OSError, msgspec.DecodeError):
                return None
            if len(rows) != len(folder):
                return None
            built = IdColumns.of([row.task for row in rows])
            with suppress(OSError):
                atomic_write_bytes(Path(beside), encoder.encode(built), sync=False)
            columns.append(built)
        return columns

    def rows_at(self, numbers: Sequence[int]) -> list[Row] | None:
        """The rows numbered ``numbers``, in that order: for a command
        that needs a few of them, read alone (:func:`read_some_rows`) unless all are
        decoded already; ``None`` as for :meth:`rows`."""
        if self._rows is not None:
            rows = self._rows
            if any(not 0 <= number < len(rows) for number in numbers):
                return None
            return [rows[number] for number in numbers]
        if self.root is None or self.head is None:
            return None
        found = read_some_rows(self.root, self.head, numbers)
        if found is None:
            return None
        import bisect  # get alone reads rows alone

        by_folder: dict[int, dict[int, Row]] = {}
        starts = list(
            itertools.accumulate((len(folder) for folder in self.head.folders), initial=0)
        )
        for number, row in found.items():
            at = bisect.bisect_right(starts, number) - 1
            by_folder.setdefault(at, {})[number - starts[at]] = row
        for at, some in by_folder.items():
            self._keep(self.head.folders[at], self.head.files[at], some)
        return [found[number] for number in numbers]

    def walked(self, ignore: Sequence[str]) -> list[Folder]:
        """The folders of the walk the cache holds when it was made with this ``ignore``
        setting (none otherwise: another setting enters other subfolders)."""
        if self.head is None or self.head.ignore != ignore_entries(ignore):
            return []
        return self.head.folders

    def write(
        self,
        folders: list[Folder],
        rows: list[Row],
        order: Order,
        *,
        ignore: Sequence[str] = (),
        same: Mapping[int, int] | None = None,
    ) -> bytes | None:
        """Write the cache: ``rows`` one per name of ``folders``, in order, as a walk
        with ``ignore`` found them; ``order`` is their :func:`result_order`. Returns the
        :attr:`identity` of what was written (``None`` when nothing was).

        ``same`` maps a folder's number to that of a cached folder with the same rows:
        writing the head only, its rows file is named again, not written.

        Each rows file (with its columns and body store) is written once under a new name
        and the head replaced atomically last, so a reader sees one whole cache or the
        other. Best effort: a read-only task directory just stays uncached, and so does
        one whose body a changed file no longer gives (``task.changed``).
        """
        if self.path is None:
            return None
        task_dir = self.path.parent.parent.parent
        if not (task_dir / STATE_DIR).is_dir():
            # Making the state directory changes the task directory after the walk
            # recorded its signature: the next walk lists it again.
            unsettled = signature.UNSETTLED
            folders = [
                msgspec.structs.replace(folder, own=unsettled)
                if folder.path == str(task_dir)
                else folder
                for folder in folders
            ]
        try:
            ensure_state_dir(task_dir)
            self.path.parent.mkdir(exist_ok=True)
            encoded = self._encode(folders, rows, order, ignore, same=same or {})
        except (OSError, UnicodeEncodeError, TaskToolError):  # e.g. a name that is not UTF-8
            return None
        return self._commit(encoded)

    def _encode(
        self,
        folders: list[Folder],
        rows: list[Row],
        order: Order,
        ignore: Sequence[str],
        *,
        same: Mapping[int, int],
    ) -> _Encoded:
        """The files of a write (see :meth:`write`), encoded: the rows of the folders not
        in ``same``, their bodies moved to the rows file's body store."""
        from tasktool.files.caches.id_columns import IdColumns  # a warm run writes nothing

        before = self.head.files if self.head is not None else []
        with no_collection():
            token = os.urandom(16)
            files: list[str] = []
            stores: list[int] = []
            written: list[tuple[str, bytes]] = []
            start = 0
            for number, folder in enumerate(folders):
                was = same.get(number)
                if not len(folder):
                    files.append("")
                    stores.append(0)
                elif was is not None and was < len(before) and before[was]:
                    files.append(before[was])
                    stores.append(self.head.stores[was] if self.head is not None else 0)
                else:
                    name = f"{ROWS_PREFIX}{os.urandom(8).hex()}.msgpack"
                    old = self._parts.get(folder.path)
                    part, store = _bodies_moved(rows[start : start + len(folder)], self.bodies, old)
                    columns = IdColumns.of([row.task for row in part])
                    files.append(name)
                    stores.append(len(store))
                    written.append((bodies.store_name(bodies.store_number(name)), store))
                    written.append((name, encoder.encode(part)))
                    written.append((columns_name(name), encoder.encode(columns)))
                start += len(folder)
            head = Head(FORMAT, token, ignore_entries(ignore), folders, files, stores, *order)
            return _Encoded(written, encoder.encode(head), token, files, stores)

    def _commit(self, encoded: _Encoded) -> bytes | None:
        """Write the encoded files, the head last, then remove what no head names; the
        identity of the cache written (``None``: nothing was)."""
        assert self.path is not None
        try:
            # Stores and rows first: a reader that sees the new head finds them.
            for name, blob in encoded.written:
                atomic_write_bytes(self.path.with_name(name), blob, sync=False)
            stat = atomic_write_bytes(self.path, encoded.head, sync=False)
        except OSError:
            return None
        before = self.head.files if self.head is not None else []
        self.bodies.stores.know(str(self.path.parent), encoded.files, encoded.stores)
        self._remove_unused({*encoded.files, *before})
        return encoded.token + signature.of(stat)

    def _remove_unused(self, named: set[str]) -> None:
        """Delete the parse cache files an older or newer tasktool left (never read), and
        the rows files that neither this head nor the one before names (with their
        columns of ids and body stores), once old enough that no run still reads them
        (:data:`ORPHAN_AGE_NS`). Other files (the config file's cache, when the config
        sits in the task directory) are left alone."""
        assert self.path is not None
        old_enough = time.time_ns() - ORPHAN_AGE_NS
        try:
            for stale in self.path.parent.iterdir():
                name = stale.name
                if name == self.path.name or name in named:
                    continue
                if name.startswith(ROWS_PREFIX):
                    if rows_name(name) in named:
                        continue  # the columns or body store of a named rows file
                    if stale.stat().st_mtime_ns < old_enough:
                        stale.unlink(missing_ok=True)
                elif name.startswith(("tasks-", "bodies-tasks-")) and name.endswith(".msgpack"):
                    stale.unlink(missing_ok=True)
        except OSError:
            return
