"""What the core answers and announces, as plain values the shell encodes for the wire.

A request's :data:`Answer` goes back to the client that asked; an
:data:`Event` is pushed to the client ids of its :data:`Delivery`. The wire
module maps each class to its frame (``docs/protocol.md``); nothing here knows
JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from matchmaker.config import Limits
from matchmaker.model import Project

__all__ = [
    "Alive",
    "Answer",
    "Delivery",
    "EntryClosed",
    "Event",
    "MemberInfo",
    "MemberJoined",
    "MemberLeft",
    "MessageRelayed",
    "PoolEntered",
    "PoolExpired",
    "PoolLeft",
    "PoolWithdrawn",
    "Relayed",
    "SessionCreated",
    "SessionJoined",
    "SessionLeft",
    "Welcome",
]

Public = dict[str, Any]


# -- answers --------------------------------------------------------------------------------


@dataclass(slots=True)
class Welcome:
    """The answer to ``hello``: who the client is, its Project's rules, the server's limits."""

    client_id: str
    resume_token: str
    project: Project
    limits: Limits


@dataclass(slots=True)
class PoolEntered:
    """The answer to ``pool.enter``; ``expires_at`` is epoch milliseconds."""

    pool: str
    entry_id: str
    mode: str
    group_size: int
    expires_at: int


@dataclass(slots=True)
class PoolLeft:
    """The answer to ``pool.leave``: the withdrawn entry."""

    pool: str
    entry_id: str


@dataclass(slots=True)
class SessionJoined:
    """The answer to ``session.join``; ``created`` tells whether this join opened the room."""

    session_id: str
    created: bool


@dataclass(slots=True)
class SessionLeft:
    """The answer to ``session.leave``."""

    session_id: str


@dataclass(slots=True)
class Relayed:
    """The answer to a ``session.send`` that asked for one (carried an ``id``)."""


@dataclass(slots=True)
class Alive:
    """The answer to a client's ``ping`` (a ``pong`` frame)."""


Answer = Welcome | PoolEntered | PoolLeft | SessionJoined | SessionLeft | Relayed | Alive


# -- events ---------------------------------------------------------------------------------


@dataclass(slots=True)
class MemberInfo:
    """A session member as the others see it."""

    client_id: str
    public: Public | None = None


@dataclass(slots=True)
class SessionCreated:
    """The recipient (``you``) is a member of a new session: a match, or a room it joined."""

    session_id: str
    members: list[MemberInfo]
    you: str
    pool: str | None = None


@dataclass(slots=True)
class MessageRelayed:
    """A message from ``sender``; ``data`` is the sender's payload, passed on untouched."""

    session_id: str
    sender: str
    data: object


@dataclass(slots=True)
class MemberJoined:
    """Someone joined a room the recipient is in."""

    session_id: str
    client_id: str
    public: Public | None = None


@dataclass(slots=True)
class MemberLeft:
    """A member left a session (``reason``: ``left`` or ``disconnected``)."""

    session_id: str
    client_id: str
    reason: str


@dataclass(slots=True)
class EntryClosed:
    """Base of the events that end a waiting entry without a match for it."""

    pool: str
    entry_id: str
    reason: str


@dataclass(slots=True)
class PoolWithdrawn(EntryClosed):
    """An entry was withdrawn because its client was matched in another pool."""


@dataclass(slots=True)
class PoolExpired(EntryClosed):
    """An entry's TTL ran out before a match."""


@dataclass(slots=True)
class PoolClosed(EntryClosed):
    """An entry's policy pool was closed: its policy was changed or removed."""


Event = (
    SessionCreated
    | MessageRelayed
    | MemberJoined
    | MemberLeft
    | PoolWithdrawn
    | PoolExpired
    | PoolClosed
)

Delivery = tuple[Sequence[str], Event]
"""An event and the client ids it goes to."""
