"""Wire messages of the data plane, as msgspec Structs.

Every inbound frame is one JSON object decoded once by :data:`REQUEST_DECODER`
into the :data:`Request` tagged union (tag field ``type``, unknown fields
refused). Outbound frames are :class:`Reply` (the answer to a request, echoing
its ``id``) and :class:`Event` subclasses (pushes; the connection adds a
per-client ``seq`` when it sends them). ``docs/protocol.md`` is the prose form
of this module.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta, Raw, Struct

from matchmaker.config import Limits
from matchmaker.filters import ATTRIBUTE_NAME
from matchmaker.model import FilterValue, PoolMode

__all__ = [
    "REQUEST_DECODER",
    "Bye",
    "ErrorBody",
    "Event",
    "Heartbeat",
    "Hello",
    "HelloData",
    "HelloReply",
    "MemberInfo",
    "Ping",
    "PolicyInfo",
    "Pong",
    "PoolClosed",
    "PoolEnter",
    "PoolEnterData",
    "PoolEntered",
    "PoolExpired",
    "PoolLeave",
    "PoolLeaveData",
    "PoolWithdrawn",
    "Reply",
    "Request",
    "Resume",
    "ServerPing",
    "SessionCreated",
    "SessionJoin",
    "SessionJoinData",
    "SessionJoined",
    "SessionLeave",
    "SessionLeaveData",
    "SessionMemberJoined",
    "SessionMemberLeft",
    "SessionMessage",
    "SessionSend",
    "SessionSendData",
    "decode_envelope",
    "encode",
]

RequestId = Annotated[str, Meta(max_length=64)]
Name = Annotated[str, Meta(min_length=1, max_length=128)]
AttributeKey = Annotated[str, Meta(pattern=ATTRIBUTE_NAME)]
AttributeValue = str | int | float | bool
Attributes = dict[AttributeKey, AttributeValue]
Public = dict[str, Any]


class _Data(Struct, gc=False, forbid_unknown_fields=True, omit_defaults=True):
    """Base of every request payload: unknown fields are a ``protocol.bad_request``."""


# -- inbound payloads -----------------------------------------------------------------------


class Resume(_Data):
    """``hello.resume``: reserved for reconnect-and-resume (not served yet)."""

    token: str
    last_seq: int = 0


class HelloData(_Data):
    """``hello.data``: protocol version, Project, credential and attributes."""

    v: int
    project: Name | None = None
    credential: str | None = None
    attributes: Attributes = {}
    resume: Resume | None = None


class PoolEnterData(_Data, rename={"group_size": "groupSize"}):
    """``pool.enter.data``: a policy, an ad-hoc pool, or neither (the default policy)."""

    policy: Name | None = None
    pool: Name | None = None
    create: bool = False
    mode: PoolMode | None = None
    group_size: Annotated[int, Meta(ge=1)] | None = None
    filter: dict[AttributeKey, FilterValue] | None = None
    ttl_ms: Annotated[int, Meta(ge=1)] | None = None
    public: Public | None = None


class PoolLeaveData(_Data):
    """``pool.leave.data``."""

    pool: Name


class SessionJoinData(_Data):
    """``session.join.data``: an ad-hoc room by name."""

    session: Name
    create: bool = False
    public: Public | None = None


class SessionLeaveData(_Data):
    """``session.leave.data``."""

    session_id: str


class SessionSendData(_Data):
    """``session.send.data``: ``data`` is relayed verbatim, never re-encoded."""

    session_id: str
    data: Raw
    to: list[str] | None = None


# -- inbound envelopes ----------------------------------------------------------------------


class _Request(Struct, gc=False, tag_field="type", forbid_unknown_fields=True, kw_only=True):
    id: RequestId | None = None


class Hello(_Request, tag="hello"):
    """The first frame of every connection."""

    data: HelloData


class Ping(_Request, tag="ping"):
    """Client liveness probe; answered with ``pong``."""


class Pong(_Request, tag="pong"):
    """The client's answer to a server ``ping`` event."""


class Bye(_Request, tag="bye"):
    """Clean goodbye: the server closes with 4000."""


class PoolEnter(_Request, tag="pool.enter"):
    """Enter a pool (see ``PoolEnterData``)."""

    data: PoolEnterData


class PoolLeave(_Request, tag="pool.leave"):
    """Withdraw this client's entry from a pool."""

    data: PoolLeaveData


class SessionJoin(_Request, tag="session.join"):
    """Join (or create) an ad-hoc session room."""

    data: SessionJoinData


class SessionLeave(_Request, tag="session.leave"):
    """Leave a session."""

    data: SessionLeaveData


class SessionSend(_Request, tag="session.send"):
    """Relay ``data`` to the other members of a session (or to ``to``)."""

    data: SessionSendData


Request = (
    Hello | Ping | Pong | Bye | PoolEnter | PoolLeave | SessionJoin | SessionLeave | SessionSend
)
REQUEST_DECODER: msgspec.json.Decoder[Request] = msgspec.json.Decoder(Request)
REQUEST_TYPES: frozenset[str] = frozenset(
    str(t.__struct_config__.tag)
    for t in (Hello, Ping, Pong, Bye, PoolEnter, PoolLeave, SessionJoin, SessionLeave, SessionSend)
)


class _Envelope(Struct, gc=False):
    id: Any = None
    type: Any = None


_ENVELOPE_DECODER = msgspec.json.Decoder(_Envelope)


def decode_envelope(frame: bytes | str) -> tuple[str | None, str | None]:
    """Best-effort ``(id, type)`` of a frame that failed to decode, to address the error reply."""
    try:
        envelope = _ENVELOPE_DECODER.decode(frame)
    except (msgspec.DecodeError, RecursionError):
        return None, None
    request_id = envelope.id if isinstance(envelope.id, str) and len(envelope.id) <= 64 else None
    kind = envelope.type if isinstance(envelope.type, str) else None
    return request_id, kind


# -- outbound -------------------------------------------------------------------------------


class ErrorBody(Struct, gc=False, omit_defaults=True):
    """``reply.error``: stable dotted ``code``, human ``message``, optional ``details``."""

    code: str
    message: str
    details: dict[str, Any] | None = None


class Reply(Struct, gc=False, tag="reply", tag_field="type", omit_defaults=True):
    """The answer to one request; ``id`` echoes the request's."""

    id: str | None
    ok: bool
    data: Any = None
    error: ErrorBody | None = None


class Heartbeat(Struct, gc=False):
    """How often the server pings, and after how much silence it closes (3002)."""

    interval_ms: int
    timeout_ms: int


class PolicyInfo(Struct, gc=False, rename={"group_size": "groupSize"}):
    """A declared policy as ``hello`` lists it."""

    name: str
    mode: str
    group_size: int
    default: bool


class HelloReply(Struct, gc=False):
    """``hello`` reply data: who you are, your Project's rules and the server's limits."""

    client_id: str
    resume_token: str
    project: str
    heartbeat: Heartbeat
    limits: Limits
    policies: list[PolicyInfo]
    lockdown: bool


class PoolEntered(Struct, gc=False, rename={"group_size": "groupSize"}):
    """``pool.enter`` reply data; ``expires_at`` is epoch milliseconds."""

    pool: str
    entry_id: str
    mode: str
    group_size: int
    expires_at: int


class SessionJoined(Struct, gc=False):
    """``session.join`` reply data; ``created`` tells whether this join opened the room."""

    session_id: str
    created: bool


class Event(Struct, gc=False, tag_field="type", omit_defaults=True):
    """Base of server pushes. Subclasses set ``tag`` and a ``data`` field."""


class MemberInfo(Struct, gc=False, omit_defaults=True):
    """A session member as the others see it."""

    client_id: str
    public: Public | None = None


class SessionCreatedData(Struct, gc=False, omit_defaults=True):
    session_id: str
    members: list[MemberInfo]
    you: str
    pool: str | None = None


class SessionCreated(Event, tag="session.created"):
    """You are a member of a new session (a match, or a room you joined)."""

    data: SessionCreatedData


class SessionMessageData(Struct, gc=False, rename={"sender": "from"}):
    session_id: str
    sender: str
    data: Raw


class SessionMessage(Event, tag="session.message"):
    """A message relayed from another member."""

    data: SessionMessageData


class MemberData(Struct, gc=False, omit_defaults=True):
    session_id: str
    client_id: str
    public: Public | None = None
    reason: str | None = None


class SessionMemberJoined(Event, tag="session.member_joined"):
    """Someone joined a room you are in."""

    data: MemberData


class SessionMemberLeft(Event, tag="session.member_left"):
    """A member left (``reason``: ``left``, ``disconnected``)."""

    data: MemberData


class EntryData(Struct, gc=False, omit_defaults=True):
    pool: str
    entry_id: str
    reason: str | None = None


class PoolWithdrawn(Event, tag="pool.withdrawn"):
    """An entry was withdrawn because the client was matched in another pool."""

    data: EntryData


class PoolExpired(Event, tag="pool.expired"):
    """An entry's ``ttl_ms`` ran out before a match."""

    data: EntryData


class PoolClosed(Event, tag="pool.closed"):
    """An entry's policy pool was closed because the policy changed or was removed."""

    data: EntryData


class ServerPing(Event, tag="ping"):
    """Heartbeat; answer with ``{"type": "pong"}`` (any frame counts as liveness)."""


_ENCODER = msgspec.json.Encoder()
encode = _ENCODER.encode
