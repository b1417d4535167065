"""A sibling worktree's task statuses, from a small index file of their own.

The worktree overlay needs, of each task in a sibling worktree, only its id, status,
completion dates, archived flag and file; the whole task only for the few that exist only
there. This module keeps exactly that per sibling task directory, in a file of the
*current* worktree's state directory (``<task dir>/.tasktool/worktrees/<key>.msgpack``;
the sibling's files are never written), independent of the parse cache's format::

    index = read_index(sibling_task_dir, ignore, store=index_path(my_task_dir, ...))
    index.ids, index.statuses  # each id's first copy (active before archived) and its status
    index.copy(row)            # that copy's dates, archived flag and file
    index.load(row)            # the whole task (kept in the index once asked for)
    index.save()               # writes the index back if load() added a task to it
    index.identity             # identifies its content (part of the overlay memo's key)

The index answers only while it is current, checked on every read with one ``stat``
per folder the scan enters and one per file (no directory listing, no parse), their
signatures (:mod:`tasktool.files.caches.signature`) joined and compared with the stored
bytes; the rest (ids, statuses, dates, whole tasks) is decoded only when the overlay
reads it, which a remembered verdict spares:

- a file created, deleted or renamed in a folder changes that folder's signature;
- an edit in place changes only the file's signature, so the per-file ``stat`` cannot
  be skipped.

Otherwise the folders are walked again and only the files whose signature changed
are parsed (through the full scan when there are many, which uses the sibling's own
parse cache). Files and folders changed within the last moments (racy timestamps)
are stored with a signature that never matches, so the next run looks again.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Iterable
from pathlib import Path

import msgspec

from tasktool.files.caches import signature
from tasktool.files.caches.cache_files import no_collection
from tasktool.files.caches.digest import blake2b
from tasktool.files.caches.memo import commit
from tasktool.files.parsing.read import read_entry
from tasktool.files.scanning.scan import scan_tasks
from tasktool.files.scanning.walk import walk
from tasktool.files.storage import STATE_DIR
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task, natural_key

__all__ = ["INDEX_DIR", "IndexedCopy", "SiblingIndex", "index_path", "prune_indexes", "read_index"]

#: 2: signatures as one bin (skipped in O(1) by a warm read); 3: the columns a warm read
#: does not check as one bin too, decoded only when the overlay reads them; the folders'
#: signatures with the files', compared as bytes (the digest is the memo's key only);
#: 4: the signatures of :mod:`tasktool.files.caches.signature`, joined; 5: Backlog.md's
#: field names read.
_FORMAT = "sibling-index-5"
INDEX_DIR = "worktrees"
#: Beyond this many changed files a rebuild parses through the full scan (and its cache).
_BULK = 100


class IndexedCopy(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What the overlay reads of a sibling's task (``tasktool.planning.worktrees.overlay.Copy``)."""

    id: str
    status: str
    completed_at: str | None
    cancelled_at: str | None
    archived: bool
    file_path: str


class _Columns(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """What each row holds, one column per field (rows as in :class:`_IndexFile`)."""

    ids: list[str]
    statuses: list[str]  # "" for a row that is no task
    completed: list[str | None]
    cancelled: list[str | None]
    archived: list[bool]
    wholes: dict[str, msgspec.Raw]  # path -> encoded Task, for tasks load() was asked for


class _IndexFile(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """The index on disk. Rows: each task id's first copy in scan order (active by natural
    id, then archived), then every other file (a second copy; a broken file, with the id it
    shows or ``""``; a file that is no task: id ``""``). A warm read decodes only what it
    checks: when the overlay's verdict is remembered (:mod:`tasktool.planning.memos.overlay_memo`),
    nothing else is read."""

    format: str
    root: str
    ignore: tuple[str, ...]
    folders: list[str]  # relative to root ("" is root itself)
    paths: list[str]  # relative to root
    #: The folders' and the files' signatures, in that order, joined: a warm read joins
    #: the ones it finds and compares the bytes (no decoding, no hash).
    signatures: bytes
    #: A digest of ``signatures``, made with them: what identifies this content; empty
    #: when some entry is racy (see :attr:`SiblingIndex.identity`).
    identity: bytes
    tasks: int  # the first ``tasks`` rows are first copies of tasks
    columns: bytes  # _Columns encoded (a bin: a warm read skips it in O(1))


_decoder = msgspec.msgpack.Decoder(_IndexFile)
_columns_decoder = msgspec.msgpack.Decoder(_Columns)
_task_decoder = msgspec.msgpack.Decoder(Task)
_encoder = msgspec.msgpack.Encoder()


def _digest(signatures: bytes) -> bytes:
    return blake2b(signatures, digest_size=16).digest()


def index_path(state_root: Path, task_dir: Path, ignore: tuple[str, ...]) -> Path:
    """Where the index of ``task_dir`` (scanned with ``ignore``) lives, under the state
    directory of the task directory ``state_root`` (the current worktree's)."""
    key = blake2b(repr((str(task_dir), ignore)).encode(), digest_size=12).hexdigest()
    return state_root / STATE_DIR / INDEX_DIR / f"{key}.msgpack"


def prune_indexes(state_root: Path, keep: Iterable[Path | None]) -> None:
    """Delete the indexes of task directories no longer read (a removed worktree's)."""
    kept = {path.name for path in keep if path is not None}
    try:
        with os.scandir(state_root / STATE_DIR / INDEX_DIR) as entries:
            stale = [entry.path for entry in entries if entry.name not in kept]
        for path in stale:
            os.unlink(path)
    except OSError:
        return


class _IndexRow(msgspec.Struct, frozen=True):
    path: str
    signature: bytes
    id: str
    status: str
    completed: str | None
    cancelled: str | None
    archived: bool

    @classmethod
    def of(cls, path: str, sig: bytes, parsed: Task | Diagnostic | None) -> _IndexRow:
        if isinstance(parsed, Task):
            return cls(
                path,
                sig,
                parsed.id,
                parsed.status,
                parsed.completed_at,
                parsed.cancelled_at,
                parsed.archived,
            )
        task_id = parsed.task_id if isinstance(parsed, Diagnostic) else None
        return cls(path, sig, task_id or "", "", None, None, False)


class SiblingIndex:
    """A current index of one sibling task directory (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        data: _IndexFile,
        store: Path | None,
        *,
        dirty: bool,
        columns: _Columns | None = None,
        use_cache: bool = True,
    ) -> None:
        self.root = root
        self._data = data
        #: The index file (``None``: not stored, e.g. a run without caches).
        self.store = store
        self._dirty = dirty
        self._decoded = columns
        self._use_cache = use_cache

    @property
    def _columns(self) -> _Columns:
        """The rows' columns, decoded on first use; an index damaged inside them (its
        checked part intact) is rebuilt from the files."""
        if self._decoded is None:
            self._decoded = _decode_columns(self._data)
            if self._decoded is None:
                ignore = self._data.ignore
                self._data, self._decoded = _rebuild(self.root, ignore, None, self._use_cache)
                self._dirty = True
        return self._decoded

    @property
    def ids(self) -> list[str]:
        """Each task id's first copy (an active copy before an archived one, an earlier
        file before a later one); each id once. Its row numbers are :attr:`statuses`'."""
        columns = self._columns  # first: a damaged index is rebuilt, with new rows
        return columns.ids[: self._data.tasks]

    @property
    def statuses(self) -> list[str]:
        """The status of each copy in :attr:`ids`."""
        columns = self._columns
        return columns.statuses[: self._data.tasks]

    @property
    def identity(self) -> bytes | None:
        """What identifies this index's content, a digest of every folder's and file's
        signature it holds: while the index is current (it is, once read), the same
        identity, the same content. ``None`` while a file or folder changed a moment ago
        (racy): its signature is stored as one that never matches, so it no longer tells
        the content, which may change again (an edit in place within the same timestamp
        tick) under the same identity."""
        return self._data.identity or None

    @property
    def taken(self) -> frozenset[str]:
        """Every id a file here holds or shows (broken files included)."""
        return frozenset(self._columns.ids) - {""}

    def copy(self, row: int) -> IndexedCopy:
        """The copy in row ``row`` of :attr:`ids`."""
        columns = self._columns
        return IndexedCopy(
            id=columns.ids[row],
            status=columns.statuses[row],
            completed_at=columns.completed[row],
            cancelled_at=columns.cancelled[row],
            archived=columns.archived[row],
            file_path=os.path.join(self.root, self._data.paths[row]),
        )

    def load(self, row: int) -> Task | None:
        """The whole task of :meth:`copy`; ``None`` when its file no longer holds it."""
        columns = self._columns
        task_id, relative = columns.ids[row], self._data.paths[row]
        raw = columns.wholes.get(relative)
        if raw is not None:
            try:
                return _task_decoder.decode(raw)
            except msgspec.DecodeError:  # written by a version whose Task differs
                pass
        whole = read_entry(str(self.root), os.path.join(self.root, relative))
        if not isinstance(whole, Task) or whole.id != task_id:
            return None
        columns.wholes[relative] = msgspec.Raw(_encoder.encode(whole))
        self._dirty = True
        return whole

    def save(self) -> None:
        """Write the index if this run changed it (best effort, atomic)."""
        if not self._dirty or self.store is None:
            return
        data = self._data
        if self._decoded is not None:
            data = msgspec.structs.replace(data, columns=_encoder.encode(self._decoded))
        try:
            encoded = _encoder.encode(data)
        except UnicodeEncodeError:  # a path that is not UTF-8: such a tree stays unkept
            return
        if commit(self.store, encoded):
            self._dirty = False


def _decode_columns(data: _IndexFile) -> _Columns | None:
    """``data``'s columns; ``None`` when they do not decode or do not fit its rows."""
    try:
        columns = _columns_decoder.decode(data.columns)
    except msgspec.DecodeError:
        return None
    rows = len(data.paths)
    fields = (columns.ids, columns.statuses, columns.completed, columns.cancelled)
    if any(len(field) != rows for field in (*fields, columns.archived)) or data.tasks > rows:
        return None
    return columns


def _current(root: Path, data: _IndexFile) -> bool:
    """Whether every folder and file still has its recorded signature."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    stat = os.stat
    try:
        # The floor of a warm read: one ``stat`` per entry, each kept to a plain call (no
        # ``partial``), packed in one call, without the collections its many short-lived
        # results set off.
        with no_collection():
            folders = [stat(folder or ".", dir_fd=fd) for folder in data.folders]
            files = [stat(path, dir_fd=fd) for path in data.paths]
            return signature.of_all(folders + files) == data.signatures
    except (OSError, OverflowError, struct.error):
        return False
    finally:
        os.close(fd)


def _load(store: Path, root: Path, ignore: tuple[str, ...]) -> _IndexFile | None:
    try:
        data = _decoder.decode(store.read_bytes())
    except (OSError, msgspec.DecodeError):
        return None
    if data.format != _FORMAT or data.root != str(root) or data.ignore != ignore:
        return None
    return data


def _parse(
    root: Path, ignore: tuple[str, ...], changed: list[str], *, use_cache: bool
) -> dict[str, Task | Diagnostic | None]:
    """What each changed file (relative path) parses to."""
    base = str(root)
    if len(changed) <= _BULK:
        return {path: read_entry(base, os.path.join(base, path)) for path in changed}
    scan = scan_tasks(root, ignore, use_cache=use_cache)
    found: dict[str, Task | Diagnostic | None] = {
        item.file_path: item for item in (*scan.tasks, *scan.archived)
    }
    found.update((problem.file, problem) for problem in scan.broken if problem.file)
    return {path: found.get(os.path.join(base, path)) for path in changed}


def _known(old: _IndexFile | None, columns: _Columns | None) -> dict[str, _IndexRow]:
    """The rows of the previous index, by path."""
    if old is None or columns is None:
        return {}
    joined = old.signatures[len(old.folders) * signature.SIZE :]
    if len(joined) != len(old.paths) * signature.SIZE:
        return {}
    sigs = [signature.at(joined, index) for index in range(len(old.paths))]
    fields = (columns.ids, columns.statuses, columns.completed, columns.cancelled)
    return {
        path: _IndexRow(path, sig, *row)
        for path, sig, *row in zip(old.paths, sigs, *fields, columns.archived, strict=True)
    }


def _ordered(rows: list[_IndexRow]) -> tuple[list[_IndexRow], int]:
    """Rows in index order, and how many first copies lead."""
    tasks = sorted(
        (row for row in rows if row.status),
        key=lambda row: (row.archived, natural_key(row.id), row.path),
    )
    first: list[_IndexRow] = []
    rest: list[_IndexRow] = []
    seen: set[str] = set()
    for row in tasks:
        (rest if row.id in seen else first).append(row)
        seen.add(row.id)
    rest += sorted((row for row in rows if not row.status), key=lambda row: row.path)
    return first + rest, len(first)


def _rebuild(
    root: Path, ignore: tuple[str, ...], old: _IndexFile | None, use_cache: bool
) -> tuple[_IndexFile, _Columns]:
    """Walk the folders again; parse only the files whose signature changed."""
    racy_after = time.time_ns() - signature.RACY_NS  # changed since the walk began: racy
    old_columns = _decode_columns(old) if old is not None else None
    known = _known(old, old_columns)
    folders: list[str] = []
    rows: list[_IndexRow] = []
    changed: list[tuple[str, bytes]] = []
    for listing, directory in walk(root, ignore):
        folders.append(directory)
        for index, name in enumerate(listing.listed()):
            path = f"{directory}/{name}" if directory else name
            sig = listing.signature(index)
            if signature.mtime(sig) > racy_after:
                sig = signature.UNSETTLED
            row = known.get(path)
            if row is not None and sig != signature.UNSETTLED and row.signature == sig:
                rows.append(row)
            else:
                changed.append((path, sig))
    parsed = _parse(root, ignore, [path for path, _ in changed], use_cache=use_cache)
    rows += [_IndexRow.of(path, sig, parsed[path]) for path, sig in changed]
    rows, first = _ordered(rows)
    sigs: list[bytes] = []
    for folder in folders:
        try:
            sigs.append(signature.settled(os.stat(root / folder), racy_after))
        except OSError:
            sigs.append(signature.UNSETTLED)
    sigs += [row.signature for row in rows]
    signatures = b"".join(sigs)
    kept = {row.path for row in rows}.difference(path for path, _ in changed)
    old_wholes = old_columns.wholes if old_columns is not None else {}
    columns = _Columns(
        ids=[row.id for row in rows],
        statuses=[row.status for row in rows],
        completed=[row.completed for row in rows],
        cancelled=[row.cancelled for row in rows],
        archived=[row.archived for row in rows],
        wholes={path: raw for path, raw in old_wholes.items() if path in kept},
    )
    data = _IndexFile(
        format=_FORMAT,
        root=str(root),
        ignore=ignore,
        folders=folders,
        paths=[row.path for row in rows],
        signatures=signatures,
        identity=b"" if signature.UNSETTLED in sigs else _digest(signatures),
        tasks=first,
        columns=_encoder.encode(columns),
    )
    return data, columns


def read_index(
    root: Path, ignore: tuple[str, ...], store: Path | None, *, use_cache: bool = True
) -> SiblingIndex:
    """The current index of the task directory ``root``: the stored one when every
    signature still matches, else rebuilt (and written to ``store``, unless ``None``)."""
    old = _load(store, root, ignore) if store is not None and use_cache else None
    if old is not None and _current(root, old):
        return SiblingIndex(root, old, store, dirty=False, use_cache=use_cache)
    data, columns = _rebuild(root, ignore, old, use_cache)
    kept = store if use_cache else None
    index = SiblingIndex(root, data, kept, dirty=True, columns=columns, use_cache=use_cache)
    index.save()
    return index
