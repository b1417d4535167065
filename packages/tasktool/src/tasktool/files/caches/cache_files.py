"""The parse cache's files under ``<task dir>/.tasktool/cache/`` and how they are read
(:mod:`tasktool.files.caches.cache` writes them): the head, one rows file per folder and its body
store (read by :mod:`tasktool.files.caches.bodies`).

Each reader returns ``None`` for a file that is missing, corrupt or another version's:
the cache then counts as missing and is rebuilt.
"""

from __future__ import annotations

import functools
import gc
import mmap
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from tasktool.files.caches import signature
from tasktool.files.storage import STATE_DIR
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task

__all__ = [
    "FORMAT",
    "ROWS_PREFIX",
    "Folder",
    "Head",
    "Row",
    "cache_path",
    "columns_name",
    "encoder",
    "ignore_entries",
    "no_collection",
    "projected",
    "read_head",
    "read_rows",
    "read_some_rows",
    "row_of",
    "rows_bytes",
    "rows_name",
]

#: 5: rows by folder; 6: folder signatures; 7: a rows file per folder; 8: a body store per
#: rows file (a row's task holds :data:`~tasktool.model.task.KEPT` for its body); 9: Backlog.md's
#: field names read (``labels``, ``assignee``...) and an unquoted ``assignee: @name``.
FORMAT = "tasks-9"
#: A folder's rows file: this prefix, 16 hex digits, ``.msgpack`` (never rewritten).
ROWS_PREFIX = "rows-"
_ROWS_NAME_LENGTH = len(ROWS_PREFIX) + 16 + len(".msgpack")


class Folder(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """One scanned folder: its ``.md`` files' names in directory order (NUL-separated:
    a name cannot hold one) and their signatures, joined; the
    folder's own signature when it was listed (``signature.UNSETTLED`` when it had changed a
    moment before) and the names of the subfolders the scan entered
    (:mod:`tasktool.files.caches.signature`).

    Two strings per folder, not two per file: a head of 100,000 files decodes at once,
    and an unchanged folder is recognised by two string comparisons. Creating, deleting
    or renaming an entry changes a folder's mtime and ctime, so a folder whose
    signature is the same lists the same names: the next scan does not list it again.
    """

    path: str
    names: str
    sigs: bytes
    own: bytes = signature.UNSETTLED
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
        """The signature of the ``index``-th file."""
        return signature.at(self.sigs, index)

    def __len__(self) -> int:
        return len(self.sigs) // signature.SIZE


# gc=False (here and on Row): they hold only strings, numbers and tuples (no cycles).
class Row(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """What one file parsed to (a task's body inline when parsed by this run, else where
    the body store keeps it)."""

    task: Task | None = None
    broken: Diagnostic | None = None


def row_of(parsed: Task | Diagnostic | None) -> Row:
    """The row of a file parsed by this run (its body inline)."""
    if isinstance(parsed, Task):
        return Row(parsed)
    return Row() if parsed is None else Row(None, parsed)


class Head(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """The head: the ``ignore`` setting of the walk, its folders in walk order, the name
    of each folder's rows file (one msgpack array, one row per name; ``""`` for a folder
    without files) and the length of its body store (one that reads otherwise is damaged),
    and the result order (row numbers of the active tasks, archived tasks and broken
    files)."""

    format: str
    token: bytes
    ignore: list[str]
    folders: list[Folder]
    files: list[str]
    stores: list[int]
    tasks: list[int]
    archived: list[int]
    broken: list[int]


_head_decoder = msgspec.msgpack.Decoder(Head)
_rows_decoder = msgspec.msgpack.Decoder(list[Row])
_split_decoder = msgspec.msgpack.Decoder(list[msgspec.Raw])  # a folder's rows, each undecoded
_row_decoder = msgspec.msgpack.Decoder(Row)


@functools.cache
def projected(kind: type[Any]) -> msgspec.msgpack.Decoder[list[Any]]:
    """A decoder of a folder's rows (as :class:`Row`) whose tasks decode as ``kind``."""
    fields = [("task", kind | None), ("broken", msgspec.Raw)]  # Raw: skipped
    row = msgspec.defstruct("Projected", fields, array_like=True, frozen=True, gc=False)
    return msgspec.msgpack.Decoder(list[row])  # type: ignore[valid-type]


encoder = msgspec.msgpack.Encoder()


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
    return root / STATE_DIR / "cache" / f"{FORMAT}.msgpack"


Decoded = TypeVar("Decoded")


def decode_mapped(path: str, decode: Callable[[Any], Decoded]) -> tuple[Decoded, os.stat_result]:
    """``decode`` of the file's bytes, given as a read-only mapping of the file rather
    than read into a buffer of this process (and its ``stat``). On this kind of host
    every fresh page a process touches costs a few microseconds: the head and the rows
    files of 100,000 tasks are megabytes, read once per run (docs/benchmarks.md).

    Only for the cache's files, which are written whole and renamed into place, never
    truncated while mapped; ``decode`` must not keep the buffer (no ``msgspec.Raw``)."""
    with open(path, "rb") as handle:
        stat = os.fstat(handle.fileno())
        if not stat.st_size:
            return decode(b""), stat
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError:  # a file system that cannot map files: read it
            return decode(handle.read()), stat
        with mapped:
            return decode(mapped), stat


def read_head(root: Path) -> tuple[Head, bytes] | None:
    """The current head of ``root``'s cache and the file's signature, or ``None`` (missing,
    corrupt, another version's)."""
    try:
        with no_collection():
            head, stat = decode_mapped(str(cache_path(root)), _head_decoder.decode)
    except (OSError, ValueError, msgspec.DecodeError):
        return None
    if (
        head.format != FORMAT
        or not len(head.files) == len(head.stores) == len(head.folders)
        or not all(map(_names_rows, head.folders, head.files))
    ):
        return None
    return head, signature.of(stat)


def _names_rows(folder: Folder, name: str) -> bool:
    """Whether ``name`` can be the rows file of ``folder`` (a corrupt head could name any
    path): ``""`` when it has no file, else a rows file's name."""
    if not len(folder):
        return name == ""
    return (
        len(name) == _ROWS_NAME_LENGTH
        and name.startswith(ROWS_PREFIX)
        and name.endswith(".msgpack")
        and "/" not in name
        and os.sep not in name
    )


def rows_bytes(root: Path, name: str) -> bytes:
    with open(os.path.join(root, STATE_DIR, "cache", name), "rb") as handle:
        return handle.read()


def read_rows(root: Path, head: Head) -> list[list[Row]] | None:
    """Every folder's rows, read and decoded a folder at a time (``[]`` for a folder
    without files); ``None`` when a rows file is gone (deleted by a later writer) or does
    not decode."""
    parts: list[list[Row]] = []
    try:
        with no_collection():
            for folder, name in zip(head.folders, head.files, strict=True):
                part = _rows_at(root, name) if name else []
                if len(part) != len(folder):
                    return None
                parts.append(part)
    except (OSError, ValueError, msgspec.DecodeError):
        return None
    return parts


def _rows_at(root: Path, name: str) -> list[Row]:
    path = os.path.join(root, STATE_DIR, "cache", name)
    return decode_mapped(path, _rows_decoder.decode)[0]


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
                items = _split_decoder.decode(rows_bytes(root, name))
                if len(items) != count:
                    return None
                while at < len(wanted) and wanted[at] < first + count:
                    rows[wanted[at]] = _row_decoder.decode(items[wanted[at] - first])
                    at += 1
            first += count
    except (OSError, msgspec.DecodeError):
        return None
    return rows if at == len(wanted) else None


def columns_name(rows_name: str) -> str:
    """The name of the file that keeps a rows file's columns of ids."""
    return f"{rows_name.removesuffix('.msgpack')}.ids.msgpack"


def rows_name(name: str) -> str:
    """The rows file a cache file named ``name`` (a rows file, or one kept beside one)
    belongs to."""
    return f"{name[: _ROWS_NAME_LENGTH - len('.msgpack')]}.msgpack"
