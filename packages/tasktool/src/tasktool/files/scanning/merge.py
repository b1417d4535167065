"""A rescan: the walked folders matched to the parse cache's, only new or changed files
parsed, the result order updated, and the cache written again.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from tasktool.files.caches import signature
from tasktool.files.caches.cache import Order, ParseCache, result_order, updated_order
from tasktool.files.caches.cache_files import Folder, Row
from tasktool.files.parsing.read import parse_files

if TYPE_CHECKING:
    from tasktool.files.scanning.forked import Handoff

__all__ = ["Identity", "rescan"]

#: The row of a file still to be parsed.
_PENDING = Row()


class _Merge:
    """The rows of a rescan: each folder's files matched to the cached ones by name and
    signature, the others queued for parsing."""

    def __init__(self, cache: ParseCache) -> None:
        self.before_rows = cache.rows() or []
        # path -> folder, its first row, its number
        self.before: dict[str, tuple[Folder, int, int]] = {}
        start = 0
        if self.before_rows:
            for number, folder in enumerate(cache.folders):
                self.before[folder.path] = (folder, start, number)
                start += len(folder)
        self.same: dict[int, int] = {}  # folder number -> number of the cached one, unchanged
        self.rows: list[Row] = []
        self.folders: list[Folder] = []
        self.moved = [-1] * len(self.before_rows)  # old row number -> new
        self.fresh: list[int] = []  # rows to parse now
        self.reading: list[tuple[str, str]] = []  # their files and folders (relative)
        self.settled = 0  # parsed files that will be cached
        # A file changed within the last moments may change again within the same
        # timestamp tick at the same size: such "racy" files are parsed, not kept.
        self.racy_after = time.time_ns() - signature.RACY_NS

    def vanished(self, walked: list[tuple[Folder, str]]) -> bool:
        """Whether a cached file is gone (its folder or just its name)."""
        now = {folder.path: folder for folder, _relative in walked}
        for path, (old, _first, _number) in self.before.items():
            folder = now.get(path)
            if len(old) and (folder is None or not set(old.listed()) <= set(folder.listed())):
                return True
        return False

    def regrouped(self, cache: ParseCache, ignore: tuple[str, ...]) -> bool:
        """Whether there is a cache and its folders are not the ones walked with
        ``ignore`` (an empty folder made or removed, a folder's own signature changed,
        another ``ignore`` setting: no row changes, but left uncached it would make
        every run a rescan)."""
        return cache.head is not None and self.folders != cache.walked(ignore)

    def add(self, folder: Folder, relative: str) -> None:
        old, first, number = self.before.get(folder.path, (None, 0, 0))
        if old is None:
            self._add_new(folder, relative)
            return
        rows = self.rows
        if (old.names, old.sigs) == (folder.names, folder.sigs):
            self.same[len(self.folders)] = number
            self.moved[first : first + len(folder)] = range(len(rows), len(rows) + len(folder))
            rows += self.before_rows[first : first + len(folder)]
            self.folders.append(folder)
            return
        names = folder.listed()
        known = {name: index for index, name in enumerate(old.listed())}
        sigs: list[bytes] = []
        for index, name in enumerate(names):
            sig = folder.signature(index)
            was = known.get(name)
            if was is not None and old.signature(was) == sig:
                self.moved[first + was] = len(rows)
                rows.append(self.before_rows[first + was])
            else:
                self.fresh.append(len(rows))
                rows.append(_PENDING)
                self.reading.append((os.path.join(folder.path, name), relative))
                if signature.mtime(sig) > self.racy_after:
                    sig = signature.UNSETTLED
                else:
                    self.settled += 1
            sigs.append(sig)
        self.folders.append(msgspec.structs.replace(folder, sigs=b"".join(sigs)))

    def _add_new(self, folder: Folder, relative: str) -> None:
        """A folder the cache does not hold (all of a cold scan's): every file is parsed,
        in C loops but for the racy ones (none, nearly always)."""
        rows, count = self.rows, len(folder)
        self.fresh += range(len(rows), len(rows) + count)
        rows += [_PENDING] * count
        prefix = os.path.join(folder.path, "")
        self.reading += [(prefix + name, relative) for name in folder.listed()]
        found = signature.PACKED.iter_unpack(folder.sigs)
        racy = [at for at, (_, mtime, _, _) in enumerate(found) if mtime > self.racy_after]
        self.settled += count - len(racy)
        if racy:
            sigs = bytearray(folder.sigs)
            for at in racy:
                sigs[at * signature.SIZE : (at + 1) * signature.SIZE] = signature.UNSETTLED
            folder = msgspec.structs.replace(folder, sigs=bytes(sigs))
        self.folders.append(folder)

    def parse(self, root: Path, then: Callable[[], bytes] | None) -> Handoff | None:
        """Parse the queued files (on every core when there are many). With ``then``
        (what comes after: the cache write, its bytes), a forked child that parsed a share
        may take it over (:func:`~tasktool.files.scanning.fanout.parse_handing_off`): it
        runs ``then`` on its own copy of these rows; the handoff says what it gave."""
        from tasktool.files.scanning.fanout import (  # a scan with nothing changed never parses
            parse_handing_off,
            parse_rows,
        )

        parse = functools.partial(parse_files, str(root))
        if then is None:
            self._place(parse_rows(parse, self.reading))
            return None

        def place_then(parsed: list[Row]) -> bytes:
            self._place(parsed)
            return then()

        parsed, handoff = parse_handing_off(parse, self.reading, place_then)
        self._place(parsed)
        return handoff

    def _place(self, parsed: list[Row]) -> None:
        for number, row in zip(self.fresh, parsed, strict=True):
            self.rows[number] = row

    def order(self, cache: ParseCache) -> Order:
        """The rows' result order: the cached one updated, or sorted afresh."""
        if self.before_rows and cache.head is not None:
            head = cache.head
            before = (head.tasks, head.archived, head.broken)
            return updated_order(self.rows, before, self.moved, self.fresh)
        return result_order(self.rows)


def rescan(
    root: Path,
    ignore: tuple[str, ...],
    walked: list[tuple[Folder, str]],
    cache: ParseCache,
) -> tuple[list[Row], Order, Identity]:
    """The rows and their result order when some file changed, appeared or vanished (or
    nothing is cached), and the identity of the cache it wrote when that cache holds
    every file settled (the next run, files unchanged, reads this result from it): a memo
    keyed on the identity can then keep what this run derives.

    A large parse hands the cache write to a forked child (:meth:`_Merge.parse`), which
    orders and writes its own copy of the rows while this process answers: the identity
    is then a function that waits for the child."""
    merge = _Merge(cache)
    for folder, relative in walked:
        merge.add(folder, relative)
    # Every file parsed now cached for good (none racy): the next run can read it all.
    settled = merge.settled == len(merge.fresh)
    writes = cache.path is not None and (
        merge.settled or merge.vanished(walked) or (settled and merge.regrouped(cache, ignore))
    )

    def write(order: Order) -> bytes | None:
        return cache.write(merge.folders, merge.rows, order, ignore=ignore, same=merge.same)

    handoff = merge.parse(root, (lambda: write(merge.order(cache)) or b"") if writes else None)
    order = merge.order(cache)
    written: Identity = None
    if handoff is not None:
        written = lambda: handoff.result() or None  # noqa: E731
    elif writes:
        written = write(order)
    return merge.rows, order, written if settled else None


#: What identifies a rescan's result: the cache written now, or a function that waits for
#: the one a forked child is writing; ``None``: none.
Identity = bytes | Callable[[], bytes | None] | None
