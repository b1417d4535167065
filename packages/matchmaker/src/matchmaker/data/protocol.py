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
from matchmaker.model import FilterValue, Name, PoolMode

__all__ = [
    "MODE_REQUESTS",
    "REQUEST_DECODER",
    "Bye",
    "ClaimMake",
    "ClaimMakeData",
    "DelegateAttach",
    "DelegateAttachData",
    "DelegateForm",
    "DelegateFormData",
    "ErrorBody",
    "Event",
    "Heartbeat",
    "Hello",
    "HelloData",
    "HelloReply",
    "IceServer",
    "MemberInfo",
    "ModeNotice",
    "ModeRequest",
    "PickAdd",
    "PickData",
    "PickRemove",
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
    "PoolList",
    "PoolListData",
    "PoolWatch",
    "PoolWatchData",
    "PoolWithdrawn",
    "ProposalCancel",
    "ProposalCancelData",
    "ProposalCreate",
    "ProposalCreateData",
    "ProposalRespond",
    "ProposalRespondData",
    "Reply",
    "Request",
    "Resume",
    "RtcOffer",
    "RtcOfferData",
    "RtcSignal",
    "RtcSignalData",
    "RtcSignalled",
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
    "SignalData",
    "decode_envelope",
    "encode",
]

_ID_CHARS = 64
RequestId = Annotated[str, Meta(max_length=_ID_CHARS)]
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
    listed: bool = True


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


class RtcSignalData(_Data):
    """``rtc.signal.data``: ``signal`` (offer, answer, ICE candidate...) relayed verbatim."""

    session_id: str
    to: Annotated[str, Meta(max_length=128)]
    signal: Raw


class RtcOfferData(_Data):
    """``rtc.offer.data``: a WebRTC SDP offer with a data channel."""

    sdp: str


# Pool-mode payloads: their fields are the core commands' fields (data/translate.py).
ClientIds = Annotated[list[Annotated[str, Meta(max_length=128)]], Meta(max_length=64)]


class PoolListData(_Data):
    """``pool.list.data``: a page of a claim pool's listed entries."""

    pool: Name
    cursor: Annotated[str, Meta(max_length=32)] | None = None
    limit: Annotated[int, Meta(ge=1, le=200)] = 50


class PoolWatchData(_Data):
    """``pool.watch.data``: follow (``watch: false``: stop following) a claim pool."""

    pool: Name
    watch: bool = True


class ClaimMakeData(_Data):
    """``claim.make.data``: ``groupSize - 1`` listed client ids."""

    pool: Name
    targets: ClientIds


class PickData(_Data):
    """``pick.add.data`` / ``pick.remove.data``."""

    pool: Name
    target: Annotated[str, Meta(max_length=128)]


class ProposalCreateData(_Data):
    """``proposal.create.data``: the other ``groupSize - 1`` members."""

    pool: Name
    members: ClientIds
    ttl_ms: Annotated[int, Meta(ge=1)] | None = None


class ProposalRespondData(_Data):
    """``proposal.respond.data``."""

    proposal_id: Annotated[str, Meta(max_length=128)]
    accept: bool


class ProposalCancelData(_Data):
    """``proposal.cancel.data``."""

    proposal_id: Annotated[str, Meta(max_length=128)]


class DelegateAttachData(_Data):
    """``delegate.attach.data``."""

    pool: Name


class DelegateFormData(_Data):
    """``delegate.form.data``: groups of entry ids (at most 256 groups per request)."""

    pool: Name
    groups: Annotated[list[ClientIds], Meta(max_length=256)]


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


class RtcSignal(_Request, tag="rtc.signal"):
    """Relay a WebRTC signal to one other member of a session."""

    data: RtcSignalData


class RtcOffer(_Request, tag="rtc.offer"):
    """Open a server-side WebRTC data channel that speaks this same protocol."""

    data: RtcOfferData


class PoolList(_Request, tag="pool.list"):
    """Page through a claim pool's listed entries."""

    data: PoolListData


class PoolWatch(_Request, tag="pool.watch"):
    """Follow a claim pool's listings as ``pool.listed`` / ``pool.unlisted`` events."""

    data: PoolWatchData


class ClaimMake(_Request, tag="claim.make"):
    """Claim listed clients into a session, atomically."""

    data: ClaimMakeData


class PickAdd(_Request, tag="pick.add"):
    """Pick a client in a mutual pool (private)."""

    data: PickData


class PickRemove(_Request, tag="pick.remove"):
    """Take a pick back."""

    data: PickData


class ProposalCreate(_Request, tag="proposal.create"):
    """Propose a group in a propose pool."""

    data: ProposalCreateData


class ProposalRespond(_Request, tag="proposal.respond"):
    """Accept or decline a proposal."""

    data: ProposalRespondData


class ProposalCancel(_Request, tag="proposal.cancel"):
    """Withdraw one's own open proposal."""

    data: ProposalCancelData


class DelegateAttach(_Request, tag="delegate.attach"):
    """Become a delegate of a delegated pool."""

    data: DelegateAttachData


class DelegateForm(_Request, tag="delegate.form"):
    """Form groups of a delegated pool."""

    data: DelegateFormData


ModeRequest = (
    PoolList
    | PoolWatch
    | ClaimMake
    | PickAdd
    | PickRemove
    | ProposalCreate
    | ProposalRespond
    | ProposalCancel
    | DelegateAttach
    | DelegateForm
)
MODE_REQUESTS = (
    PoolList,
    PoolWatch,
    ClaimMake,
    PickAdd,
    PickRemove,
    ProposalCreate,
    ProposalRespond,
    ProposalCancel,
    DelegateAttach,
    DelegateForm,
)
Request = (
    Hello
    | Ping
    | Pong
    | Bye
    | PoolEnter
    | PoolLeave
    | SessionJoin
    | SessionLeave
    | SessionSend
    | RtcSignal
    | RtcOffer
    | ModeRequest
)
REQUEST_DECODER: msgspec.json.Decoder[Request] = msgspec.json.Decoder(Request)
REQUEST_TYPES: frozenset[str] = frozenset(
    str(t.__struct_config__.tag)
    for t in (
        Hello,
        Ping,
        Pong,
        Bye,
        PoolEnter,
        PoolLeave,
        SessionJoin,
        SessionLeave,
        SessionSend,
        RtcSignal,
        RtcOffer,
        *MODE_REQUESTS,
    )
)


class _Envelope(Struct, gc=False):
    id: Any = None
    type: Any = None


_ENVELOPE_DECODER = msgspec.json.Decoder(_Envelope)


def decode_envelope(frame: bytes | str) -> tuple[str | None, str | None]:
    """Best-effort ``(id, type)`` of a frame that failed to decode, to address the error reply.

    An ``id`` over the 64-character limit is echoed cut to its first 64 characters
    (``docs/protocol.md``): the reply still says which request it answers."""
    try:
        envelope = _ENVELOPE_DECODER.decode(frame)
    except (msgspec.DecodeError, RecursionError):
        return None, None
    request_id = envelope.id[:_ID_CHARS] if isinstance(envelope.id, str) else None
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


class IceServer(Struct, gc=False):
    """A STUN/TURN server for peer-to-peer WebRTC, as ``RTCPeerConnection`` takes it."""

    urls: list[str]


class HelloReply(Struct, gc=False):
    """``hello`` reply data: who you are, your Project's rules and the server's limits."""

    client_id: str
    resume_token: str
    project: str
    heartbeat: Heartbeat
    limits: Limits
    policies: list[PolicyInfo]
    lockdown: bool
    resumed: bool = False
    ice_servers: list[IceServer] = []


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


class SignalData(Struct, gc=False, rename={"sender": "from"}):
    session_id: str
    sender: str
    signal: Raw


class RtcSignalled(Event, tag="rtc.signal"):
    """A WebRTC signal from another member of a session."""

    data: SignalData


class ModeNotice(Struct, gc=False):
    """An event of the claim, mutual, propose or delegated mode: ``type`` is the core
    event's ``KIND`` and ``data`` the core event itself, whose fields are the wire's."""

    type: str
    data: Any


_ENCODER = msgspec.json.Encoder()
encode = _ENCODER.encode
