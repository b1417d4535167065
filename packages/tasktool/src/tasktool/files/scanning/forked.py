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

import mmap
import os
import sys
import threading
from collections.abc import Callable

__all__ = ["Child", "usable_cores"]


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
            size = os.fstat(self._out).st_size
            if size < mmap.PAGESIZE:
                return os.pread(self._out, size, 0)
            return mmap.mmap(self._out, size, access=mmap.ACCESS_READ)
        finally:
            os.close(self._out)
