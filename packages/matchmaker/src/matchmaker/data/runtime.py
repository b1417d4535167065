"""Process-wide runtime settings for a server that holds many connections.

``matchmaker.running.serve_until_signalled`` (the ``matchmaker`` command)
applies both; nothing else should, since they change the whole interpreter.

Every connection owns about 140 GC-tracked objects (hypercorn's stream and
protocol state, tasks, futures, ours), so a full collection with thousands of
connections walks hundreds of thousands of objects and stalls the event loop
for 100 ms or more. With the default thresholds (700, 10, 10) the many
short-lived objects of each frame trigger young collections that promote
survivors until a full collection runs; the benchmark saw such stalls push the
p99 of matching from a few milliseconds to over 100 ms.
"""

from __future__ import annotations

import gc
import resource

__all__ = ["raise_open_file_limit", "tune_gc"]

YOUNG_THRESHOLD = 20_000


def tune_gc() -> None:
    """Call once at server start, before serving (it changes the whole process).

    Freezes what exists at startup (modules, the apps) out of every future
    collection, and lets the young generation grow to ``YOUNG_THRESHOLD``
    objects, so per-frame garbage dies by reference counting before any
    collection sees it. Cycles are still collected, just less often.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, 10, 10)


def raise_open_file_limit() -> int:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit and return the new soft limit.

    Every connection is a file descriptor; the usual soft limit of 1024 would
    refuse connections long before memory runs out. A limit the process may
    not change is left as it is.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            return soft
        return hard
    return soft
