"""What each inbound request carries in its ``data`` field, as msgspec Structs.

Unknown fields are refused (``protocol.bad_request``); the envelopes that carry
these payloads are in :mod:`matchmaker.data.protocol.requests`.
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta, Raw, Struct

from matchmaker.model import (
    MAX_TEAMS,
    Balance,
    FillTimeout,
    FilterTerm,
    Latencies,
    Name,
    PoolMode,
    Regions,
    Team,
)
from matchmaker.rules.filters import ATTRIBUTE_NAME

__all__ = [
    "AttributeKey",
    "AttributeValue",
    "Attributes",
    "ClaimMakeData",
    "ClientIds",
    "DelegateAttachData",
    "DelegateFormData",
    "HelloData",
    "PartyCreateData",
    "PartyJoinData",
    "PartyLeaveData",
    "PickData",
    "PoolEnterData",
    "PoolLeaveData",
    "PoolListData",
    "PoolWatchData",
    "ProposalCancelData",
    "ProposalCreateData",
    "ProposalRespondData",
    "Public",
    "Resume",
    "RtcOfferData",
    "RtcSignalData",
    "SessionBackfillData",
    "SessionJoinData",
    "SessionLeaveData",
    "SessionSendData",
]

AttributeKey = Annotated[str, Meta(pattern=ATTRIBUTE_NAME)]
AttributeValue = str | int | float | bool
Attributes = dict[AttributeKey, AttributeValue]
Public = dict[str, Any]


class _Data(Struct, gc=False, forbid_unknown_fields=True, omit_defaults=True):
    """Base of every request payload: unknown fields are a ``protocol.bad_request``."""


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


class PoolEnterData(
    _Data,
    rename={
        "group_size": "groupSize",
        "min_group_size": "minGroupSize",
        "fill_timeout_ms": "fillTimeoutMs",
    },
):
    """``pool.enter.data``: a policy, an ad-hoc pool, or neither (the default policy)."""

    policy: Name | None = None
    pool: Name | None = None
    create: bool = False
    mode: PoolMode | None = None
    group_size: Annotated[int, Meta(ge=1)] | None = None
    filter: dict[AttributeKey, FilterTerm] | None = None
    min_group_size: Annotated[int, Meta(ge=1)] | None = None
    fill_timeout_ms: FillTimeout | None = None
    ttl_ms: Annotated[int, Meta(ge=1)] | None = None
    public: Public | None = None
    listed: bool = True
    party_id: Annotated[str, Meta(max_length=64)] | None = None
    teams: Annotated[list[Team], Meta(max_length=MAX_TEAMS)] | None = None
    balance: Balance | None = None
    regions: Regions | None = None
    latencies: Latencies | None = None


class PartyCreateData(_Data):
    """``party.create.data`` (optional): nothing yet; a place for later options."""


class PartyJoinData(_Data):
    """``party.join.data``: the code the party's leader read out (any case; dashes and
    spaces are ignored)."""

    code: Annotated[str, Meta(min_length=1, max_length=32)]


class PartyLeaveData(_Data):
    """``party.leave.data``."""

    party_id: Annotated[str, Meta(max_length=64)]


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


class SessionBackfillData(_Data):
    """``session.backfill.data``: fill ``seats`` more places (``0`` cancels a request)."""

    session_id: str
    seats: Annotated[int, Meta(ge=0)]


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
