"""Walking the task directory: which folders are entered, and each ``.md`` file's
signature (:mod:`tasktool.files.caches.signature`).

The built-in skip list (``node_modules``, ``vendor``, ``dist``, ``build``,
``.next``, ``.nuxt``, ``out``, ``target``, ``__pycache__`` and every hidden
directory) plus the ``ignore`` setting decide which directories are entered.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from stat import S_ISREG

import msgspec

from tasktool.files.caches import signature
from tasktool.files.caches.cache_files import Folder, ignore_entries
from tasktool.files.scanning.forked import Child, usable_cores

__all__ = ["NOT_A_FILE", "SIZE", "SKIPPED_DIRS", "STAT_FORK_FROM", "is_scanned_folder", "walk"]

SKIPPED_DIRS = frozenset(
    {"node_modules", "vendor", "dist", "build", ".next", ".nuxt", "out", "target", "__pycache__"}
)
#: Past this many files, a forked child makes half of a walk's ``stat`` calls.
STAT_FORK_FROM = 5_000
#: Whether a file can be stat-ed through its folder's descriptor (POSIX; not Windows).
_STAT_IN_FOLDER = os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
NOT_A_FILE = signature.NOT_A_FILE
SIZE = signature.SIZE


def _skipped(name: str, relative: str, ignore: frozenset[str]) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS or name in ignore or relative in ignore


def is_scanned_folder(relative: str, ignore: tuple[str, ...] = ()) -> bool:
    """Whether the scan enters the folder at ``relative`` (``/``-separated, below the task
    directory): no part of it is hidden, on the skip list or ignored."""
    ignored = frozenset(ignore_entries(ignore))
    parts = relative.split("/")
    return not any(
        _skipped(name, "/".join(parts[: depth + 1]), ignored) for depth, name in enumerate(parts)
    )


def walk(
    root: Path, ignore: tuple[str, ...] = (), known: Sequence[Folder] = ()
) -> list[tuple[Folder, str]]:
    """Every folder under ``root`` the scan enters (skipped directories left out), each
    with its ``.md`` files' names and signatures in directory order, and its path
    relative to ``root`` (``""`` at the top).

    An ``ignore`` entry matches a directory name or its path relative to ``root``.
    ``known`` are the folders of an earlier walk with the same ``ignore`` (the parse
    cache's): a folder whose own signature is the one recorded there (and settled) is
    not listed again. Then each file is ``stat``-ed: a warm scan is mostly those calls, so
    past ``STAT_FORK_FROM`` files a forked child makes the second half of them.
    """
    listed = _listed(root, ignore, {folder.path: folder for folder in known})
    count = sum(len(listing.names) for listing in listed)
    shares = [(listing.directory, listing.names) for listing in listed]
    child = None
    if count >= STAT_FORK_FROM and usable_cores() > 1:
        mine, theirs = _halves(shares, count)
        try:
            child = Child(functools.partial(_signatures, theirs))
        except OSError:
            pass  # no process to spare: every file is stat-ed here
        else:
            shares = mine
    try:
        packed = _signatures(shares)
    finally:  # the child is waited for even when this share raised (an interrupt)
        rest = child.result() if child is not None else None
    if child is not None:
        packed += rest if rest is not None else _signatures(theirs)
    found: list[tuple[Folder, str]] = []
    start = 0
    for listing in listed:
        end = start + len(listing.names) * SIZE
        found.append((listing.folder(packed[start:end]), listing.relative))
        start = end
    return found


class _Listing(msgspec.Struct, frozen=True, gc=False):
    """A folder as listed (or as known, unchanged): its path, relative path, own
    signature (``own``), the names of its entries that may be task files (``.md``, no directory)
    and the subfolders entered; ``known``: the cached folder it was taken from."""

    directory: str
    relative: str
    own: bytes
    names: list[str]
    subfolders: list[str]
    known: Folder | None = None

    def folder(self, packed: bytes) -> Folder:
        """The folder with its files' packed signatures. Entries that are no file are left
        out, and the folder is then always listed again: such an entry (a dangling
        symlink) can become a file without the folder changing."""
        names, own = self.names, self.own
        if NOT_A_FILE in packed:
            kept = [
                (name, sig)
                for index, name in enumerate(names)
                if (sig := signature.at(packed, index)) != NOT_A_FILE
            ]
            if len(kept) < len(names):
                names, packed = [name for name, _ in kept], b"".join(sig for _, sig in kept)
                own = signature.UNSETTLED
        if self.known is not None and names is self.names:
            # Its strings as cached, not joined again: the scan compares them at once.
            return Folder(self.directory, self.known.names, packed, own, self.known.subfolders)
        return Folder(self.directory, "\0".join(names), packed, own, "\0".join(self.subfolders))


def _listed(root: Path, ignore: tuple[str, ...], known: dict[str, Folder]) -> list[_Listing]:
    """Every folder the scan enters, in walk order; a folder of ``known`` whose signature
    is unchanged and settled is taken from there instead of listed."""
    ignored = frozenset(ignore_entries(ignore))
    racy_after = time.time_ns() - signature.RACY_NS
    found: list[_Listing] = []
    pending = [(str(root), "")]
    while pending:
        directory, relative = pending.pop()
        try:
            with _opened(directory) as folder:
                # A folder changed a moment ago is UNSETTLED: an entry made within the same
                # timestamp tick after the listing would leave it as it was. (An entry made
                # later sets its mtime to that later time: a settled mtime is enough.)
                own = signature.settled(os.stat(folder), racy_after)
                old = known.get(directory)
                if old is not None and own != signature.UNSETTLED and old.own == own:
                    listing = _Listing(directory, relative, own, old.listed(), old.entered(), old)
                else:
                    listing = _Listing(directory, relative, own, *_list(folder, relative, ignored))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        found.append(listing)
        for name in listing.subfolders:
            pending.append(
                (os.path.join(directory, name), f"{relative}/{name}" if relative else name)
            )
    return found


@contextmanager
def _opened(directory: str) -> Iterator[str | int]:
    """The folder to list and stat its files through: a descriptor, closed after (each
    stat is then an fstatat() of the bare name, which spares the kernel walking the whole
    path again, a good share of a warm scan), or its path where that is not possible."""
    if not _STAT_IN_FOLDER:
        yield directory
        return
    fd = os.open(directory, _DIRECTORY_FLAGS)
    try:
        yield fd
    finally:
        os.close(fd)


def _list(folder: str | int, relative: str, ignored: frozenset[str]) -> tuple[list[str], list[str]]:
    """The names of a folder's entries that may be task files, and its subfolders the
    scan enters."""
    names: list[str] = []
    subfolders: list[str] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                if not _skipped(name, f"{relative}/{name}" if relative else name, ignored):
                    subfolders.append(name)
            elif name.endswith(".md"):
                names.append(name)
    return names, subfolders


def _halves(
    shares: list[tuple[str, list[str]]], count: int
) -> tuple[list[tuple[str, list[str]]], list[tuple[str, list[str]]]]:
    """``shares`` (folders and file names) cut into two with half the files each, in order."""
    first: list[tuple[str, list[str]]] = []
    second: list[tuple[str, list[str]]] = []
    room = count // 2
    for directory, names in shares:
        taken = names[:room]
        room -= len(taken)
        if taken:
            first.append((directory, taken))
        if len(taken) < len(names):
            second.append((directory, names[len(taken) :]))
    return first, second


def _signatures(shares: list[tuple[str, list[str]]]) -> bytes:
    """The packed signature of every file named in ``shares`` (folders and names), in
    order; ``NOT_A_FILE`` for one that is gone or not a regular file."""
    stat, signature_of = os.stat, signature.of
    packed: list[bytes] = []
    for directory, names in shares:
        start = len(packed)
        try:
            with _opened(directory) as folder:
                fd = folder if isinstance(folder, int) else None
                for name in names:
                    path = name if fd is not None else os.path.join(directory, name)
                    try:
                        found = stat(path, dir_fd=fd)
                    except OSError:  # gone since the listing, a symlink loop
                        packed.append(NOT_A_FILE)
                        continue
                    packed.append(signature_of(found) if S_ISREG(found.st_mode) else NOT_A_FILE)
        except OSError:  # the folder itself is gone
            packed[start:] = [NOT_A_FILE] * len(names)
    return b"".join(packed)
