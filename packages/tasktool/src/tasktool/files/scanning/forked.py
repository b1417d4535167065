"""Work done by a forked child while this process does its own share: its result comes
back as bytes, in an in-memory file this process maps.

A warm scan of a large task directory spends most of its time in ``stat`` calls, most of
that in the kernel; a second process makes half of them on the second core. A bare
``fork`` (no ``multiprocessing``, whose import alone costs more) is ready at once, as the
child shares every page it does not write (docs/benchmarks.md, "Figures behind
tasktool's code").

Forking is safe only when this process runs no other thread (a thread holding a lock at
the fork would leave the child's copy locked forever), so a process with threads (the
dashboard's server) and platforms without ``fork`` do all the work here.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import sys
import threading
from collections.abc import Callable, Sequence

__all__ = ["Child", "Handoff", "usable_cores"]


def usable_cores() -> int:
    """How many cores work can be split over from here: 1 on a platform without a safe
    ``fork`` (not Linux) or while another thread runs, else the cores this process may
    run on."""
    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return 1
    return len(os.sched_getaffinity(0))


class Child:
    """``work()`` running in a forked child; :meth:`result` waits for its bytes.

    The child writes its result to an anonymous in-memory file made before the fork
    (``memfd_create``) and leaves with ``os._exit`` (no ``atexit`` handler, no buffered
    output of this process flushed twice); this process maps that file instead of
    reading it through a pipe: the child never waits for a reader, and this process
    touches no fresh pages for the bytes (a cold parse's share is some 40 MB at 100,000
    tasks; each fresh page costs a few microseconds on this kind of host). When the child
    fails (an exception, killed), :meth:`result` returns ``None`` and the caller does the
    work here.
    """

    def __init__(self, work: Callable[[], bytes | bytearray]) -> None:
        out = os.memfd_create("tasktool-child", os.MFD_CLOEXEC)
        try:
            self._pid = os.fork()
        except OSError:
            os.close(out)
            raise
        if self._pid == 0:  # pragma: no cover - the child; its bytes are what tests check
            code = 1
            try:
                with open(out, "wb") as written:
                    written.write(work())
                code = 0
            finally:
                os._exit(code)
        self._out = out

    def result(self) -> bytes | mmap.mmap | None:
        """The child's bytes (a read-only mapping of them past a page), or ``None`` when
        it did not finish its work."""
        try:
            _, status = os.waitpid(self._pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                return None
            return _mapped(self._out)
        finally:
            os.close(self._out)


_LENGTH = struct.Struct("<Q")


class Handoff:
    """A forked child that does a share of the work like :class:`Child`, then takes this
    process's results and finishes the job alone while this process goes on.

    A cold scan of a large task directory parses its files on two cores, but then had one
    core write the parse cache while the other idled, and only then show the tasks. With
    a handoff the child sends its share's bytes (:meth:`share`), receives this process's
    (:meth:`send`, any number of blobs) and runs ``then`` over them (the cache write)
    while this process lays out its answer; :meth:`result` is ``then``'s bytes.

    The child is forked twice (the one between leaves at once and is waited for here), so
    the one doing the work belongs to init: nothing is left a zombie when no caller asks
    for the result (a command that needs no cache identity). Its standard streams go to
    ``/dev/null``, so it never keeps a reader of this process's output waiting. The bytes
    go through two anonymous in-memory files (its share, then this process's blobs) and
    each side says when its bytes are ready through a pipe of its own; the result comes
    last, length first, so a child that died gives ``None``. When this process does not
    send (:meth:`close`, or it exits), the child ends without running ``then``.
    """

    def __init__(
        self, work: Callable[[], bytes | bytearray], then: Callable[[list[memoryview]], bytes]
    ) -> None:
        self._from_child = self._to_child = self._share = self._inbox = -1
        self._share = os.memfd_create("tasktool-share", os.MFD_CLOEXEC)
        self._inbox = os.memfd_create("tasktool-inbox", os.MFD_CLOEXEC)
        self._from_child, child_says = os.pipe2(os.O_CLOEXEC)
        child_hears, self._to_child = os.pipe2(os.O_CLOEXEC)
        try:
            between = os.fork()
        except OSError:
            self._close(child_says, child_hears)
            raise
        if between == 0:  # pragma: no cover - the children; what they write is what tests check
            try:
                if os.fork() == 0:
                    os.close(self._from_child)
                    os.close(self._to_child)
                    _serve(work, then, (self._share, self._inbox), child_says, child_hears)
            finally:
                os._exit(0)
        os.close(child_says)
        os.close(child_hears)
        os.waitpid(between, 0)

    def share(self) -> bytes | mmap.mmap | None:
        """The child's share of the work (a read-only mapping past a page); ``None`` when
        it did not finish it (the caller then does it, and the rest, here)."""
        if os.read(self._from_child, 1) != b"s":
            self._close()
            return None
        return _mapped(self._share)

    def send(self, blobs: Sequence[bytes | bytearray | memoryview | mmap.mmap]) -> None:
        """Hand ``blobs`` to the child, which then runs ``then`` over them (in order). A
        child gone is not an error here: :meth:`share` or :meth:`result` say so."""
        with open(self._inbox, "wb", closefd=False) as inbox:
            for blob in blobs:
                inbox.write(_LENGTH.pack(len(blob)))
                inbox.write(blob)
        with contextlib.suppress(BrokenPipeError):
            os.write(self._to_child, b"g")

    def result(self) -> bytes | None:
        """``then``'s bytes once the child is done; ``None`` when it did not finish."""
        if self._from_child < 0:
            return None
        parts = []
        while chunk := os.read(self._from_child, 1 << 16):
            parts.append(chunk)
        self._close()
        found = b"".join(parts)
        size = len(found) - _LENGTH.size
        if size < 0 or _LENGTH.unpack_from(found)[0] != size:
            return None
        return found[_LENGTH.size :]

    def __del__(self) -> None:
        self._close()

    def _close(self, *more: int) -> None:
        """Close this side's descriptors (the child, when not sent anything, then ends)."""
        for fd in (self._from_child, self._to_child, self._share, self._inbox, *more):
            if fd >= 0:
                os.close(fd)
        self._from_child = self._to_child = self._share = self._inbox = -1


def _serve(
    work: Callable[[], bytes | bytearray],
    then: Callable[[list[memoryview]], bytes],
    files: tuple[int, int],
    says: int,
    hears: int,
) -> None:  # pragma: no cover - the child of a Handoff
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(null, stream)
    share, inbox = files
    with open(share, "wb") as shared:
        shared.write(work())
    os.write(says, b"s")
    if os.read(hears, 1) != b"g":
        return  # this process went on without handing anything over
    result = then(_unpacked(_mapped(inbox)))
    os.write(says, _LENGTH.pack(len(result)) + result)


def _mapped(fd: int) -> bytes | mmap.mmap:
    """The bytes of the file ``fd``: read when shorter than a page, else mapped (no fresh
    pages of this process for tens of MB)."""
    size = os.fstat(fd).st_size
    if size < mmap.PAGESIZE:
        return os.pread(fd, size, 0)
    return mmap.mmap(fd, size, access=mmap.ACCESS_READ)


def _unpacked(data: bytes | mmap.mmap) -> list[memoryview]:
    """The blobs :meth:`Handoff.send` wrote, each length first."""
    blobs: list[memoryview] = []
    at = 0
    view = memoryview(data)
    while at < len(view):
        (size,) = _LENGTH.unpack_from(view, at)
        at += _LENGTH.size
        blobs.append(view[at : at + size])
        at += size
    return blobs
