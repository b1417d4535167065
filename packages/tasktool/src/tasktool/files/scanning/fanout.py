"""Parsing many files on every core: the scan of a large task directory with no cache.

Parsing a task file is Python work (docs/benchmarks.md, "Figures behind tasktool's
code"), so a first run over a large task directory spends seconds on one core while the
others idle. Past ``PARALLEL_FROM`` files the work is split
into contiguous chunks, the first parsed here and each other one by a forked child; each
child sends its rows back as one msgpack blob, decoded here in order, so the result is
exactly the one-process result.

Forking is safe only when this process runs no other thread (a thread holding a lock at
the fork would leave the child's copy locked forever), so a process with threads (the
dashboard's server) and platforms without ``fork`` parse in this process.
"""

from __future__ import annotations

import functools
import mmap
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

import msgspec

from tasktool.files.caches.cache_files import Row, no_collection
from tasktool.files.scanning.forked import Child, Handoff

__all__ = [
    "MAX_WORKERS",
    "PARALLEL_FROM",
    "Item",
    "default_workers",
    "parse_handing_off",
    "parse_rows",
]

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
    return _parse_forked(parse, _shares(items, workers))


def parse_handing_off(
    parse: Callable[[Sequence[Item]], list[Row]],
    items: Sequence[Item],
    then: Callable[[list[Row]], bytes],
    workers: int | None = None,
) -> tuple[list[Row], Handoff | None]:
    """:func:`parse_rows`, and ``then(rows)`` run by the first child once every share is
    parsed, while this process goes on: the rows, and the :class:`Handoff` whose
    :meth:`~Handoff.result` is ``then``'s bytes; ``None`` when no child took it (one
    process, or the child could not be forked or died: the caller runs ``then``)."""
    if workers is None:
        workers = default_workers(len(items))
    if workers < 2 or len(items) < 2:
        return parse(items), None
    shares = _shares(items, workers)
    theirs = _Share(parse, shares[1])
    try:
        handoff = Handoff(theirs.encoded, functools.partial(theirs.finish, then))
    except OSError:
        return _parse_forked(parse, shares), None
    others = [_child(parse, share) for share in shares[2:]]
    rows = parse(shares[0])
    blobs = [_result(parse, share, child) for share, child in zip(shares[2:], others, strict=True)]
    # Sent before the child's share is waited for: the child starts on ``then`` as soon as
    # both are parsed, while this process decodes.
    handoff.send([_encoder.encode(rows), *blobs])
    shared = handoff.share()
    with no_collection():
        rows += _decoder.decode(shared) if shared is not None else parse(shares[1])
        for blob in blobs:
            rows += _decoder.decode(blob)
    return rows, handoff if shared is not None else None


class _Share:
    """The first child's share, kept in the child between its two steps: its rows, sent
    back encoded, then all rows (this process's first, its own, the other children's)
    for ``then``."""

    def __init__(self, parse: Callable[[Sequence[Item]], list[Row]], share: Sequence[Item]):
        self._parse = functools.partial(parse, share)
        self._rows: list[Row] = []

    def encoded(self) -> bytes:
        self._rows = self._parse()
        return _encoder.encode(self._rows)

    def finish(self, then: Callable[[list[Row]], bytes], blobs: list[memoryview]) -> bytes:
        with no_collection():
            decoded = [_decoder.decode(blob) for blob in blobs]
        rows = decoded[0] + self._rows
        for more in decoded[1:]:
            rows += more
        return then(rows)


def _shares(items: Sequence[Item], workers: int) -> list[Sequence[Item]]:
    """``items`` cut into ``workers`` contiguous shares of (nearly) one size, in order."""
    size = -(-len(items) // workers)
    return [items[start : start + size] for start in range(0, len(items), size)]


def _child(parse: Callable[[Sequence[Item]], list[Row]], share: Sequence[Item]) -> Child | None:
    """A forked child parsing ``share``; ``None`` when none could be forked."""
    try:
        return Child(functools.partial(_parse_encoded, parse, share))
    except OSError:
        return None


def _result(
    parse: Callable[[Sequence[Item]], list[Row]], share: Sequence[Item], child: Child | None
) -> bytes | mmap.mmap:
    """The rows of ``share``, encoded: the child's, or parsed here when it failed."""
    found = child.result() if child is not None else None
    return found if found is not None else _encoder.encode(parse(share))


def _parse_forked(
    parse: Callable[[Sequence[Item]], list[Row]], shares: list[Sequence[Item]]
) -> list[Row]:
    """The rows of every share in order: the first parsed here, the others by forked
    children (:class:`~tasktool.files.forked.Child`: a bare fork that inherits its share,
    nothing pickled, no pool, no feeder thread, and no ``multiprocessing`` import, whose
    ``atexit`` handler a one-shot process would then have to run). A share whose child
    could not be forked (a process limit, no memory) or died (the OOM killer) is parsed
    here: the rows are the same."""
    children = [_child(parse, share) for share in shares[1:]]
    rows = parse(shares[0])
    for share, child in zip(shares[1:], children, strict=True):
        encoded = child.result() if child is not None else None
        if encoded is None:
            rows += parse(share)
            continue
        with no_collection():
            rows += _decoder.decode(encoded)
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
