"""The parse cache: msgpack files under ``<task dir>/.tasktool/cache/``.

The head file holds, per scanned folder, its own signature, the subfolders the walk
entered, its ``.md`` file names and their stat signatures (size, mtime, ctime, inode: an
atomic rename gives a new inode even when size and mtime tick stay equal) packed into two
strings, and the name of the folder's rows file: what each file parsed to (a task, a
broken file or nothing) as one msgpack array, decoded only when a scan needs it. Then the
result order. A warm scan compares each folder's names and signatures with two string
comparisons and, when nothing changed, decodes the rows and is done (no sorting, no
per-file lookups). A missing, stale or corrupt cache is rebuilt silently; a read-only
task directory just runs uncached.

A rows file is written once, under a new random name, and never changed: a write after
one file changed writes that folder's rows and the head, and names the other folders'
files again (at 100,000 tasks ~12 MB instead of ~50). The head is replaced atomically
last, so a reader holds one head and the files it names; files that neither the new
head nor the one before it names are deleted once a minute old. Each rows file has its
columns of ids beside it (``rows-N.ids.msgpack``, :mod:`tasktool.files.id_columns`),
written with it and deleted with it: what ``get`` looks an id up in.

The tasks' bodies are half of the bytes and most commands never show them, so they
live in another file (``bodies-N``) read only when asked for. Each row names its
body's slot in that file; a scan without bodies that re-parsed a few files rewrites
only the head and those rows, which carry their bodies inline (slot -1). The head
carries the body file's random token: a body file left by another run (two processes
writing at once, a crash between two renames) does not match and the cache counts as
missing, never as a mix of two runs.
"""

from __future__ import annotations

import functools
import gc
import os
import struct
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from tasktool.files.storage import (
    STATE_DIR,
    atomic_write_bytes,
    ensure_state_dir,
)
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task, natural_key

if TYPE_CHECKING:
    from tasktool.files.id_columns import IdColumns

_FORMAT = "tasks-7"  # 5: rows by folder; 6: folder signatures; 7: a rows file per folder
#: A folder's rows file: this prefix, 16 hex digits, ``.msgpack`` (never rewritten).
_ROWS_PREFIX = "rows-"
_ROWS_NAME_LENGTH = len(_ROWS_PREFIX) + 16 + len(".msgpack")
#: A rows file no head names is deleted once this old: until then a run that read the
#: head before, or a writer whose head is not written yet, may still need it.
ORPHAN_AGE_NS = 60 * 1_000_000_000
#: One file's signature: size, mtime_ns, ctime_ns, inode.
_SIG = struct.Struct("<qqqQ")
SIG_SIZE = _SIG.size
_IDENTITY = struct.Struct("<Qqqq")
pack_signature = _SIG.pack
unpack_signature = _SIG.unpack
#: A signature that matches no file: a racy file (changed a moment ago) is parsed every
#: time until it settles, as git does.
UNSETTLED = _SIG.pack(-1, 0, 0, 0)


def signature_mtime(sig: bytes) -> int:
    """The mtime_ns of a packed signature."""
    mtime: int = _SIG.unpack(sig)[1]
    return mtime


class Folder(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """One scanned folder: its ``.md`` files' names in directory order (NUL-separated:
    a name cannot hold one) and their packed signatures, ``SIG_SIZE`` bytes each; the
    folder's own signature when it was listed (``UNSETTLED`` when it had changed a
    moment before) and the names of the subfolders the scan entered.

    Two strings per folder, not two per file: a head of 100,000 files decodes at once,
    and an unchanged folder is recognised by two string comparisons. Creating, deleting
    or renaming an entry changes a folder's mtime and ctime, so a folder whose
    signature is the same lists the same names: the next scan does not list it again.
    """

    path: str
    names: str
    sigs: bytes
    stamp: bytes = UNSETTLED
    subfolders: str = ""

    @classmethod
    def of(cls, path: str, names: list[str], sigs: list[bytes]) -> Folder:
        return cls(path, "\0".join(names), b"".join(sigs))

    def listed(self) -> list[str]:
        """The file names."""
        return self.names.split("\0") if self.names else []

    def entered(self) -> list[str]:
        """The names of the subfolders the scan entered, in directory order."""
        return self.subfolders.split("\0") if self.subfolders else []

    def signature(self, index: int) -> bytes:
        """The packed signature of the ``index``-th file."""
        return self.sigs[index * SIG_SIZE : (index + 1) * SIG_SIZE]

    def __len__(self) -> int:
        return len(self.sigs) // SIG_SIZE


# gc=False (here and on Row): they hold only strings, numbers and tuples (no cycles).
class CacheEntry(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """One file's stat signature and what it parsed to (a task, a broken file or nothing):
    the per-path view of :attr:`ParseCache.entries` and :meth:`ParseCache.store`, for tests
    and tools (scans work on folders and rows)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    task: Task | None = None
    broken: Diagnostic | None = None

    @property
    def signature(self) -> tuple[int, int, int, int]:
        return (self.size, self.mtime_ns, self.ctime_ns, self.inode)


class Row(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """What one file parsed to; ``slot`` is its body's index in the body file (-1: the
    body, if any, is the task's own)."""

    task: Task | None = None
    broken: Diagnostic | None = None
    slot: int = -1


def row_of(parsed: Task | Diagnostic | None) -> Row:
    """The row of a file parsed by this run (its body inline)."""
    return Row(*_split(parsed))


def _split(parsed: Task | Diagnostic | None) -> tuple[Task | None, Diagnostic | None]:
    return (
        parsed if isinstance(parsed, Task) else None,
        parsed if isinstance(parsed, Diagnostic) else None,
    )


class Head(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """The head: the ``ignore`` setting of the walk, its folders in walk order, the name
    of each folder's rows file (one msgpack array, one row per name; ``""`` for a folder
    without files), and the result order (row numbers of the active tasks, archived tasks
    and broken files)."""

    format: str
    token: bytes
    ignore: list[str]
    folders: list[Folder]
    files: list[str]
    tasks: list[int]
    archived: list[int]
    broken: list[int]


class _BodyFile(msgspec.Struct, frozen=True, array_like=True):
    format: str
    token: bytes
    bodies: list[str]


#: A cache file's identity as a read sees it: inode, size, mtime_ns, ctime_ns (an atomic
#: rewrite makes a new inode; the same four fields the cache trusts for task files).
Identity = tuple[int, int, int, int]

_head_decoder = msgspec.msgpack.Decoder(Head)
_rows_decoder = msgspec.msgpack.Decoder(list[Row])
_split_decoder = msgspec.msgpack.Decoder(list[msgspec.Raw])  # a folder's rows, each undecoded
_row_decoder = msgspec.msgpack.Decoder(Row)


@functools.cache
def _projected(kind: type[Any]) -> msgspec.msgpack.Decoder[list[Any]]:
    """A decoder of a folder's rows (as :class:`Row`) whose tasks decode as ``kind``."""
    fields = [("task", kind | None), ("broken", msgspec.Raw), ("slot", int)]  # Raw: skipped
    row = msgspec.defstruct("Projected", fields, array_like=True, frozen=True, gc=False)
    return msgspec.msgpack.Decoder(list[row])  # type: ignore[valid-type]


_body_decoder = msgspec.msgpack.Decoder(_BodyFile)
_encoder = msgspec.msgpack.Encoder()


@contextmanager
def no_collection() -> Iterator[None]:
    """Garbage collection paused: decoding 100,000 rows allocates tuples that would set off
    many collections, none of which can free anything (rows hold no cycles)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def ignore_entries(ignore: Sequence[str]) -> list[str]:
    """The ``ignore`` setting as a walk applies it: each entry without its slashes, once."""
    return sorted({entry.strip("/") for entry in ignore})


def cache_path(root: Path) -> Path:
    """The head file of the task directory ``root`` (its name carries the format)."""
    return root / STATE_DIR / "cache" / f"{_FORMAT}.msgpack"


def _identity(stat: os.stat_result) -> Identity:
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _identity_bytes(token: bytes, identity: Identity) -> bytes:
    """:attr:`ParseCache.identity` of the head file with this token and identity."""
    return token + _IDENTITY.pack(*identity)


def read_head(root: Path) -> tuple[Head, Identity] | None:
    """The current head of ``root``'s cache and the file's identity, or ``None`` (missing,
    corrupt, another version's)."""
    try:
        with open(cache_path(root), "rb") as handle:
            stat = os.fstat(handle.fileno())
            with no_collection():
                head = _head_decoder.decode(handle.read())
    except (OSError, msgspec.DecodeError):
        return None
    if (
        head.format != _FORMAT
        or len(head.files) != len(head.folders)
        or not all(map(_names_rows, head.folders, head.files))
    ):
        return None
    return head, _identity(stat)


def _names_rows(folder: Folder, name: str) -> bool:
    """Whether ``name`` can be the rows file of ``folder`` (a corrupt head could name any
    path): ``""`` when it has no file, else a rows file's name."""
    if not len(folder):
        return name == ""
    return (
        len(name) == _ROWS_NAME_LENGTH
        and name.startswith(_ROWS_PREFIX)
        and name.endswith(".msgpack")
        and "/" not in name
        and os.sep not in name
    )


def _rows_bytes(root: Path, name: str) -> bytes:
    with open(os.path.join(root, STATE_DIR, "cache", name), "rb") as handle:
        return handle.read()


def read_rows(root: Path, head: Head) -> list[Row] | None:
    """Every folder's rows, read and decoded a folder at a time; ``None`` when a rows file
    is gone (deleted by a later writer) or does not decode."""
    rows: list[Row] = []
    try:
        with no_collection():
            for folder, name in zip(head.folders, head.files, strict=True):
                if name:
                    part = _rows_decoder.decode(_rows_bytes(root, name))
                    if len(part) != len(folder):
                        return None
                    rows += part
    except (OSError, msgspec.DecodeError):
        return None
    return rows


def read_some_rows(root: Path, head: Head, numbers: Sequence[int]) -> dict[int, Row] | None:
    """The rows numbered ``numbers`` (counted folder by folder, name by name), each decoded
    alone: only the folders that hold one are read, and their other rows are only split
    apart. ``None`` when a number is out of range, or as for :func:`read_rows`."""
    wanted = sorted(set(numbers))
    if wanted and wanted[0] < 0:
        return None
    rows: dict[int, Row] = {}
    at = 0  # the next of ``wanted`` to find
    first = 0  # the folder's first row number
    try:
        for folder, name in zip(head.folders, head.files, strict=True):
            if at == len(wanted):
                break
            count = len(folder)
            if wanted[at] < first + count:
                items = _split_decoder.decode(_rows_bytes(root, name))
                if len(items) != count:
                    return None
                while at < len(wanted) and wanted[at] < first + count:
                    rows[wanted[at]] = _row_decoder.decode(items[wanted[at] - first])
                    at += 1
            first += count
    except (OSError, msgspec.DecodeError):
        return None
    return rows if at == len(wanted) else None


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


class ParseCache:
    """The previous run's head (``None``: no usable cache) and, on demand, its rows."""

    def __init__(self, root: Path | None, found: tuple[Head, Identity] | None) -> None:
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
        the file's identity. A scan answered from the cache alone returns the same result
        for the same identity, which is what a memo of something derived from it keys on."""
        if self._found is None:
            return None
        return _identity_bytes(self._found[0].token, self._found[1])

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
        try:
            with no_collection():
                body_file = _body_decoder.decode(_body_path(self.path).read_bytes())
        except (OSError, msgspec.DecodeError):
            return None
        if body_file.token != head.token or body_file.format != _FORMAT:
            return None
        texts = body_file.bodies
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
            beside = os.path.join(cache, _columns_name(name))
            with suppress(OSError, msgspec.DecodeError), open(beside, "rb") as handle:
                found = kept.decode(handle.read())
                if found.fits(len(folder)):
                    columns.append(found)
                    continue
            try:
                with no_collection():
                    rows = _projected(Fields).decode(_rows_bytes(self.root, name))
            except (OSError, msgspec.DecodeError):
                return None
            if len(rows) != len(folder):
                return None
            built = IdColumns.of([row.task for row in rows])
            with suppress(OSError):
                atomic_write_bytes(Path(beside), _encoder.encode(built), sync=False)
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

    @property
    def entries(self) -> dict[str, CacheEntry]:
        """Path -> entry of every file cached for good (not racy), bodies included."""
        rows = self.rows(bodies=True)
        if rows is None:
            return {}
        found: dict[str, CacheEntry] = {}
        numbers = iter(rows)
        for folder in self.folders:
            for index, name in enumerate(folder.listed()):
                row = next(numbers)
                sig = folder.signature(index)
                if sig != UNSETTLED:
                    size, mtime, ctime, inode = _SIG.unpack(sig)
                    entry = CacheEntry(size, mtime, ctime, inode, row.task, row.broken)
                    found[os.path.join(folder.path, name)] = entry
        return found

    def store(self, entries: dict[str, CacheEntry]) -> None:
        """Write ``entries`` (path -> entry, bodies included) as the whole new cache."""
        names: dict[str, list[str]] = {}
        sigs: dict[str, list[bytes]] = {}
        rows: dict[str, list[Row]] = {}
        for path, entry in entries.items():
            directory, name = os.path.split(path)
            names.setdefault(directory, []).append(name)
            sigs.setdefault(directory, []).append(pack_signature(*entry.signature))
            rows.setdefault(directory, []).append(Row(entry.task, entry.broken))
        flat = [row for part in rows.values() for row in part]
        folders = [Folder.of(path, listed, sigs[path]) for path, listed in names.items()]
        self.write(folders, flat, result_order(flat))

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
        from tasktool.files.id_columns import IdColumns  # a warm run writes nothing

        replace = msgspec.structs.replace
        task_dir = self.path.parent.parent.parent
        if not (task_dir / STATE_DIR).is_dir():
            # Making the state directory changes the task directory after the walk
            # recorded its signature: the next walk lists it again.
            folders = [
                replace(folder, stamp=UNSETTLED) if folder.path == str(task_dir) else folder
                for folder in folders
            ]
        before = self.head.files if self.head is not None else []
        reused = same if same is not None and not bodies else {}
        try:
            ensure_state_dir(task_dir)
            self.path.parent.mkdir(exist_ok=True)
            with no_collection():
                if bodies:
                    token = os.urandom(16)
                    texts = [row.task.body if row.task else "" for row in rows]
                    rows = [
                        Row(replace(row.task, body=""), None, number) if row.task else row
                        for number, row in enumerate(rows)
                    ]
                    encoded_bodies = _encoder.encode(_BodyFile(_FORMAT, token, texts))
                else:
                    assert self.head is not None
                    token = self.head.token
                files: list[str] = []
                written: list[tuple[str, bytes]] = []
                start = 0
                for number, folder in enumerate(folders):
                    was = reused.get(number)
                    if not len(folder):
                        files.append("")
                    elif was is not None and was < len(before) and before[was]:
                        files.append(before[was])
                    else:
                        name = f"{_ROWS_PREFIX}{os.urandom(8).hex()}.msgpack"
                        part = rows[start : start + len(folder)]
                        columns = IdColumns.of([row.task for row in part])
                        files.append(name)
                        written.append((name, _encoder.encode(part)))
                        written.append((_columns_name(name), _encoder.encode(columns)))
                    start += len(folder)
                head = _encoder.encode(
                    Head(_FORMAT, token, ignore_entries(ignore), folders, files, *order)
                )
        except UnicodeEncodeError:
            return None  # a file or folder name that is not UTF-8: such a tree stays uncached
        except OSError:
            return None
        try:
            # Bodies and rows first: a reader that sees the new head finds them (or, if
            # another process wrote in between, a body token that does not match).
            if bodies:
                atomic_write_bytes(_body_path(self.path), encoded_bodies, sync=False)
            for name, blob in written:
                atomic_write_bytes(self.path.with_name(name), blob, sync=False)
            stat = atomic_write_bytes(self.path, head, sync=False)
        except OSError:
            return None
        self._remove_unused({*files, *before})
        return _identity_bytes(token, _identity(stat))

    def _remove_unused(self, named: set[str]) -> None:
        """Delete the parse cache files an older or newer tasktool left (never read), and
        the rows files that neither this head nor the one before names (with their
        columns of ids), once old enough that no run still reads them
        (:data:`ORPHAN_AGE_NS`). Other files (the config file's cache, when the config
        sits in the task directory) are left alone."""
        assert self.path is not None
        ours = {self.path.name, _body_path(self.path).name}
        old_enough = time.time_ns() - ORPHAN_AGE_NS
        try:
            for stale in self.path.parent.glob("*.msgpack"):
                name = stale.name
                if name in ours or name in named:
                    continue
                if name.startswith(_ROWS_PREFIX):
                    if _rows_name(name) in named:
                        continue  # the columns of a named rows file
                    if stale.stat().st_mtime_ns < old_enough:
                        stale.unlink(missing_ok=True)
                elif name.startswith(("tasks-", "bodies-tasks-")):
                    stale.unlink(missing_ok=True)
        except OSError:
            return


def _columns_name(rows_name: str) -> str:
    """The name of the file that keeps a rows file's columns of ids."""
    return f"{rows_name.removesuffix('.msgpack')}.ids.msgpack"


def _rows_name(name: str) -> str:
    """The rows file a cache file named ``name`` (a rows file, or one kept beside one)
    belongs to."""
    return f"{name[: _ROWS_NAME_LENGTH - len('.msgpack')]}.msgpack"


def _body_path(path: Path) -> Path:
    return path.with_name(f"bodies-{path.name}")
