"""Outbound frames the server pushes: :class:`EventFrame`, its subclasses, :class:`ModeNotice`.

Each event is a tagged Struct with a ``data`` field; the connection adds a
per-client ``seq`` when it sends one.
"""

from __future__ import annotations

from typing import Any

from msgspec import Raw, Struct

from matchmaker.data.protocol.payloads import Public

__all__ = [
    "EntryData",
    "EventFrame",
    "MemberData",
    "MemberInfo",
    "ModeNotice",
    "PoolClosed",
    "PoolExpired",
    "PoolWithdrawn",
    "RtcSignalled",
    "ServerPing",
    "SessionCreated",
    "SessionCreatedData",
    "SessionMemberJoined",
    "SessionMemberLeft",
    "SessionMessage",
    "SessionMessageData",
    "SignalData",
]


class EventFrame(Struct, gc=False, tag_field="type", omit_defaults=True):
    """Base of server pushes. Subclasses set ``tag`` and a ``data`` field."""


class MemberInfo(Struct, gc=False, omit_defaults=True):
    """A session member as the others see it (``player_id``: its token's ``sub``)."""

    client_id: str
    public: Public | None = None
    player_id: str | None = None


class SessionCreatedData(Struct, gc=False, omit_defaults=True):
    session_id: str
    members: list[MemberInfo]
    you: str
    pool: str | None = None
    teams: dict[str, list[str]] | None = None
    region: str | None = None


class SessionCreated(EventFrame, tag="session.created"):
    """You are a member of a new session (a match, or a room you joined)."""

    data: SessionCreatedData


class SessionMessageData(Struct, gc=False, rename={"sender": "from"}):
    session_id: str
    sender: str
    data: Raw


class SessionMessage(EventFrame, tag="session.message"):
    """A message relayed from another member."""

    data: SessionMessageData


class MemberData(Struct, gc=False, omit_defaults=True):
    session_id: str
    client_id: str
    public: Public | None = None
    reason: str | None = None
    player_id: str | None = None
    team: str | None = None


class SessionMemberJoined(EventFrame, tag="session.member_joined"):
    """Someone joined a room you are in."""

    data: MemberData


class SessionMemberLeft(EventFrame, tag="session.member_left"):
    """A member left (``reason``: ``left``, ``disconnected``)."""

    data: MemberData


class EntryData(Struct, gc=False, omit_defaults=True):
    pool: str
    entry_id: str
    reason: str | None = None


class PoolWithdrawn(EventFrame, tag="pool.withdrawn"):
    """An entry was withdrawn because the client was matched in another pool."""

    data: EntryData


class PoolExpired(EventFrame, tag="pool.expired"):
    """An entry's ``ttl_ms`` ran out before a match."""

    data: EntryData


class PoolClosed(EventFrame, tag="pool.closed"):
    """An entry's policy pool was closed because the policy changed or was removed."""

    data: EntryData


class ServerPing(EventFrame, tag="ping"):
    """Heartbeat; answer with ``{"type": "pong"}`` (any frame counts as liveness)."""


class SignalData(Struct, gc=False, rename={"sender": "from"}):
    session_id: str
    sender: str
    signal: Raw


class RtcSignalled(EventFrame, tag="rtc.signal"):
    """A WebRTC signal from another member of a session."""

    data: SignalData


class ModeNotice(Struct, gc=False):
    """An event of the claim, mutual, propose or delegated mode: ``type`` is the core
    event's ``KIND`` and ``data`` the core event itself, whose fields are the wire's."""

    type: str
    data: Any
