"""Atomic file writes and the per-task lock files under ``<task dir>/.tasktool/locks/``.

Every writer (each CLI process, any front end) rewrites a task file while holding that
task's lock, re-reading it inside the lock, so concurrent edits serialize
instead of overwriting each other; the new text replaces the file by rename.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat as stat_module
from collections.abc import Iterator, Sequence
from pathlib import Path

from tasktool.model.errors import TaskToolError

__all__ = [
    "STALE_TEMP_S",
    "STATE_DIR",
    "atomic_write_bytes",
    "atomic_write_text",
    "ensure_state_dir",
    "locked",
    "read_regular",
    "remove_stale_temps",
    "repository_lock",
    "stale_temps",
    "task_lock",
]

STATE_DIR = ".tasktool"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def read_regular(path: Path, max_bytes: int | None = None) -> tuple[os.stat_result, bytes]:
    """The stat and bytes of a regular file. A FIFO or a device (``/dev/zero``) would block
    or never end, so it is refused (``EINVAL``), as is a file past ``max_bytes`` (``EFBIG``)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        stat = os.fstat(fd)
        if not stat_module.S_ISREG(stat.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if max_bytes is None:
            return stat, handle.read()
        if stat.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes", str(path))
        return stat, handle.read(max_bytes + 1)


#: A temporary file of :func:`atomic_write_bytes` untouched this long (seconds) was left by
#: a writer that died (kill -9, power loss): a live writer fills and renames its file in
#: well under a second, so a concurrent writer's file is never taken for stale.
STALE_TEMP_S = 15 * 60
#: The temporary name of a Markdown file: ``.<name>.md.<mkstemp's 8 characters>.tmp``.
_MD_TEMP = re.compile(r"\..+\.md\.[a-z0-9_]{8}\.tmp")


def stale_temps(folder: Path, *, now: float | None = None) -> list[Path]:
    """This tool's temporary Markdown files in ``folder`` older than :data:`STALE_TEMP_S`."""
    import time  # writers and validate only

    limit = (time.time() if now is None else now) - STALE_TEMP_S
    found: list[Path] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".tmp") and _MD_TEMP.fullmatch(entry.name):
                    with contextlib.suppress(OSError):
                        if entry.stat(follow_symlinks=False).st_mtime < limit:
                            found.append(Path(entry.path))
    except OSError:
        return []
    return sorted(found)


def remove_stale_temps(folder: Path) -> None:
    """Delete :func:`stale_temps` of ``folder`` (best effort: a write never fails for it)."""
    for path in stale_temps(folder):
        with contextlib.suppress(OSError):
            path.unlink()


def ensure_state_dir(task_dir: Path) -> Path:
    """``<task dir>/.tasktool`` with a ``.gitignore`` that keeps it out of version control."""
    state = task_dir / STATE_DIR
    state.mkdir(exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    return state


def atomic_write_bytes(
    path: Path, data: bytes | Sequence[bytes], *, sync: bool = True, exclusive: bool = False
) -> os.stat_result:
    """Replace ``path`` with ``data`` (or its pieces, one after the other, never joined in
    memory): temp file in the same directory, fsync, rename. Returns the stat of the file
    written, taken through its still open descriptor after the rename: this file's, even
    when another writer replaces ``path`` at once.

    A symlink is written through: its target gets the data and the link stays a link.
    ``exclusive`` creates the file only if it does not exist (``FileExistsError``
    otherwise), by hard-linking the finished temp file into place, which never replaces.
    """
    import tempfile  # not on the read path

    path = Path(os.path.realpath(path))
    try:
        mode = os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # name the file being written, not the temporary one
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                handle.writelines(data)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
            os.chmod(temp, mode)
            if exclusive:
                _link_new(temp, path)
            else:
                os.replace(temp, path)
            return os.fstat(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _link_new(temp: str, path: Path) -> None:
    """Move ``temp`` to ``path`` unless ``path`` exists (``FileExistsError``)."""
    try:
        os.link(temp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP}:
            raise
        # No hard links on this file system: check, then rename (a narrow race).
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, "File exists", str(path)) from None
        os.replace(temp, path)
        return
    os.unlink(temp)


def atomic_write_text(path: Path, text: str, *, exclusive: bool = False) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # undecodable argument bytes arrive as lone surrogates
        raise TaskToolError(
            f"{path}: not valid UTF-8 text: {exc.object[exc.start : exc.end]!r}",
            code="task.invalid_text",
        ) from None
    atomic_write_bytes(path, data, exclusive=exclusive)


@contextlib.contextmanager
def locked(task_dir: Path, name: str) -> Iterator[None]:
    """Hold the exclusive lock ``.tasktool/locks/<name>.lock`` (blocks until free).

    Only writers lock, so this is where a task directory that does not exist yet (a
    fresh clone: git keeps no empty folder) is created; reading one makes nothing.
    """
    import fcntl  # writers only: the read commands never lock

    try:
        task_dir.mkdir(parents=True, exist_ok=True)
        locks = ensure_state_dir(task_dir) / "locks"
        locks.mkdir(exist_ok=True)
        handle = open(locks / f"{_UNSAFE.sub('_', name)}.lock", "a+b")  # noqa: SIM115
    except OSError as exc:
        raise TaskToolError(
            f"cannot create a lock under {task_dir / STATE_DIR}: {exc.strerror or exc}",
            code="task.lock",
        ) from None
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def task_lock(task_dir: Path, task_id: str) -> contextlib.AbstractContextManager[None]:
    """The lock serializing writes to one task."""
    return locked(task_dir, f"task-{task_id}")


def repository_lock(task_dir: Path) -> contextlib.AbstractContextManager[None]:
    """The lock serializing id allocation and multi-file changes (add, archive, deduplicate)."""
    return locked(task_dir, "repository")
