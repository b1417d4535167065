"""The sans-I/O matching core: pools, buckets, modes, sessions and membership.

The WebSocket shell (:mod:`matchmaker.data.connection`) turns frames into calls
on :class:`Matchmaker` and its returned deliveries into sends.
"""

from __future__ import annotations

from matchmaker.data.core.engine import Delivery, Matchmaker
from matchmaker.data.core.modes import MODES, AutoMode, ModeStrategy
from matchmaker.data.core.pools import Pool, PoolSpec, resolve_pool
from matchmaker.data.core.projects import current_project, resolve_hello
from matchmaker.data.core.state import ClientState, Entry, Member, Session

__all__ = [
    "MODES",
    "AutoMode",
    "ClientState",
    "Delivery",
    "Entry",
    "Matchmaker",
    "Member",
    "ModeStrategy",
    "Pool",
    "PoolSpec",
    "Session",
    "current_project",
    "resolve_hello",
    "resolve_pool",
]
