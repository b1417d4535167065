"""Pool modes: who chooses a group. One strategy object per mode.

The engine adds an entry to its bucket and asks the pool's strategy which
groups are now complete. Only ``auto`` is served so far; the other modes of
the design (``claim``, ``mutual``, ``propose``, ``delegated``) plug in here with
their own requests, and until then entering such a pool is
``pool.mode_unsupported``.
"""

from __future__ import annotations

from typing import Protocol

from matchmaker.core.state import Entry, Pool

__all__ = ["MODES", "AutoMode", "ModeStrategy"]


class ModeStrategy(Protocol):
    """Decides which waiting entries of a pool form groups."""

    def after_enter(self, pool: Pool, entry: Entry) -> list[list[Entry]]:
        """Groups complete now that ``entry`` waits in ``pool`` (entries still in the pool)."""
        ...


class AutoMode:
    """The server matches the oldest ``groupSize`` entries of a bucket, at once.

    Matching runs on every arrival, so a bucket never holds ``groupSize``
    entries between operations and forming a group looks at one bucket only.
    """

    def after_enter(self, pool: Pool, entry: Entry) -> list[list[Entry]]:
        group = pool.oldest(entry.bucket, pool.spec.group_size)
        return [group] if len(group) == pool.spec.group_size else []


MODES: dict[str, ModeStrategy] = {"auto": AutoMode()}
