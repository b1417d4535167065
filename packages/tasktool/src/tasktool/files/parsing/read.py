"""Reading and parsing task files: bytes to a task, a broken file's diagnostic, or
nothing (a file that is no task).

Files under a folder named ``archive`` at any depth (``<task dir>/archive/``, or
taskmd's ``<task dir>/cli/archive/``) are archived tasks.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator, Sequence

from tasktool.files.caches.cache_files import Row, row_of
from tasktool.files.parsing.taskfile import id_in_text, looks_like_task, parse_task
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task

__all__ = [
    "ARCHIVE_DIR",
    "READERS",
    "READ_AHEAD_FROM",
    "READ_CHUNK",
    "READ_WINDOW",
    "SLOW_READ_NS",
    "entry_of",
    "parse_entry",
    "parse_files",
    "read_all",
    "read_entry",
]

ARCHIVE_DIR = "archive"
#: Past this many files to parse, when reading the first ones took more than
#: ``SLOW_READ_NS`` each, threads read the rest ahead: ``READERS`` threads, each reading
#: ``READ_CHUNK`` files at a time, at most ``READ_WINDOW`` chunks ahead.
READ_AHEAD_FROM = 64
SLOW_READ_NS = 100_000
READERS = 4
READ_CHUNK = 32
READ_WINDOW = 8


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


#: A task file is nearly always shorter than this: read in one ``read`` call.
_READ_AT_ONCE = 16_384


def _read(path: str) -> bytes | OSError:
    """The file's bytes by bare descriptor calls: ``open()``'s buffered file object (and
    the ``fstat`` it makes to size its buffer) cost as much again per file as the calls
    themselves, a tenth of a cold scan's parse."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        return exc
    try:
        data = os.read(fd, _READ_AT_ONCE)
        if len(data) < _READ_AT_ONCE:
            return data
        parts = [data]
        while more := os.read(fd, 1 << 20):
            parts.append(more)
        return b"".join(parts)
    except OSError as exc:
        return exc
    finally:
        os.close(fd)


def _read_many(paths: list[str]) -> list[bytes | OSError]:
    return [_read(path) for path in paths]


def read_all(paths: list[str]) -> Iterator[bytes | OSError]:
    """The bytes (or the error) of each file, in order.

    The first ``READ_AHEAD_FROM`` files are read here; when they took more than
    ``SLOW_READ_NS`` each (not in the OS cache: each read waits on the disk), a few
    threads read the rest ahead of the caller, overlapping those waits. Files in the OS
    cache are read here one by one: threads would only add switching.
    """
    started = time.perf_counter_ns()
    probe = [_read(path) for path in paths[:READ_AHEAD_FROM]]
    slow = time.perf_counter_ns() - started > SLOW_READ_NS * len(probe)
    yield from probe
    rest = paths[len(probe) :]
    if not slow or not rest:
        yield from map(_read, rest)
        return
    from concurrent.futures import Future, ThreadPoolExecutor

    chunks = [rest[at : at + READ_CHUNK] for at in range(0, len(rest), READ_CHUNK)]
    with ThreadPoolExecutor(READERS) as pool:
        window: deque[Future[list[bytes | OSError]]] = deque()
        for chunk in chunks[:READ_WINDOW]:
            window.append(pool.submit(_read_many, chunk))
        for chunk in chunks[READ_WINDOW:]:
            done = window.popleft().result()
            window.append(pool.submit(_read_many, chunk))
            yield from done
        while window:
            yield from window.popleft().result()


def read_entry(root: str, path: str, directory: str | None = None) -> Task | Diagnostic | None:
    """Read and parse one file (no cache); ``directory`` is its folder relative to ``root``."""
    return entry_of(root, path, _read(path), directory)


def parse_files(root: str, files: Sequence[tuple[str, str]]) -> list[Row]:
    """The rows of ``files`` (each a path and its folder relative to ``root``), in order."""
    raws = read_all([path for path, _relative in files])
    # A folder's files come together, and its place is the same for each of them.
    places: dict[str, tuple[str | None, bool]] = {}
    rows: list[Row] = []
    for (path, relative), raw in zip(files, raws, strict=True):
        place = places.get(relative)
        if place is None:
            place = places[relative] = _place(relative)
        rows.append(row_of(_entry(path, raw, place)))
    return rows


def entry_of(
    root: str, path: str, raw: bytes | OSError, directory: str | None = None
) -> Task | Diagnostic | None:
    """What the file at ``path`` parses to, from its bytes (or the error reading them)."""
    return _entry(path, raw, _place(_directory(root, path, directory)))


def parse_entry(
    root: str, path: str, text: str, directory: str | None = None
) -> Task | Diagnostic | None:
    """Parse the text of the file at ``path`` (group and archive state from its place)."""
    group, archived = _place(_directory(root, path, directory))
    return parse_task(text, file_path=path, group=group, archived=archived)


def _directory(root: str, path: str, directory: str | None) -> str:
    if directory is not None:
        return directory
    directory = os.path.relpath(os.path.dirname(path), root).replace(os.sep, "/")
    return "" if directory == "." else directory


def _entry(
    path: str, raw: bytes | OSError, place: tuple[str | None, bool]
) -> Task | Diagnostic | None:
    if isinstance(raw, OSError):
        return _unreadable(path, raw.strerror or str(raw))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not looks_like_task(raw.decode("utf-8", "replace")):
            return None
        # Name the id when the bytes show one, so ``get``/``set`` say why it is missing.
        return _unreadable(path, f"not UTF-8 ({exc})", id_in_text(raw.decode("utf-8", "replace")))
    group, archived = place
    return parse_task(text, file_path=path, group=group, archived=archived)


def _unreadable(path: str, reason: str, task_id: str | None = None) -> Diagnostic:
    return Diagnostic(
        severity="error",
        code="task.unreadable",
        message=f"{path}: cannot be read: {reason}",
        file=path,
        task_id=task_id,
    )
