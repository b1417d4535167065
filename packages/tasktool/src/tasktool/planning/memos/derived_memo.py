"""What a command derives from the repository's tasks, kept from one run to the next in
``<task dir>/.tasktool/derived-<kind>.msgpack`` (one file per kind: ``next``, ``stats``
and ``validate``; ``get``'s index is kept per folder instead, beside the parse cache's
rows: :mod:`tasktool.planning.get_index`).

``next``'s ranking, ``stats`` and ``validate``'s task checks are pure functions of the
tasks (as overlaid with sibling worktrees), the config and the command's options: no
clock, no other file. The key names all three without reading the tasks again:

- :attr:`CacheView.identity <tasktool.planning.repository.CacheView.identity>`, known
  when the parse cache holds every file as it is (read for it, or written by this run's
  scan with every file settled; with sibling worktrees, the overlay memo's key, which
  holds it and each sibling index's identity): the same identity, the same tasks. Without
  one (a file changed a moment ago, no cache) the result is computed and nothing is
  recalled or stored;
- every effective setting (a setting that changes nothing derived costs a recompute the
  first time, never a wrong answer);
- the command's own options (filters, limit...), as the caller passes them;
- this tasktool's version (a release may derive another answer from the same tasks).

The result is stored, not its rendering: formats, terminal width and colour stay live.
Each file keeps the last ``KEPT`` results (newest first), so runs that alternate options
(``next`` and ``next --limit 0``) each recall theirs. A missing, foreign, corrupt or
stale memo is computed again and rewritten (best effort, atomic; a read-only task
directory keeps none)::

    stats = derived(repo, "stats", (), Stats, lambda: compute_stats(repo.graph, config))
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from tasktool import __version__
from tasktool.files.caches.memo import Memo
from tasktool.files.storage import STATE_DIR

if TYPE_CHECKING:
    from pathlib import Path

    from tasktool.planning.repository import Repository

__all__ = ["KEPT", "T", "derived", "memo_key", "memo_path"]

T = TypeVar("T")

#: Part of every key: change it with what any stored kind means or holds (its rules or
#: its shape), or a result found by the old ones would be recalled for the same inputs.
#: 2: ``validate`` reports ``task.invalid_id``, ``task.stale_temp`` and the dangling
#: dependencies of archived tasks, which a report kept by 1 lacks.
_FORMAT = "derived-memo-2"
#: How many results (keys) one memo file keeps.
KEPT = 4

_encoder = msgspec.msgpack.Encoder()


@functools.cache
def _value_decoder(result: Any) -> msgspec.msgpack.Decoder[Any]:
    return msgspec.msgpack.Decoder(result)


def memo_path(repo: Repository, kind: str) -> Path:
    """The memo of ``kind`` in the task directory's state directory."""
    return repo.task_dir / STATE_DIR / f"derived-{kind}.msgpack"


def memo_key(repo: Repository, kind: str, options: object) -> bytes | None:
    """What names a result of ``kind`` derived from ``repo`` with ``options`` (plain values
    msgspec encodes): the repository's identity, every setting, the options and this
    tasktool's version; ``None`` when the repository's identity is not known."""
    identity = repo.cache.identity
    if identity is None:
        return None
    return _encoder.encode((_FORMAT, __version__, kind, identity, repo.config, options))


def derived(
    repo: Repository,
    kind: str,
    options: object,
    result: Any,
    compute: Callable[[], T],
    *,
    valid: Callable[[T], bool] | None = None,
) -> T:
    """``compute()``, or the value stored for the same ``repo`` (its identity and
    config), ``kind`` and ``options`` (plain values msgspec encodes) when there is one,
    decoded as ``result`` and accepted by ``valid`` (a check against the repository).
    The memo keeps the ``KEPT`` newest values."""
    new = repo.cache.new  # a new identity has nothing kept yet (and may still be written)
    key = None if new else memo_key(repo, kind, options)
    if key is None and not new:
        return compute()  # no identity: nothing to keep
    memo = Memo(memo_path(repo, kind), _FORMAT, kept=KEPT)
    if key is not None:
        found: T | None = memo.recall(key, _value_decoder(result))
        if found is not None and (valid is None or valid(found)):
            return found
    value = compute()
    key = key or memo_key(repo, kind, options)
    if key is not None:
        memo.remember(key, value)
    return value
