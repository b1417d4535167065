"""The parse cache: two msgpack files under ``<task dir>/.tasktool/cache/``.

Entries are keyed by absolute path and validated by size, mtime, ctime and
inode, so a warm run re-parses only files that changed (an atomic rename gives
a new inode even when size and mtime tick stay equal). A missing, stale or
corrupt cache is rebuilt silently; a read-only task directory just runs uncached.

The tasks' bodies are half of the cache's bytes and most commands never show
them, so they live in a second file (``bodies-N``) read only when asked for.
Both files carry the same random token: a body file left by another run (two
processes writing at once, a crash between the two renames) does not match and
the cache counts as missing, never as a mix of two runs.
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

_FORMAT = "tasks-3"  # 2: entries kept in result order; 3: bodies in their own file


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

    @property
    def signature(self) -> tuple[int, int, int, int]:
        return (self.size, self.mtime_ns, self.ctime_ns, self.inode)

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
    token: bytes
    entries: dict[str, CacheEntry]  # tasks stored with an empty body


class _BodyFile(msgspec.Struct, frozen=True):
    format: str
    token: bytes
    bodies: list[str]  # one per entry, in the entries' order ("" for a non-task)


_decoder = msgspec.msgpack.Decoder(_CacheFile)
_body_decoder = msgspec.msgpack.Decoder(_BodyFile)
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
    def open(cls, root: Path, *, bodies: bool = True) -> ParseCache:
        """The cached entries; their tasks' bodies are empty unless ``bodies``."""
        path = cache_path(root)
        try:
            loaded = _decoder.decode(path.read_bytes())
            if loaded.format != _FORMAT:
                return cls(path, {})
            if not bodies:
                return cls(path, loaded.entries)
            body_file = _body_decoder.decode(_body_path(path).read_bytes())
        except (OSError, msgspec.DecodeError):
            return cls(path, {})
        if body_file.token != loaded.token or len(body_file.bodies) != len(loaded.entries):
            return cls(path, {})
        replace = msgspec.structs.replace
        return cls(
            path,
            {
                key: replace(entry, task=replace(entry.task, body=body)) if entry.task else entry
                for (key, entry), body in zip(loaded.entries.items(), body_file.bodies, strict=True)
            },
        )

    def with_bodies(self, fresh: dict[str, CacheEntry]) -> dict[str, CacheEntry] | None:
        """``fresh`` from a scan without bodies, its entries taken from this cache given their
        bodies back from the body file; ``None`` when that file does not match any more."""
        if self.path is None:
            return None
        full = ParseCache.open(self.path.parents[2], bodies=True).entries
        filled: dict[str, CacheEntry] = {}
        for key, entry in fresh.items():
            if entry is not self.entries.get(key):  # parsed by this run: it has its body
                filled[key] = entry
                continue
            stored = full.get(key)
            if stored is None or stored.signature != entry.signature:
                return None
            filled[key] = stored
        return filled

    def store(self, fresh: dict[str, CacheEntry]) -> None:
        """Write ``fresh`` as the new cache, in its order.

        Best effort and atomic: a read-only task directory just stays uncached.
        """
        if self.path is None:
            return
        try:
            ensure_state_dir(self.path.parent.parent.parent)
            self.path.parent.mkdir(exist_ok=True)
            token = os.urandom(16)
            replace = msgspec.structs.replace
            heads = {
                key: replace(entry, task=replace(entry.task, body="")) if entry.task else entry
                for key, entry in fresh.items()
            }
            encoded = _encoder.encode(_CacheFile(_FORMAT, token, heads))
            bodies = [entry.task.body if entry.task else "" for entry in fresh.values()]
            encoded_bodies = _encoder.encode(_BodyFile(_FORMAT, token, bodies))
        except UnicodeEncodeError:
            return  # a file or folder name that is not UTF-8: such a tree stays uncached
        except OSError:
            return
        try:
            # Bodies first: a reader that sees the new entries finds their bodies (or, if
            # another process wrote in between, a token that does not match).
            atomic_write_bytes(_body_path(self.path), encoded_bodies, sync=False)
            atomic_write_bytes(self.path, encoded, sync=False)
        except OSError:
            return
        self._remove_other_versions()

    def _remove_other_versions(self) -> None:
        """Delete cache files an older or newer tasktool left (they are never read)."""
        assert self.path is not None
        ours = {self.path.name, _body_path(self.path).name}
        try:
            for stale in self.path.parent.glob("*.msgpack"):
                if stale.name not in ours:
                    stale.unlink(missing_ok=True)
        except OSError:
            return


def _body_path(path: Path) -> Path:
    return path.with_name(f"bodies-{path.name}")
