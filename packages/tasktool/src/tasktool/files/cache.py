"""The parse cache: one msgpack file under ``<task dir>/.tasktool/cache/``.

Entries are keyed by absolute path and validated by size, mtime, ctime and
inode, so a warm run re-parses only files that changed (an atomic rename gives
a new inode even when size and mtime tick stay equal). A missing, stale or
corrupt cache is rebuilt silently; a read-only task directory just runs uncached.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from tasktool.files.storage import (
    STATE_DIR,
    atomic_write_bytes,
    ensure_state_dir,
)
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task

_FORMAT = "tasks-2"  # 2: entries kept in result order


# gc=False: entries hold only strings, numbers and tuples (no cycles), and 10,000 of them
# decoded at once would otherwise trigger several full collections.
class CacheEntry(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """One file's stat signature and what it parsed to (a task, a broken file or nothing)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    task: Task | None = None
    broken: Diagnostic | None = None

    @classmethod
    def of(cls, stat: os.stat_result, parsed: Task | Diagnostic | None) -> CacheEntry:
        return cls(
            stat.st_size,
            stat.st_mtime_ns,
            stat.st_ctime_ns,
            stat.st_ino,
            parsed if isinstance(parsed, Task) else None,
            parsed if isinstance(parsed, Diagnostic) else None,
        )

    def matches(self, stat: os.stat_result) -> bool:
        return (
            self.mtime_ns == stat.st_mtime_ns
            and self.size == stat.st_size
            and self.ctime_ns == stat.st_ctime_ns
            and self.inode == stat.st_ino
        )


def cache_path(root: Path) -> Path:
    """The cache file of the task directory ``root`` (its name carries the format)."""
    return root / STATE_DIR / "cache" / f"{_FORMAT}.msgpack"


class _CacheFile(msgspec.Struct, frozen=True):
    format: str
    entries: dict[str, CacheEntry]


_decoder = msgspec.msgpack.Decoder(_CacheFile)
_encoder = msgspec.msgpack.Encoder()


class ParseCache:
    """The previous run's entries (path -> :class:`CacheEntry`); :meth:`store` writes the
    new set."""

    def __init__(self, path: Path | None, entries: dict[str, CacheEntry]) -> None:
        self.path = path
        self.entries = entries

    @classmethod
    def empty(cls) -> ParseCache:
        return cls(None, {})

    @classmethod
    def open(cls, root: Path) -> ParseCache:
        path = cache_path(root)
        try:
            loaded = _decoder.decode(path.read_bytes())
        except (OSError, msgspec.DecodeError):
            return cls(path, {})
        return cls(path, loaded.entries if loaded.format == _FORMAT else {})

    def store(self, fresh: dict[str, CacheEntry]) -> None:
        """Write ``fresh`` as the new cache, in its order.

        Best effort and atomic: a read-only task directory just stays uncached.
        """
        if self.path is None:
            return
        try:
            ensure_state_dir(self.path.parent.parent.parent)
            self.path.parent.mkdir(exist_ok=True)
            encoded = _encoder.encode(_CacheFile(_FORMAT, fresh))
        except UnicodeEncodeError:
            return  # a file or folder name that is not UTF-8: such a tree stays uncached
        except OSError:
            return
        try:
            atomic_write_bytes(self.path, encoded, sync=False)
        except OSError:
            return
