"""Work done by a forked child while this process does its own share: its result comes
back as bytes over a pipe.

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

    The child writes its result to a pipe and leaves with ``os._exit`` (no ``atexit``
    handler, no buffered output of this process flushed twice). When it fails (an
    exception, killed), :meth:`result` returns ``None`` and the caller does the work here.
    """

    def __init__(self, work: Callable[[], bytes]) -> None:
        read, write = os.pipe()
        try:
            self._pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            raise
        if self._pid == 0:  # pragma: no cover - the child; its bytes are what tests check
            os.close(read)
            code = 1
            try:
                with open(write, "wb") as out:
                    out.write(work())
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        self._read = read

    def result(self) -> bytes | None:
        """The child's bytes, or ``None`` when it did not finish its work."""
        try:
            with open(self._read, "rb") as pipe:
                data = pipe.read()
        finally:
            _, status = os.waitpid(self._pid, 0)
        return data if os.waitstatus_to_exitcode(status) == 0 else None
