"""A file's signature: what tells every cache of tasktool that a file or folder is as it was.

A signature is four ``stat`` fields packed into 32 bytes: size, mtime_ns, ctime_ns and
inode (an atomic rename gives a new inode even when size and mtime stay equal). The parse
cache keeps one per task file and per folder (:mod:`tasktool.files.caches.cache`), the walk
compares them (:mod:`tasktool.files.scanning.walk`), the sibling index checks a sibling's files by
them (:mod:`tasktool.files.caches.sibling_index`), and a cache's own file is named by one in its
identity. As bytes they compare, join and hash at C speed, and a folder's many are one
string::

    sig = signature.of(os.stat(path))
    signature.settled(os.stat(path), racy_after)  # UNSETTLED when changed a moment ago
    signature.mtime(sig)

An entry modified within the last ``RACY_NS`` may change again within the same timestamp
tick at the same size, as git knows: it is recorded as :data:`UNSETTLED`, which matches no
file, so the next run looks at it again.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from itertools import starmap
from operator import attrgetter

__all__ = ["NOT_A_FILE", "RACY_NS", "SIZE", "UNSETTLED", "at", "mtime", "of", "of_all", "settled"]

_PACKED = struct.Struct("<qqqQ")  # size, mtime_ns, ctime_ns, inode
#: The length of one signature.
SIZE = _PACKED.size
#: How recent a modification makes an entry racy.
RACY_NS = 2_000_000_000
#: A signature that matches no file: an entry changed a moment ago.
UNSETTLED = _PACKED.pack(-1, 0, 0, 0)
#: The signature of a listed name that is no regular file (gone since, a symlink loop).
NOT_A_FILE = _PACKED.pack(-2, 0, 0, 0)

_FIELDS = attrgetter("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino")


def of(stat: os.stat_result) -> bytes:
    """The signature of a ``stat`` result."""
    return _PACKED.pack(stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


def of_all(stats: Iterable[os.stat_result]) -> bytes:
    """The signatures of ``stat`` results, joined (C loops only: no Python call per one)."""
    return b"".join(starmap(_PACKED.pack, map(_FIELDS, stats)))


def settled(stat: os.stat_result, racy_after: int) -> bytes:
    """:func:`of`, or :data:`UNSETTLED` when the entry was modified after ``racy_after``."""
    return UNSETTLED if stat.st_mtime_ns > racy_after else of(stat)


def mtime(sig: bytes) -> int:
    """The mtime_ns of a signature."""
    found: int = _PACKED.unpack(sig)[1]
    return found


def at(joined: bytes, index: int) -> bytes:
    """The ``index``-th signature of joined ones."""
    return joined[index * SIZE : (index + 1) * SIZE]
