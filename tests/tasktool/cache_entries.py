"""The parse cache per path, for tests: what each cached file parsed to, and a whole cache
written from such entries (a scan works on folders and rows instead)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import msgspec

from tasktool.files.caches import signature
from tasktool.files.caches.bodies import Bodies
from tasktool.files.caches.cache import ParseCache, result_order
from tasktool.files.caches.cache_files import Folder, Row
from tasktool.files.scanning.scan import ScanResult
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task


class CacheEntry(msgspec.Struct, frozen=True):
    """One file's signature and what it parsed to (a task, a broken file or nothing)."""

    signature: bytes
    task: Task | None = None
    broken: Diagnostic | None = None


def cached_entries(root: Path) -> dict[str, CacheEntry]:
    """Path -> entry of every file cached for good (not racy) in ``root``, bodies read."""
    cache = ParseCache.open(root)
    rows = cache.rows()
    if rows is None:
        return {}
    found: dict[str, CacheEntry] = {}
    numbers = iter(rows)
    for folder in cache.folders:
        for index, name in enumerate(folder.listed()):
            row = next(numbers)
            sig = folder.signature(index)
            if sig != signature.UNSETTLED:
                task = row.task and msgspec.structs.replace(
                    row.task, raw_body=cache.bodies.read(row.task)
                )
                found[os.path.join(folder.path, name)] = CacheEntry(sig, task, row.broken)
    return found


def store_entries(root: Path, entries: dict[str, CacheEntry]) -> None:
    """Write ``entries`` (path -> entry, bodies included) as ``root``'s whole new cache."""
    names: dict[str, list[str]] = {}
    sigs: dict[str, list[bytes]] = {}
    rows: dict[str, list[Row]] = {}
    for path, entry in entries.items():
        directory, name = os.path.split(path)
        names.setdefault(directory, []).append(name)
        sigs.setdefault(directory, []).append(entry.signature)
        rows.setdefault(directory, []).append(Row(entry.task, entry.broken))
    flat = [row for part in rows.values() for row in part]
    folders = [Folder.of(path, listed, sigs[path]) for path, listed in names.items()]
    ParseCache.open(root).write(folders, flat, result_order(flat))


def read_bodies(result: ScanResult) -> ScanResult:
    """``result`` with every body read: a task the cache keeps holds where its body is, so
    it equals a parsed one only once its body is read (here from its file: ``result``
    holds no load's bodies)."""
    return msgspec.structs.replace(
        result, tasks=bodies_read(result.tasks), archived=bodies_read(result.archived)
    )


def bodies_read(tasks: Sequence[Task]) -> tuple[Task, ...]:
    """``tasks``, each with its body read (see :func:`read_bodies`)."""
    read = Bodies().read
    return tuple([msgspec.structs.replace(task, raw_body=read(task)) for task in tasks])
