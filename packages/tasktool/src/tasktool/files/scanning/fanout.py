"""Parsing many files on every core: the scan of a large task directory with no cache.

Parsing a task file is Python work (docs/benchmarks.md, "Figures behind tasktool's
code"), so a first run over a large task directory spends seconds on one core while the
others idle. Past ``PARALLEL_FROM`` files the work is split
into contiguous chunks parsed by forked worker processes; each sends its rows back as one
msgpack blob, decoded here in order, so the result is exactly the one-process result.

Forking is safe only when this process runs no other thread (a thread holding a lock at
the fork would leave the child's copy locked forever), so a process with threads (the
dashboard's server) and platforms without ``fork`` parse in this process.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

import msgspec

from tasktool.files.caches.cache_files import Row, no_collection

__all__ = ["MAX_WORKERS", "PARALLEL_FROM", "Item", "default_workers", "parse_rows"]

#: Fewer files than this parse faster in this process than a fork and a transfer cost.
PARALLEL_FROM = 16_000
MAX_WORKERS = 8

Item = TypeVar("Item")
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(list[Row])


def parse_rows(
    parse: Callable[[Sequence[Item]], list[Row]], items: Sequence[Item], workers: int | None = None
) -> list[Row]:
    """``parse(items)``, split over ``workers`` processes, this one included (default: one
    per core when there are at least ``PARALLEL_FROM`` items and forking is safe)."""
    if workers is None:
        workers = default_workers(len(items))
    if workers < 2 or len(items) < 2:
        return parse(items)
    size = -(-len(items) // workers)
    shares = [items[start : start + size] for start in range(0, len(items), size)]
    # Imported only here: both register atexit handlers (multiprocessing's, and logging's
    # through concurrent.futures), which a warm run must not carry (tasktool.cli.oneshot).
    from concurrent.futures.process import BrokenProcessPool

    try:
        return _parse_forked(parse, shares)
    except (OSError, BrokenProcessPool):
        # No worker could be forked (a process limit, no memory) or one died (the OOM
        # killer): the same parse, in this process.
        return parse(items)


def _parse_forked(
    parse: Callable[[Sequence[Item]], list[Row]], shares: list[Sequence[Item]]
) -> list[Row]:
    """The rows of every share in order: the first parsed here, the others by workers."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(len(shares) - 1, mp_context=context) as pool:
        others = [pool.submit(_parse_encoded, parse, share) for share in shares[1:]]
        rows = parse(shares[0])
        for other in others:
            with no_collection():
                rows += _decoder.decode(other.result())
    return rows


def default_workers(count: int) -> int:
    """How many processes parse ``count`` files: 1 below ``PARALLEL_FROM``, on a platform
    without a safe ``fork``, or while another thread runs; else one per usable core."""
    if count < PARALLEL_FROM or not sys.platform.startswith("linux"):
        return 1
    if threading.active_count() > 1:
        return 1
    return min(len(os.sched_getaffinity(0)), MAX_WORKERS)


def _parse_encoded(parse: Callable[[Sequence[Item]], list[Row]], chunk: Sequence[Item]) -> bytes:
    """In a worker: the rows of ``chunk``, encoded for the trip back."""
    return _encoder.encode(parse(chunk))
