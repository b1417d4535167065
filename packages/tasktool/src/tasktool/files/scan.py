"""Walking the task directory: which files are read, and the parse cache around them.

The built-in skip list (``node_modules``, ``vendor``, ``dist``, ``build``,
``.next``, ``.nuxt``, ``out``, ``target``, ``__pycache__`` and every hidden
directory) plus the ``ignore`` setting decide which directories are entered.
Files under a folder named ``archive`` at any depth (``<task dir>/archive/``, or
taskmd's ``<task dir>/cli/archive/``) are archived tasks.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from tasktool.files.cache import CacheEntry, ParseCache
from tasktool.files.taskfile import id_in_text, looks_like_task, parse_task
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task, natural_key

RACY_NS = 2_000_000_000
SKIPPED_DIRS = frozenset(
    {"node_modules", "vendor", "dist", "build", ".next", ".nuxt", "out", "target", "__pycache__"}
)
ARCHIVE_DIR = "archive"
#: At most this many changed files: a scan without bodies leaves the cache as it is.
LAZY_REWRITE = 100


class ScanResult(msgspec.Struct, frozen=True, kw_only=True):
    """Tasks found under the task directory, split active / archived, and broken files."""

    tasks: tuple[Task, ...]
    archived: tuple[Task, ...]
    broken: tuple[Diagnostic, ...]

    @property
    def taken_ids(self) -> frozenset[str]:
        """Ids a new task must not take: every task's, and those of task files that do not
        load (once fixed, they would collide)."""
        broken = (problem.task_id for problem in self.broken if problem.task_id)
        return frozenset((*(task.id for task in self.tasks + self.archived), *broken))


def _skipped(name: str, relative: str, ignore: frozenset[str]) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS or name in ignore or relative in ignore


def is_scanned_folder(relative: str, ignore: tuple[str, ...] = ()) -> bool:
    """Whether the scan enters the folder at ``relative`` (``/``-separated, below the task
    directory): no part of it is hidden, on the skip list or ignored."""
    ignored = frozenset(entry.strip("/") for entry in ignore)
    parts = relative.split("/")
    return not any(
        _skipped(name, "/".join(parts[: depth + 1]), ignored) for depth, name in enumerate(parts)
    )


def iter_markdown(
    root: Path, ignore: tuple[str, ...] = ()
) -> Iterator[tuple[os.DirEntry[str], str]]:
    """Every ``.md`` file under ``root`` outside skipped directories, with its directory
    relative to ``root`` (``""`` at the top), in no particular order.

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
                        yield entry, relative
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue


def _place(directory: str) -> tuple[str | None, bool]:
    """The ``group`` (the directory's own name) and whether it is archived, from the
    file's directory relative to the task directory."""
    folders = directory.split("/") if directory else []
    if ARCHIVE_DIR not in folders:
        return (folders[-1] if folders else None), False
    # taskmd's layout: an ``archive`` folder at any depth (``tasks/cli/archive/``) holds
    # archived tasks of the folder around it.
    kept = [folder for folder in folders if folder != ARCHIVE_DIR]
    return (kept[-1] if kept else None), True


def read_entry(root: str, path: str, directory: str | None = None) -> Task | Diagnostic | None:
    """Read and parse one file (no cache); ``directory`` is its folder relative to ``root``."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        return _unreadable(path, exc.strerror or str(exc))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not looks_like_task(raw.decode("utf-8", "replace")):
            return None
        # Name the id when the bytes show one, so ``get``/``set`` say why it is missing.
        return _unreadable(path, f"not UTF-8 ({exc})", id_in_text(raw.decode("utf-8", "replace")))
    return parse_entry(root, path, text, directory)


def parse_entry(
    root: str, path: str, text: str, directory: str | None = None
) -> Task | Diagnostic | None:
    """Parse the text of the file at ``path`` (group and archive state from its place)."""
    if directory is None:
        directory = os.path.relpath(os.path.dirname(path), root).replace(os.sep, "/")
        directory = "" if directory == "." else directory
    group, archived = _place(directory)
    return parse_task(text, file_path=path, group=group, archived=archived)


def _unreadable(path: str, reason: str, task_id: str | None = None) -> Diagnostic:
    return Diagnostic(
        severity="error",
        code="task.unreadable",
        message=f"{path}: cannot be read: {reason}",
        file=path,
        task_id=task_id,
    )


def _order(task: Task) -> tuple[object, ...]:
    return (natural_key(task.id), task.file_path)


def scan_tasks(
    root: Path, ignore: tuple[str, ...] = (), *, use_cache: bool = True, bodies: bool = True
) -> ScanResult:
    """Read every task under ``root``, parsing only files changed since the cached run.

    The cache keeps its entries in result order (tasks, archived, broken, others), so a
    warm run in which no file changed, appeared or vanished needs no sorting at all.
    Without ``bodies`` a task's body may be empty (it is not read from the cache): for
    commands that never show one; :func:`with_body` reads one task's body afterwards.
    """
    base = str(root)
    cache = ParseCache.open(root, bodies=bodies) if use_cache else ParseCache.empty()
    previous = cache.entries
    fresh: dict[str, CacheEntry] = {}
    # A file changed within the last moments may change again within the same timestamp
    # tick at the same size; such "racy" entries are parsed but not cached (as git does).
    racy_after = time.time_ns() - RACY_NS
    racy: set[str] = set()
    parsed = 0
    for entry, directory in iter_markdown(root, ignore):
        path = entry.path
        stat = entry.stat()
        cached = previous.get(path)
        if cached is None or not cached.matches(stat):
            cached = CacheEntry.of(stat, read_entry(base, path, directory))
            parsed += 1
            if stat.st_mtime_ns > racy_after:
                racy.add(path)
        fresh[path] = cached
    if not parsed and len(fresh) == len(previous):
        return _collect(previous.values(), presorted=True)
    result = _collect(fresh.values(), presorted=False)
    if use_cache and (len(racy) < parsed or any(path not in fresh for path in previous)):
        if not bodies:  # the cached tasks came without theirs: fetch them to rewrite
            if parsed <= LAZY_REWRITE:
                # A few changed files are cheaper to parse again next time than reading
                # every body and rewriting the whole cache; a run with bodies catches up.
                return result
            filled = cache.with_bodies(fresh)
            if filled is None:
                return result
            fresh = filled
        ordered = [task.file_path for task in (*result.tasks, *result.archived)]
        ordered += [problem.file for problem in result.broken if problem.file is not None]
        entries = {path: fresh[path] for path in ordered if path not in racy}
        entries.update((p, e) for p, e in fresh.items() if p not in entries and p not in racy)
        cache.store(entries)
    return result


def with_body(root: Path, task: Task) -> Task:
    """``task`` with its body, read from its file again (for a scan without bodies); the
    task as it is when the file no longer parses to the same id."""
    reread = read_entry(str(root), task.file_path)
    if isinstance(reread, Task) and reread.id == task.id:
        return msgspec.structs.replace(task, body=reread.body)
    return task


def _collect(entries: Iterable[CacheEntry], *, presorted: bool) -> ScanResult:
    tasks: list[Task] = []
    archived: list[Task] = []
    broken: list[Diagnostic] = []
    for item in entries:
        task = item.task
        if task is not None:
            (archived if task.archived else tasks).append(task)
        elif item.broken is not None:
            broken.append(item.broken)
    if not presorted:
        tasks.sort(key=_order)
        archived.sort(key=_order)
        broken.sort(key=lambda problem: problem.file or "")
    return ScanResult(tasks=tuple(tasks), archived=tuple(archived), broken=tuple(broken))
