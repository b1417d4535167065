"""Tasks' bodies, read when a caller first asks for one (:attr:`Task.body`).

The parse cache keeps each rows file's bodies in a body store beside it
(``rows-N.bodies``: the bodies' UTF-8 bytes one after the other, written with the rows
and never changed); a task decoded from the rows holds where its body is
(:class:`~tasktool.model.task.BodyAt`: the store's number and a byte range), not the body.
No command decides up front whether it needs bodies: a listing never reads one, ``get``
reads one, ``search`` reads each as it looks at it.

The stores a head named are known by number once this process read it (:func:`known`):
the table holds a folder path per rows file, not per task. A store is opened once and
each body read at its offset (``pread``: a store damaged in place reads short, where a
mapping would fault); the last :data:`OPEN_STORES` stay open, and no body is kept after
it was handed out, so the bodies are never all resident.

A body is always the one its frontmatter came with. From a store it is by construction
(the store was written from the same parse as the row). When the store is gone (a later
run replaced that folder's rows and a minute passed) or unknown here (a task a sibling
worktree's index kept), the task's file is parsed again and its body returned only when
its frontmatter is still the task's; otherwise the file changed since the task was
loaded, and mixing the new body with the old fields would show a version that never
existed: ``task.changed`` (run again).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable

import msgspec

from tasktool.files.taskfile import parse_task
from tasktool.model.errors import TaskToolError
from tasktool.model.task import BodyAt, Task, read_kept_bodies_with

__all__ = [
    "OPEN_STORES",
    "kept_bytes",
    "known",
    "read_body",
    "store_bytes",
    "store_name",
    "store_number",
]

#: Body stores kept open at once (the least recently read one is closed first).
OPEN_STORES = 32

_lock = threading.Lock()
#: Store number -> the cache folder holding it and its length, for every rows file a head
#: read in this process named (rows files are named at random, so a number is one file).
_stores: dict[int, tuple[str, int]] = {}
_open_stores: OrderedDict[int, int] = OrderedDict()  # store number -> file descriptor


def store_number(rows_name: str) -> int:
    """The number of the rows file ``rows-<16 hex digits>.msgpack`` and its body store."""
    return int(rows_name[5:21], 16)


def store_name(number: int) -> str:
    """The file name of the body store numbered ``number``."""
    return f"rows-{number:016x}.bodies"


def known(cache_folder: str, rows_names: Iterable[str], lengths: Iterable[int]) -> None:
    """Record that the body stores of these rows files are in ``cache_folder``, each
    ``lengths`` bytes long (a store of another length is damaged and never read)."""
    with _lock:
        for name, length in zip(rows_names, lengths, strict=True):
            if name:
                _stores[store_number(name)] = (cache_folder, length)


def kept_bytes(at: BodyAt) -> bytes | None:
    """The bytes of a kept body (``None``: its store is gone, unknown or too short)."""
    size = at.end - at.start
    if at.start < 0 or size < 0:
        return None
    with _lock:
        fd = _open_stores.get(at.store)
        if fd is not None:
            _open_stores.move_to_end(at.store)
        else:
            fd = _open(at.store)
            if fd is None:
                return None
        try:
            found = os.pread(fd, size, at.start)
        except OSError:
            return None
    return found if len(found) == size else None


def store_bytes(number: int) -> bytes | None:
    """The whole store ``number`` (``None``: unknown, gone, empty or damaged): for a
    writer that copies many of its bodies into a new store."""
    with _lock:
        fd = _open_stores.get(number)
        fd = _open(number) if fd is None else fd
        if fd is None:
            return None
        _, length = _stores[number]
        try:
            found = os.pread(fd, length, 0)
        except OSError:
            return None
    return found if len(found) == length else None


def _open(number: int) -> int | None:
    """An open descriptor of the store ``number`` (``None``: unknown, gone, empty or not
    the length its head says). An open store outlives its file: deleted now, it still
    reads."""
    folder, length = _stores.get(number, ("", -1))
    if length <= 0:
        return None
    try:
        fd = os.open(os.path.join(folder, store_name(number)), os.O_RDONLY)
    except OSError:
        return None
    if os.fstat(fd).st_size != length:
        os.close(fd)
        return None
    _open_stores[number] = fd
    while len(_open_stores) > OPEN_STORES:
        os.close(_open_stores.popitem(last=False)[1])
    return fd


def read_body(task: Task, at: BodyAt) -> str:
    """The body of ``task``, kept at ``at``: from its store, else from its file when the
    file still holds the task's frontmatter (``task.changed`` when it does not)."""
    kept = kept_bytes(at)
    if kept is not None:
        try:
            return kept.decode("utf-8")
        except UnicodeDecodeError:
            pass  # a damaged store: the file says what the body is
    return _from_file(task)


def _from_file(task: Task) -> str:
    try:
        with open(task.file_path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _changed(task, f"cannot be read again ({exc})") from None
    parsed = parse_task(text, file_path=task.file_path, group=task.group, archived=task.archived)
    if not isinstance(parsed, Task) or not _same_frontmatter(parsed, task):
        raise _changed(task, "changed since it was loaded")
    return parsed.body


def _same_frontmatter(parsed: Task, task: Task) -> bool:
    """Whether ``parsed`` (the file now) has ``task``'s fields, where it comes from aside."""
    replace = msgspec.structs.replace
    overlay = {"worktree": task.worktree, "branch": task.branch, "sibling_only": task.sibling_only}
    return replace(parsed, raw_body="", **overlay) == replace(task, raw_body="")


def _changed(task: Task, why: str) -> TaskToolError:
    return TaskToolError(
        f"the file of task {task.id}, {task.file_path}, {why}: its body is no longer the one "
        "loaded with its fields; run the command again",
        code="task.changed",
    )


read_kept_bodies_with(read_body)
