"""The live view of ``GET /admin/live``: plain values the data plane's snapshot fills.

Only counts, modes, ids, ages and match-quality means: never a credential, an attribute or a
public profile, so nothing a client declared privately can leave through it.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

__all__ = ["LivePool", "LiveProject", "LiveQuality", "LiveSession", "LiveSnapshot"]


class LivePool(msgspec.Struct, rename="camel", frozen=True):
    """One live pool: ``policy`` tells a policy pool from an ad-hoc one; ``paused`` counts
    the entries of clients that are away (within their resume grace)."""

    name: str
    mode: str
    group_size: int
    policy: bool
    waiting: int
    paused: int
    oldest_wait_ms: int | None


class LiveSession(msgspec.Struct, rename="camel", frozen=True):
    """One session: the pool that formed it or the room it is, and its member count."""

    id: str
    size: int
    pool: str | None = None
    room: str | None = None


class LiveQuality(msgspec.Struct, rename="camel", frozen=True):
    """The match quality of one policy (``(ad-hoc)``: every ad-hoc pool) since the process
    started: groups formed, the mean wait from ``pool.enter`` to the match, the mean spread
    of each range-rule attribute and the mean team imbalance (``None``: not measured)."""

    policy: str
    matches: int
    mean_wait_ms: float | None
    mean_spread: dict[str, float]
    mean_imbalance: float | None


class LiveProject(msgspec.Struct, rename="camel", frozen=True):
    """What one Project has live in this process: ``clients`` connected, and ``away``
    the clients whose connection dropped and who may still resume (within the grace);
    ``quality`` the match quality of each policy that formed a group, by name."""

    id: str
    clients: int
    away: int
    pools: list[LivePool]
    sessions: list[LiveSession]
    quality: list[LiveQuality] = []


LiveSnapshot = Callable[[], list[LiveProject]]
"""Returns every Project with something live, ordered by id (read-only, synchronous)."""
