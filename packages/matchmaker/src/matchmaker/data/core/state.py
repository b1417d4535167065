"""The plain records the matching core keeps: clients, entries, sessions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from matchmaker.data.core.pools import Bucket, Pool
from matchmaker.model import FilterValue

__all__ = ["ClientState", "Entry", "Member", "Session"]


@dataclass(slots=True, eq=False)
class ClientState:
    """One connected client, past ``hello``."""

    client_id: str
    project_id: str
    credential: str | None
    attributes: dict[str, FilterValue]
    entries: dict[str, Entry] = field(default_factory=dict)  # by pool name
    sessions: dict[str, Session] = field(default_factory=dict)  # by session id


@dataclass(slots=True, eq=False)
class Entry:
    """A client waiting in a pool."""

    entry_id: str
    seq: int
    client: ClientState
    pool: Pool
    bucket: Bucket
    public: dict[str, Any] | None
    expires_at: int
    live: bool = True


@dataclass(slots=True, eq=False)
class Member:
    """A client in a session, with the public data it showed when it got there."""

    client: ClientState
    public: dict[str, Any] | None


@dataclass(slots=True, eq=False)
class Session:
    """A group of clients that relay messages to each other; deleted when empty."""

    session_id: str
    project_id: str
    pool: str | None = None
    room: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
