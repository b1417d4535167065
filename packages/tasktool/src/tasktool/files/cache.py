"""The parse cache: msgpack files under ``<task dir>/.tasktool/cache/`` (their format and
readers: :mod:`tasktool.files.cache_files`).

The head file holds, per scanned folder, its own signature, the subfolders the walk
entered, its ``.md`` file names and their signatures (:mod:`tasktool.files.signature`)
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
(``rows-N.ids.msgpack``, :mod:`tasktool.files.id_columns`), written with it and deleted
with it: what ``get`` looks an id up in.

The tasks' bodies are half of the bytes and most commands never show them, so they
live in another file (``bodies-N``) read only when asked for. Each row names its
body's slot in that file; a scan without bodies that re-parsed a few files rewrites
only the head and those rows, which carry their bodies inline (slot -1). The head
carries the body file's random token: a body file left by another run (two processes
writing at once, a crash between two renames) does not match and the cache counts as
missing, never as a mix of two runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from tasktool.files import signature
from tasktool.files.cache_files import (
    FORMAT,
    ROWS_PREFIX,
    BodyFile,
    Folder,
    Head,
    Row,
    body_path,
    cache_path,
    columns_name,
    encoder,
    ignore_entries,
    no_collection,
    projected,
    read_bodies,
    read_head,
    read_rows,
    read_some_rows,
    rows_bytes,
    rows_name,
)
from tasktool.files.storage import STATE_DIR, atomic_write_bytes, ensure_state_dir
from tasktool.model.task import natural_key

if TYPE_CHECKING:
    from tasktool.files.id_columns import IdColumns

__all__ = ["ORPHAN_AGE_NS", "Order", "ParseCache", "result_order", "updated_order"]

#: A rows file no head names is deleted once this old: until then a run that read the
#: head before, or a writer whose head is not written yet, may still need it.
ORPHAN_AGE_NS = 60 * 1_000_000_000

#: Row numbers in result order: active tasks, archived tasks, broken files.
Order = tuple[list[int], list[int], list[int]]


def _task_key(row: Row) -> tuple[object, ...]:
    task = row.task
    assert task is not None
    return (natural_key(task.id), task.file_path)


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
    tasks.sort(key=lambda number: _task_key(rows[number]))
    archived.sort(key=lambda number: _task_key(rows[number]))
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
    """A cache write, encoded: the body file (``None``: kept), the new rows files and
    their columns (name, bytes), the head, and every rows file the head names."""

    bodies: bytes | None
    written: list[tuple[str, bytes]]
    head: bytes
    token: bytes
    files: list[str]


class ParseCache:
    """The previous run's head (``None``: no usable cache) and, on demand, its rows."""

    def __init__(self, root: Path | None, found: tuple[Head, bytes] | None) -> None:
        self.root = root
        self.path = cache_path(root) if root is not None else None
        self._found = found
        self.head = found[0] if found is not None else None
        self._rows: list[Row] | None = None

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

    def rows(self, *, bodies: bool) -> list[Row] | None:
        """The cached rows (folder by folder, name by name), with their tasks' bodies when
        ``bodies``; ``None`` when they do not decode or the body file does not match."""
        if self._found is None or self.path is None:
            return None
        head = self._found[0]
        if self._rows is None:
            rows = read_rows(self.root, head) if self.root is not None else None
            parts = (head.tasks, head.archived, head.broken)
            if rows is None or any(
                part and (min(part) < 0 or max(part) >= len(rows)) for part in parts
            ):
                return None  # gone, damaged, or an order naming a row not there
            self._rows = rows
        if not bodies:
            return self._rows
        texts = read_bodies(self.path, head.token)
        if texts is None:
            return None
        replace = msgspec.structs.replace
        try:
            with no_collection():
                return [
                    row
                    if row.task is None or row.slot < 0
                    else replace(row, task=replace(row.task, body=texts[row.slot]))
                    for row in self._rows
                ]
        except IndexError:
            return None

    def id_columns(self) -> list[IdColumns] | None:
        """Each folder's columns of ids (:mod:`tasktool.files.id_columns`), in the head's
        order: read from beside its rows file, where :meth:`write` puts them; built from
        its rows and kept again when missing or damaged (best effort). ``None`` when a
        rows file no longer reads (a later writer deleted it)."""
        from tasktool.files.id_columns import Fields, IdColumns  # get alone reads them

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
        """The rows numbered ``numbers`` without their bodies, in that order: for a command
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
        return [found[number] for number in numbers] if found is not None else None

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
        bodies: bool = True,
        same: Mapping[int, int] | None = None,
    ) -> bytes | None:
        """Write the cache: ``rows`` one per name of ``folders``, in order, as a walk
        with ``ignore`` found them; ``order`` is their :func:`result_order`. Returns the
        :attr:`identity` of what was written (``None`` when nothing was).

        ``same`` maps a folder's number to that of a cached folder with the same rows:
        writing the head only, its rows file is named again, not written.

        With ``bodies`` every task carries its body and every file is written; without,
        the head and the rows files of the folders not in ``same``, the rows keeping their
        slots in the current body file. Each rows file is written once under a new name
        and the head replaced atomically last, so a reader sees one whole cache or the
        other. Best effort: a read-only task directory just stays uncached.
        """
        if self.path is None or (not bodies and self.head is None):
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
            reused = same if same is not None and not bodies else {}
            encoded = self._encode(folders, rows, order, ignore, bodies=bodies, same=reused)
        except (OSError, UnicodeEncodeError):  # a name that is not UTF-8 stays uncached
            return None
        return self._commit(encoded)

    def _encode(
        self,
        folders: list[Folder],
        rows: list[Row],
        order: Order,
        ignore: Sequence[str],
        *,
        bodies: bool,
        same: Mapping[int, int],
    ) -> _Encoded:
        """The files of a write (see :meth:`write`), encoded: with ``bodies`` the body
        file and every folder's rows (their bodies moved out, each naming its slot), else
        the rows of the folders not in ``same``."""
        from tasktool.files.id_columns import IdColumns  # a warm run writes nothing

        replace = msgspec.structs.replace
        before = self.head.files if self.head is not None else []
        encoded_bodies = None
        with no_collection():
            if bodies:
                token = os.urandom(16)
                texts = [row.task.body if row.task else "" for row in rows]
                rows = [
                    Row(replace(row.task, body=""), None, number) if row.task else row
                    for number, row in enumerate(rows)
                ]
                encoded_bodies = encoder.encode(BodyFile(FORMAT, token, texts))
            else:
                assert self.head is not None
                token = self.head.token
            files: list[str] = []
            written: list[tuple[str, bytes]] = []
            start = 0
            for number, folder in enumerate(folders):
                was = same.get(number)
                if not len(folder):
                    files.append("")
                elif was is not None and was < len(before) and before[was]:
                    files.append(before[was])
                else:
                    name = f"{ROWS_PREFIX}{os.urandom(8).hex()}.msgpack"
                    part = rows[start : start + len(folder)]
                    columns = IdColumns.of([row.task for row in part])
                    files.append(name)
                    written.append((name, encoder.encode(part)))
                    written.append((columns_name(name), encoder.encode(columns)))
                start += len(folder)
            head = Head(FORMAT, token, ignore_entries(ignore), folders, files, *order)
            return _Encoded(encoded_bodies, written, encoder.encode(head), token, files)

    def _commit(self, encoded: _Encoded) -> bytes | None:
        """Write the encoded files, the head last, then remove what no head names; the
        identity of the cache written (``None``: nothing was)."""
        assert self.path is not None
        try:
            # Bodies and rows first: a reader that sees the new head finds them (or, if
            # another process wrote in between, a body token that does not match).
            if encoded.bodies is not None:
                atomic_write_bytes(body_path(self.path), encoded.bodies, sync=False)
            for name, blob in encoded.written:
                atomic_write_bytes(self.path.with_name(name), blob, sync=False)
            stat = atomic_write_bytes(self.path, encoded.head, sync=False)
        except OSError:
            return None
        before = self.head.files if self.head is not None else []
        self._remove_unused({*encoded.files, *before})
        return encoded.token + signature.of(stat)

    def _remove_unused(self, named: set[str]) -> None:
        """Delete the parse cache files an older or newer tasktool left (never read), and
        the rows files that neither this head nor the one before names (with their
        columns of ids), once old enough that no run still reads them
        (:data:`ORPHAN_AGE_NS`). Other files (the config file's cache, when the config
        sits in the task directory) are left alone."""
        assert self.path is not None
        ours = {self.path.name, body_path(self.path).name}
        old_enough = time.time_ns() - ORPHAN_AGE_NS
        try:
            for stale in self.path.parent.glob("*.msgpack"):
                name = stale.name
                if name in ours or name in named:
                    continue
                if name.startswith(ROWS_PREFIX):
                    if rows_name(name) in named:
                        continue  # the columns of a named rows file
                    if stale.stat().st_mtime_ns < old_enough:
                        stale.unlink(missing_ok=True)
                elif name.startswith(("tasks-", "bodies-tasks-")):
                    stale.unlink(missing_ok=True)
        except OSError:
            return
