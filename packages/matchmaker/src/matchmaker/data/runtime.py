"""Process-wide runtime settings for a server that holds many connections.

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

__all__ = ["tune_gc"]

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
