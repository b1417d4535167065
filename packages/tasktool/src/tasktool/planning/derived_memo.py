"""What a command derives from the repository's tasks, kept from one run to the next in
``<task dir>/.tasktool/derived-<kind>.msgpack`` (one file per kind: ``next``, ``stats``
and ``validate``; ``get``'s index is kept per folder instead, beside the parse cache's
rows: :mod:`tasktool.planning.get_index`).

``next``'s ranking, ``stats`` and ``validate``'s task checks are pure functions of the
tasks (as overlaid with sibling worktrees), the settings and the command's options: no
clock, no other file. The key names all three without reading the tasks again:

- :attr:`Repository.identity <tasktool.planning.repository.Repository.identity>`, known
  when the parse cache holds every file as it is (read for it, or written by this run's
  scan with every file settled; with sibling worktrees, the overlay memo's key, which
  holds it and each sibling index's digest): the same identity, the same tasks. Without
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

    stats = derived(repo, "stats", (), Stats, lambda: compute_stats(repo.graph, settings))
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from tasktool import __version__
from tasktool.files.storage import STATE_DIR, atomic_write_bytes, ensure_state_dir

if TYPE_CHECKING:
    from pathlib import Path

    from tasktool.planning.repository import Repository

T = TypeVar("T")

#: Part of every key: change it with what any stored kind means or holds (its rules or
#: its shape), or a result found by the old ones would be recalled for the same inputs.
_FORMAT = "derived-memo-1"
#: How many results (keys) one memo file keeps.
KEPT = 4


class _Entry(msgspec.Struct, frozen=True, array_like=True):
    key: bytes
    value: msgspec.Raw  # decoded only when the key matches


class _Memo(msgspec.Struct, frozen=True, array_like=True):
    format: str
    entries: list[_Entry]


_decoder = msgspec.msgpack.Decoder(_Memo)
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
    if repo.identity is None:
        return None
    return _encoder.encode((_FORMAT, __version__, kind, repo.identity, repo.settings, options))


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
    settings), ``kind`` and ``options`` (plain values msgspec encodes) when there is one,
    decoded as ``result`` and accepted by ``valid`` (a check against the repository).
    The memo keeps the ``KEPT`` newest values."""
    key = memo_key(repo, kind, options)
    if key is None:
        return compute()
    path = memo_path(repo, kind)
    entries = _entries(path)
    stored = next((entry.value for entry in entries if entry.key == key), None)
    found: T | None = _decoded(stored, result) if stored is not None else None
    if found is not None and (valid is None or valid(found)):
        return found
    value = compute()
    _remember(path, key, value, [entry for entry in entries if entry.key != key][: KEPT - 1])
    return value


def _entries(path: Path) -> list[_Entry]:
    """The results ``path`` keeps, newest first (none when missing, foreign or corrupt)."""
    try:
        memo = _decoder.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError):
        return []
    return memo.entries if memo.format == _FORMAT else []


def _decoded(raw: msgspec.Raw, result: Any) -> Any:
    try:
        return _value_decoder(result).decode(raw)
    except msgspec.DecodeError:
        return None


def _remember(path: Path, key: bytes, value: object, others: list[_Entry]) -> None:
    try:
        entry = _Entry(key, msgspec.Raw(_encoder.encode(value)))
        data = _encoder.encode(_Memo(_FORMAT, [entry, *others]))
        ensure_state_dir(path.parent.parent)
        atomic_write_bytes(path, data, sync=False)
    except (OSError, UnicodeEncodeError):
        return
