"""A command's whole output, kept from one run to the next: replayed byte for byte while
the tasks, the config and the command's options are the same.

A large output (``list --format json`` of every task) takes far longer to decode the
cached tasks and encode than to copy from a file (docs/architecture.md, "Caches"). The
key is
:func:`~tasktool.planning.memos.derived_memo.memo_key`'s (the tasks' identity, known without
reading them, every setting, the options, this version), so only outputs that depend on
nothing else may be kept: no clock, no terminal width, no colour.

Each output is one file, ``<task dir>/.tasktool/output/<kind>-<digest of the key>``,
streamed in and checked by its key (a digest is not trusted alone) by
:mod:`tasktool.files.caches.memo`. The ``KEPT`` most recently used of each kind stay; writes are
atomic and best effort (a read-only task directory keeps none, a damaged file is ignored
and replaced)::

    if not replay(repo, "list-json", options):
        with recording(repo, "list-json", options) as write:
            write(b"...")  # reaches stdout at once, and the memo when the block ends

A read command's whole output to a pipe (a table is plain text there: no width, no
colour) is kept the same way by :func:`recording_streams`, which keeps what the block
writes to ``sys.stdout``, unless it also wrote to ``sys.stderr`` (a warning, which a
replay would not repeat) or ended in an error or another exit status.
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

from tasktool.files.caches.digest import blake2b
from tasktool.files.caches.memo import Recording, open_kept
from tasktool.files.storage import STATE_DIR
from tasktool.planning.memos.derived_memo import memo_key
from tasktool.planning.repository import Repository

__all__ = ["ABANDONED_NS", "KEPT", "Write", "recording", "recording_streams", "replay"]

#: How many outputs (keys) of each kind are kept: each may be as large as the output.
KEPT = 2
#: A temporary file this old was left by a process killed while writing it.
ABANDONED_NS = 3600 * 10**9

#: Why ``sendfile`` may refuse a target that a plain write accepts.
_NO_SENDFILE = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EAGAIN})

Write = Callable[[bytes], object]


def _folder(repo: Repository) -> Path:
    return repo.task_dir / STATE_DIR / "output"


def _path(repo: Repository, kind: str, key: bytes) -> Path:
    return _folder(repo) / f"{kind}-{blake2b(key, digest_size=16).hexdigest()}"


def _stdout() -> BinaryIO:
    """Standard output's bytes, after any text already written to it."""
    sys.stdout.flush()
    return sys.stdout.buffer


def _notes(kind: str) -> str:
    """The kind under which the notes of a ``kind`` output are kept (its stderr)."""
    return f"{kind}~notes"


def replay(repo: Repository, kind: str, options: object, *, notes: bool = False) -> bool:
    """Write the output kept for ``repo``, ``kind`` and ``options`` to standard output
    (with ``notes``, and the notes kept with it to standard error); ``False`` (nothing
    written) when none is kept."""
    key = None if repo.cache.new else memo_key(repo, kind, options)  # new: nothing kept
    handle = open_kept(_path(repo, kind, key), key) if key is not None else None
    if handle is None:
        return False
    with handle:
        _copy(handle, _stdout())
    said = open_kept(_path(repo, _notes(kind), key), key) if notes and key is not None else None
    if said is not None:
        with said:
            sys.stderr.flush()
            _copy(said, sys.stderr.buffer)
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
    memo = _start(repo)
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
    _finish(memo, repo, kind, memo_key(repo, kind, options))


def _start(repo: Repository) -> Recording | None:
    """A recording of an output of ``repo``, unless its tasks have no identity (nothing
    could be kept). Its key is taken at the end (:func:`_finish`): a new identity may
    still be being written (a cold scan's child writes the parse cache meanwhile)."""
    if not repo.cache.new and repo.cache.identity is None:
        return None
    return Recording.start(_folder(repo))


def _finish(memo: Recording, repo: Repository, kind: str, key: bytes | None) -> bool:
    """Put ``memo`` in place as the ``kind`` output kept under ``key`` (its
    :func:`memo_key`, taken at the end); whether it is kept."""
    if key is None or not memo.finish(_path(repo, kind, key), key):
        memo.drop()
        return False
    _prune(_folder(repo))
    return True


class _Forward(io.RawIOBase):
    """A binary stream that hands every write to ``write`` at once (no buffer: what a
    command wrote before an error is out)."""

    def __init__(self, write: Write) -> None:
        super().__init__()
        self._write = write

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        chunk = bytes(data)  # type: ignore[call-overload]  # a bytes-like object
        self._write(chunk)
        return len(chunk)


def _text(stream: object, write: Write) -> io.TextIOWrapper:
    """A text stream like ``stream`` (its encoding and errors) whose bytes go to ``write``."""
    return io.TextIOWrapper(
        _Forward(write),  # type: ignore[arg-type]  # unbuffered: a raw stream
        encoding=getattr(stream, "encoding", None) or "utf-8",
        errors=getattr(stream, "errors", None) or "strict",
        write_through=True,
    )


@contextlib.contextmanager
def recording_streams(
    repo: Repository, kind: str, options: object, *, notes: bool = False
) -> Iterator[None]:
    """Keep, for :func:`replay` with the same ``repo``, ``kind`` and ``options``, what the
    block writes to ``sys.stdout`` (text or its bytes), as it writes it; kept only when
    the block ends without an error or exit and wrote nothing to ``sys.stderr``, or with
    ``notes`` (a command whose stderr depends only on what the key does) kept with what
    it wrote there, for ``replay(..., notes=True)``.
    Without an identity, or streams without bytes underneath, it only runs the block."""
    stdout, stderr = sys.stdout, sys.stderr
    out: BinaryIO | None = getattr(stdout, "buffer", None)
    err: BinaryIO | None = getattr(stderr, "buffer", None)
    memo = _start(repo) if out is not None and err is not None else None
    if memo is None or out is None or err is None:
        yield
        return
    stdout.flush()
    stderr.flush()
    spoke: list[bytes] = []

    def write_out(data: bytes) -> None:
        out.write(data)
        memo.write(data)

    def write_err(data: bytes) -> None:
        spoke.append(data)
        err.write(data)

    sys.stdout, sys.stderr = _text(stdout, write_out), _text(stderr, write_err)
    try:
        yield
    except BaseException:
        memo.drop()
        raise
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    key = memo_key(repo, kind, options)
    if not spoke:
        _finish(memo, repo, kind, key)
        return
    said = Recording.start(_folder(repo)) if notes else None
    if said is None:
        memo.drop()
        return
    # The notes are put in place first, so a replayed output never lacks its notes.
    said.write(b"".join(spoke))
    if _finish(said, repo, _notes(kind), key):
        _finish(memo, repo, kind, key)
    else:
        memo.drop()


def _prune(folder: Path) -> None:
    """Delete all but the ``KEPT`` most recently used outputs of each kind, and temporary
    files an hour old (left by a process that was killed while writing)."""
    try:
        with os.scandir(folder) as entries:
            found = [(entry.stat().st_mtime_ns, entry.name) for entry in entries]
    except OSError:
        return
    kinds: dict[str, list[tuple[int, str]]] = {}
    for mtime, name in found:
        if not name.startswith("."):
            kinds.setdefault(name.rpartition("-")[0], []).append((mtime, name))
    abandoned_before = time.time_ns() - ABANDONED_NS
    unnamed = kinds.pop("", [])  # an older version's outputs, named by digest alone
    stale = (
        [name for outputs in kinds.values() for _, name in sorted(outputs)[:-KEPT]]
        + [name for _, name in unnamed]
        + [name for mtime, name in found if name.startswith(".") and mtime < abandoned_before]
    )
    for name in stale:
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
