"""Inbound frames: the request envelopes, the :data:`Request` tagged union and its decoder.

Every inbound frame is one JSON object decoded once by :data:`REQUEST_DECODER`
into the :data:`Request` tagged union (tag field ``type``, unknown fields
refused); each envelope's ``data`` is a Struct of
:mod:`matchmaker.data.protocol.payloads`.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from matchmaker.data.protocol.payloads import (
    ClaimMakeData,
    DelegateAttachData,
    DelegateFormData,
    HelloData,
    PickData,
    PoolEnterData,
    PoolLeaveData,
    PoolListData,
    PoolWatchData,
    ProposalCancelData,
    ProposalCreateData,
    ProposalRespondData,
    RtcOfferData,
    RtcSignalData,
    SessionBackfillData,
    SessionJoinData,
    SessionLeaveData,
    SessionSendData,
)

__all__ = [
    "MAX_SEQ",
    "MODE_REQUESTS",
    "REQUEST_DECODER",
    "REQUEST_TYPES",
    "Bye",
    "ClaimMake",
    "DelegateAttach",
    "DelegateForm",
    "Hello",
    "ModeRequest",
    "PickAdd",
    "PickRemove",
    "Ping",
    "Pong",
    "PoolEnter",
    "PoolLeave",
    "PoolList",
    "PoolWatch",
    "ProposalCancel",
    "ProposalCreate",
    "ProposalRespond",
    "Request",
    "RequestId",
    "RtcOffer",
    "RtcSignal",
    "SessionBackfill",
    "SessionJoin",
    "SessionLeave",
    "SessionSend",
    "decode_envelope",
]

_ID_CHARS = 64
RequestId = Annotated[str, Meta(max_length=_ID_CHARS)]
MAX_SEQ = 2**53 - 1
"""The largest client send ``seq``: what a JavaScript number holds exactly."""
SendSeq = Annotated[int, Meta(ge=1, le=MAX_SEQ)]


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


class SessionBackfill(_Request, tag="session.backfill"):
    """Ask the pool that formed a session for members to fill its open seats."""

    data: SessionBackfillData


class SessionSend(_Request, tag="session.send"):
    """Relay ``data`` to the other members of a session (or to ``to``). ``seq`` numbers
    the client's sends (1, 2, ... across resumes) so that a send again after a drop is
    taken once (docs/protocol.md, "Exactly once")."""

    data: SessionSendData
    seq: SendSeq | None = None


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
    | SessionBackfill
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
        SessionBackfill,
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
