"""Walking the task directory: which files are read, and the parse cache around them.

The built-in skip list (``node_modules``, ``vendor``, ``dist``, ``build``,
``.next``, ``.nuxt``, ``out``, ``target``, ``__pycache__`` and every hidden
directory) plus the ``ignore`` setting decide which directories are entered.
Files under ``<task dir>/archive/`` are archived tasks.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import msgspec

from tasktool.cache import CacheEntry, ParseCache
from tasktool.diagnostics import Diagnostic
from tasktool.model import Task, natural_key
from tasktool.taskfile import parse_task

SKIPPED_DIRS = frozenset(
    {"node_modules", "vendor", "dist", "build", ".next", ".nuxt", "out", "target", "__pycache__"}
)
ARCHIVE_DIR = "archive"


class ScanResult(msgspec.Struct, frozen=True, kw_only=True):
    """Tasks found under the task directory, split active / archived, and broken files."""

    tasks: tuple[Task, ...]
    archived: tuple[Task, ...]
    broken: tuple[Diagnostic, ...]


def _skipped(name: str, relative: str, ignore: frozenset[str]) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS or name in ignore or relative in ignore


def iter_markdown(root: Path, ignore: tuple[str, ...] = ()) -> Iterator[os.DirEntry[str]]:
    """Every ``.md`` file under ``root`` outside skipped directories, in no particular order.

    An ``ignore`` entry matches a directory name or its path relative to ``root``.
    """
    ignored = frozenset(entry.strip("/") for entry in ignore)
    pending = [(str(root), "")]
    while pending:
        directory, relative = pending.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        child = f"{relative}/{entry.name}" if relative else entry.name
                        if not _skipped(entry.name, child, ignored):
                            pending.append((entry.path, child))
                    elif entry.name.endswith(".md") and entry.is_file():
                        yield entry
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue


def _place(root: str, path: str) -> tuple[str | None, bool]:
    """The task's ``group`` (its directory's name) and whether it is archived."""
    relative = os.path.relpath(path, root).split(os.sep)
    archived = len(relative) > 1 and relative[0] == ARCHIVE_DIR
    folders = relative[1:-1] if archived else relative[:-1]
    return (folders[-1] if folders else None), archived


def read_entry(root: str, path: str) -> Task | Diagnostic | None:
    """Read and parse one file (no cache)."""
    group, archived = _place(root, path)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        return Diagnostic(
            severity="error",
            code="task.unreadable",
            message=f"{path}: cannot be read: {getattr(exc, 'strerror', None) or exc}",
            file=path,
        )
    return parse_task(text, file_path=path, group=group, archived=archived)


def scan_tasks(root: Path, ignore: tuple[str, ...] = (), *, use_cache: bool = True) -> ScanResult:
    """Read every task under ``root``, parsing only files changed since the cached run."""
    base = str(root)
    cache = ParseCache.open(root) if use_cache else ParseCache.empty()
    fresh: dict[str, CacheEntry] = {}
    for entry in iter_markdown(root, ignore):
        stat = entry.stat()
        cached = cache.lookup(entry.path, stat)
        if cached is None:
            cached = CacheEntry.of(stat, read_entry(base, entry.path))
        fresh[entry.path] = cached
    if use_cache:
        cache.store(fresh)
    tasks: list[Task] = []
    archived: list[Task] = []
    broken: list[Diagnostic] = []
    for path in sorted(fresh):
        item = fresh[path]
        if item.task is not None:
            (archived if item.task.archived else tasks).append(item.task)
        elif item.broken is not None:
            broken.append(item.broken)
    tasks.sort(key=lambda task: natural_key(task.id))
    archived.sort(key=lambda task: natural_key(task.id))
    return ScanResult(tasks=tuple(tasks), archived=tuple(archived), broken=tuple(broken))
