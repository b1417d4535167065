"""The overlay's verdict, kept from one run to the next in
``<task dir>/.tasktool/overlay.msgpack`` (the current worktree's state directory).

The verdict (:class:`tasktool.planning.worktrees.overlay.Verdict`: the statuses siblings give, the
tasks only they hold, the divergences) depends only on this worktree's scan result and
on what each sibling's files hold. Its key names both without reading them again:

- this worktree's parse-cache identity (:func:`tasktool.files.scanning.scan.scan_source`), known
  only when the cache holds every file as it is (the same identity, the same result);
- per sibling read: its worktree and branch (the provenance shown), task directory and
  ignore list, and its index's identity (:attr:`SiblingIndex.identity
  <tasktool.files.caches.sibling_index.SiblingIndex.identity>`), which the index's ``stat``
  check has just confirmed against every sibling folder and file;
- the current worktree's path (named in the divergence warnings).

A run whose key matches applies the stored verdict instead of matching every status
against each sibling's. The file is a :class:`tasktool.files.caches.memo.Memo` (best effort,
atomic)::

    key = memo_key(here, source, [(worktree, branch, task_dir, ignore, identity), ...])
    verdict = recall(path, key, size=len(tasks) + len(archived))  # None: compute it
    remember(path, key, verdict)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import msgspec

from tasktool.files.caches.memo import Memo
from tasktool.files.storage import STATE_DIR
from tasktool.planning.worktrees.overlay import Verdict

__all__ = ["MEMO_FILE", "SiblingKey", "memo_key", "memo_path", "recall", "remember"]

#: Part of every key: change it with the overlay's rules or the verdict's shape, or a
#: verdict found by the old ones would be recalled for the same inputs.
_FORMAT = "overlay-memo-2"  # 2: a files.memo.Memo file
MEMO_FILE = "overlay.msgpack"

#: One sibling read: worktree path, branch, task directory, ignore list, index identity.
SiblingKey = tuple[str, str | None, str, tuple[str, ...], bytes]

_verdict_decoder = msgspec.msgpack.Decoder(Verdict)
_encoder = msgspec.msgpack.Encoder()


def memo_path(state_root: Path) -> Path:
    """The memo of the task directory ``state_root`` (the current worktree's)."""
    return state_root / STATE_DIR / MEMO_FILE


def memo_key(here: str, source: bytes, siblings: Iterable[SiblingKey]) -> bytes:
    """The key of a verdict (the inputs themselves, encoded: no hash to collide)."""
    return _encoder.encode((_FORMAT, here, source, tuple(siblings)))


def recall(path: Path, key: bytes, *, size: int) -> Verdict | None:
    """The stored verdict when its key is ``key``; ``None`` otherwise (also when the file
    is missing or does not decode, or names a task past the ``size`` of the scan)."""
    verdict: Verdict | None = Memo(path, _FORMAT).recall(key, _verdict_decoder)
    if verdict is None or any(not 0 <= won.at < size for won in verdict.won):
        return None
    return verdict


def remember(path: Path, key: bytes, verdict: Verdict) -> None:
    """Store ``verdict`` under ``key`` (best effort: a read-only directory keeps none)."""
    Memo(path, _FORMAT).remember(key, verdict)
