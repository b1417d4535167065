"""What the core answers and announces, as plain values the shell encodes for the wire.

A request's answer (:class:`PoolEntered`, :class:`SessionJoined`) goes back to
the client that asked; an :data:`Event` is pushed to the client ids of its
:data:`Delivery`. The wire module maps each class to its frame
(``docs/protocol.md``); nothing here knows JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Delivery",
    "EntryClosed",
    "Event",
    "MemberInfo",
    "MemberJoined",
    "MemberLeft",
    "MessageRelayed",
    "PoolEntered",
    "PoolExpired",
    "PoolWithdrawn",
    "SessionCreated",
    "SessionJoined",
]

Public = dict[str, Any]


# -- answers --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PoolEntered:
    """The answer to ``pool.enter``; ``expires_at`` is epoch milliseconds."""

    pool: str
    entry_id: str
    mode: str
    group_size: int
    expires_at: int


@dataclass(frozen=True, slots=True)
class SessionJoined:
    """The answer to ``session.join``; ``created`` tells whether this join opened the room."""

    session_id: str
    created: bool


# -- events ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemberInfo:
    """A session member as the others see it."""

    client_id: str
    public: Public | None = None


@dataclass(frozen=True, slots=True)
class SessionCreated:
    """The recipient (``you``) is a member of a new session: a match, or a room it joined."""

    session_id: str
    members: list[MemberInfo]
    you: str
    pool: str | None = None


@dataclass(frozen=True, slots=True)
class MessageRelayed:
    """A message from ``sender``; ``data`` is the sender's payload, passed on untouched."""

    session_id: str
    sender: str
    data: object


@dataclass(frozen=True, slots=True)
class MemberJoined:
    """Someone joined a room the recipient is in."""

    session_id: str
    client_id: str
    public: Public | None = None


@dataclass(frozen=True, slots=True)
class MemberLeft:
    """A member left a session (``reason``: ``left`` or ``disconnected``)."""

    session_id: str
    client_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class EntryClosed:
    """Base of the events that end a waiting entry without a match for it."""

    pool: str
    entry_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class PoolWithdrawn(EntryClosed):
    """An entry was withdrawn because its client was matched in another pool."""


@dataclass(frozen=True, slots=True)
class PoolExpired(EntryClosed):
    """An entry's TTL ran out before a match."""


Event = SessionCreated | MessageRelayed | MemberJoined | MemberLeft | PoolWithdrawn | PoolExpired

Delivery = tuple[Sequence[str], Event]
"""An event and the client ids it goes to."""
