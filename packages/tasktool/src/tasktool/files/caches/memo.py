"""A memo: a value kept from one run to the next under its key, in a file of a task
directory's state folder (``<task dir>/.tasktool/``), recalled while the key is the same.

The key is the inputs themselves, encoded (no hash to collide): an identity that names
the tasks without reading them (:attr:`ParseCache.identity
<tasktool.files.caches.cache.ParseCache.identity>`, :attr:`SiblingIndex.identity
<tasktool.files.caches.sibling_index.SiblingIndex.identity>`), the config, the options, and a
format string the caller changes with what the value means. Everything is best effort: a
missing, foreign, corrupt or stale memo is computed again and rewritten, and a write
(temp file, rename: atomic) that fails, as in a read-only directory, keeps nothing::

    memo = Memo(path, "derived-memo-1", kept=4)
    value = memo.recall(key, decoder)  # None: nothing kept under this key
    memo.remember(key, value)          # the newest first; the ``kept`` newest stay

An output too large to hold in memory (:mod:`tasktool.present.output_memo`) is kept
alone in its file, streamed in as it is written (:class:`Recording`) and checked by its
key before it is copied out (:func:`open_kept`).
"""

from __future__ import annotations

import contextlib
import os
import struct
import time
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from tasktool.files.storage import STATE_DIR, atomic_write_bytes, ensure_state_dir

__all__ = ["HEADER", "Memo", "Recording", "commit", "open_kept", "used"]

_LENGTH = struct.Struct("<Q")
#: The room for its key (length first) at the start of a kept output, the output after
#: it: a key is about a kilobyte (identity, config, options).
HEADER = 16_384


class _Entry(msgspec.Struct, frozen=True, array_like=True):
    key: bytes
    value: msgspec.Raw  # decoded only when the key matches


class _File(msgspec.Struct, frozen=True, array_like=True):
    format: str
    entries: list[_Entry]


_decoder = msgspec.msgpack.Decoder(_File)
_encoder = msgspec.msgpack.Encoder()


def _make_folder(folder: Path) -> None:
    """``folder``, and the state folder it is in (with its ``.gitignore``)."""
    state = next((parent for parent in (folder, *folder.parents) if parent.name == STATE_DIR), None)
    if state is not None:
        ensure_state_dir(state.parent)
    folder.mkdir(exist_ok=True)


def commit(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically, its folders made if missing; whether it was
    written (best effort: never raises)."""
    try:
        _make_folder(path.parent)
        atomic_write_bytes(path, data, sync=False)
    except OSError:
        return False
    return True


class Memo:
    """The memo file at ``path``, written with ``format`` (another format's counts as
    empty), keeping the ``kept`` newest values."""

    def __init__(self, path: Path, format: str, *, kept: int = 1) -> None:
        self.path = path
        self._format = format
        self._kept = kept
        self._entries: list[_Entry] | None = None

    def _read(self) -> list[_Entry]:
        if self._entries is None:
            try:
                found = _decoder.decode(self.path.read_bytes())
            except (OSError, msgspec.DecodeError):
                found = _File(self._format, [])
            self._entries = found.entries if found.format == self._format else []
        return self._entries

    def recall(self, key: bytes, decoder: msgspec.msgpack.Decoder[Any]) -> Any:
        """The value kept under ``key``, decoded by ``decoder``; ``None`` when none is (or
        it does not decode)."""
        raw = next((entry.value for entry in self._read() if entry.key == key), None)
        if raw is None:
            return None
        try:
            return decoder.decode(raw)
        except msgspec.DecodeError:
            return None

    def remember(self, key: bytes, value: object) -> None:
        """Keep ``value`` under ``key``, the newest, with the ``kept - 1`` newest others."""
        if self._kept > 1:
            others = [entry for entry in self._read() if entry.key != key][: self._kept - 1]
        else:
            others = []  # nothing to read
        try:
            entry = _Entry(key, msgspec.Raw(_encoder.encode(value)))
            data = _encoder.encode(_File(self._format, [entry, *others]))
        except UnicodeEncodeError:  # a value naming a file that is not UTF-8
            return
        if commit(self.path, data):
            self._entries = [entry, *others]


def open_kept(path: Path, key: bytes) -> BinaryIO | None:
    """The output kept at ``path`` for ``key``, open past its key (``None``: no such
    file, or it holds another key or is damaged); marked as used now."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (the caller closes it)
    except OSError:
        return None
    try:
        (length,) = _LENGTH.unpack(handle.read(_LENGTH.size))
        if length <= HEADER - _LENGTH.size and handle.read(length) == key:
            handle.seek(HEADER)
            used(path)
            return handle
    except (OSError, struct.error):
        pass
    handle.close()
    return None


def used(path: Path) -> None:
    """Date ``path`` now, to the nanosecond (the kernel's own stamps are a tick coarse,
    which would tie outputs used in the same few milliseconds): kept the longest."""
    now = time.time_ns()
    with contextlib.suppress(OSError):
        os.utime(path, ns=(now, now))


class Recording:
    """One output being kept for :func:`open_kept`, in a temporary file in ``folder``: room
    for its key first (:data:`HEADER` bytes), then what is written; put in place under its
    key when complete (:meth:`finish`). The key is known only then: a cold run's is the
    identity of the parse cache a forked child is still writing while the output is made.
    Its own failures (disk full, the folder gone) only drop it."""

    def __init__(self, fd: int, temp: str) -> None:
        self._file: BinaryIO | None = os.fdopen(fd, "wb")
        self._temp = temp

    @classmethod
    def start(cls, folder: Path) -> Recording | None:
        """A recording in ``folder`` (``None``: the folder cannot be written)."""
        import tempfile  # not on the replay path

        try:
            _make_folder(folder)
            fd, temp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=folder)
        except OSError:
            return None
        recording = cls(fd, temp)
        recording.write(bytes(HEADER))
        return recording

    def write(self, data: bytes) -> None:
        if self._file is None:
            return
        try:
            self._file.write(data)
        except OSError:
            self.drop()

    def finish(self, path: Path, key: bytes) -> bool:
        """Put the output in place at ``path`` under ``key``; whether it is (a key larger
        than the room left for it keeps nothing)."""
        if self._file is None:
            return False
        header = _LENGTH.pack(len(key)) + key
        if len(header) > HEADER:
            self.drop()
            return False
        try:
            self._file.flush()
            os.pwrite(self._file.fileno(), header, 0)
            self._file.close()
            os.replace(self._temp, path)
        except OSError:
            self.drop()
            return False
        used(path)
        return True

    def drop(self) -> None:
        """Keep nothing."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
        with contextlib.suppress(OSError):
            os.unlink(self._temp)
