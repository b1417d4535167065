"""The sync state file: ``<task dir>/.tasktool/sync-state.json``.

Per source and external id it records the task id the item became, the
hash of the remote fields last written (:attr:`Desired.remote_hash`) and the
hash of the task file right after sync wrote it. A re-run compares both: an
unchanged remote hash means nothing to do, a file whose hash differs was
edited locally. The file is replaced atomically; one that cannot be read is
a ``sync.state`` error rather than a silent fresh start (which would
re-import every item).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

from tasktool.files.storage import STATE_DIR, atomic_write_bytes, ensure_state_dir
from tasktool.model.errors import TaskToolError

STATE_FILE = "sync-state.json"
VERSION = 1


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """One synced item."""

    task_id: str
    remote_hash: str
    local_hash: str


class SyncState(msgspec.Struct, kw_only=True):
    """Records per source name, then per external id."""

    version: int = VERSION
    sources: dict[str, dict[str, Record]] = msgspec.field(default_factory=dict)

    def records(self, source: str) -> dict[str, Record]:
        """The records of one source (created on first use)."""
        return self.sources.setdefault(source, {})


_decoder = msgspec.json.Decoder(SyncState)


def state_path(task_dir: Path) -> Path:
    return task_dir / STATE_DIR / STATE_FILE


def load_state(task_dir: Path) -> SyncState:
    """The state of earlier runs (empty when there were none)."""
    path = state_path(task_dir)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return SyncState()
    except OSError as exc:
        raise TaskToolError(
            f"cannot read the sync state {path}: {exc.strerror or exc}", code="sync.state"
        ) from None
    try:
        state = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise TaskToolError(
            f"the sync state {path} is damaged ({exc}); move it away to re-match tasks by "
            "external_id",
            code="sync.state",
        ) from None
    if state.version != VERSION:
        raise TaskToolError(
            f"the sync state {path} has version {state.version}; this tasktool reads {VERSION}",
            code="sync.state",
        )
    return state


def save_state(task_dir: Path, state: SyncState) -> None:
    ensure_state_dir(task_dir)
    atomic_write_bytes(state_path(task_dir), msgspec.json.format(msgspec.json.encode(state)))


def file_hash(path: Path) -> str:
    """The hash of a task file's bytes as they are now."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


__all__ = ["STATE_FILE", "Record", "SyncState", "file_hash", "load_state", "save_state"]
