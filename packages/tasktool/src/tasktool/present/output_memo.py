"""A command's whole output, kept from one run to the next: replayed byte for byte while
the tasks, the settings and the command's options are the same.

A large output (``list --format json`` of every task) takes far longer to decode the
cached tasks and encode than to copy from a file (docs/architecture.md, "Caches"). The
key is
:func:`~tasktool.planning.derived_memo.memo_key`'s (the tasks' identity, known without
reading them, every setting, the options, this version), so only outputs that depend on
nothing else may be kept: no clock, no terminal width, no colour.

Each output is one file, ``<task dir>/.tasktool/output/<digest of the key>``, streamed in
and checked by its key (a digest is not trusted alone) by :mod:`tasktool.files.memo`.
The ``KEPT`` most recently used stay; writes are atomic and best effort (a read-only task
directory keeps none, a damaged file is ignored and replaced)::

    if not replay(repo, "list-json", options):
        with recording(repo, "list-json", options) as write:
            write(b"...")  # reaches stdout at once, and the memo when the block ends
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from tasktool.files.digest import blake2b
from tasktool.files.memo import Recording, open_kept
from tasktool.files.storage import STATE_DIR
from tasktool.planning.derived_memo import memo_key
from tasktool.planning.repository import Repository

__all__ = ["ABANDONED_NS", "KEPT", "Write", "recording", "replay"]

#: How many outputs (keys) are kept: each may be as large as the output.
KEPT = 2
#: A temporary file this old was left by a process killed while writing it.
ABANDONED_NS = 3600 * 10**9

#: Why ``sendfile`` may refuse a target that a plain write accepts.
_NO_SENDFILE = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EAGAIN})

Write = Callable[[bytes], object]


def _folder(repo: Repository) -> Path:
    return repo.task_dir / STATE_DIR / "output"


def _path(repo: Repository, key: bytes) -> Path:
    return _folder(repo) / blake2b(key, digest_size=16).hexdigest()


def _stdout() -> BinaryIO:
    """Standard output's bytes, after any text already written to it."""
    sys.stdout.flush()
    return sys.stdout.buffer


def replay(repo: Repository, kind: str, options: object) -> bool:
    """Write the output kept for ``repo``, ``kind`` and ``options`` to standard output;
    ``False`` (nothing written) when none is kept."""
    key = memo_key(repo, kind, options)
    handle = open_kept(_path(repo, key), key) if key is not None else None
    if handle is None:
        return False
    with handle:
        _copy(handle, _stdout())
    return True


def _copy(source: BinaryIO, target: BinaryIO) -> None:
    """The rest of ``source`` to ``target``: by the kernel (``sendfile``) where it can, else
    through a buffer (a terminal, a file opened for appending, a test's captured output)."""
    offset = source.tell()
    try:
        target_fd = target.fileno()
        target.flush()
        while sent := os.sendfile(target_fd, source.fileno(), offset, 1 << 30):
            offset += sent
        return
    except (ValueError, io.UnsupportedOperation):  # no descriptor
        pass
    except OSError as exc:
        if exc.errno not in _NO_SENDFILE:
            raise
    import shutil  # the fallback only (pipes and files take sendfile); it loads bz2, lzma

    source.seek(offset)
    shutil.copyfileobj(source, target)


@contextlib.contextmanager
def recording(repo: Repository, kind: str, options: object) -> Iterator[Write]:
    """A ``write`` to standard output that also keeps what it wrote, for :func:`replay`
    with the same ``repo``, ``kind`` and ``options``, when the block ends without error
    (an error, a broken pipe, keeps nothing). Without an identity it only writes."""
    out = _stdout()
    key = memo_key(repo, kind, options)
    memo = Recording.start(_path(repo, key), key) if key is not None else None
    if memo is None:
        yield out.write
        return
    try:

        def write(data: bytes) -> None:
            out.write(data)
            memo.write(data)

        yield write
    except BaseException:
        memo.drop()
        raise
    if memo.finish():
        _prune(_folder(repo))


def _prune(folder: Path) -> None:
    """Delete all but the ``KEPT`` most recently used outputs, and temporary files an hour
    old (left by a process that was killed while writing)."""
    try:
        with os.scandir(folder) as entries:
            found = [(entry.stat().st_mtime_ns, entry.name) for entry in entries]
    except OSError:
        return
    outputs = sorted((mtime, name) for mtime, name in found if not name.startswith("."))
    abandoned_before = time.time_ns() - ABANDONED_NS
    stale = [name for _, name in outputs[:-KEPT]] + [
        name for mtime, name in found if name.startswith(".") and mtime < abandoned_before
    ]
    for name in stale:
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
