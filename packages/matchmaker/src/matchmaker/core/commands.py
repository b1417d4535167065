"""What a client asks of the core, as plain values decoded from the wire by the shell.

The data plane's wire Structs (:mod:`matchmaker.data.protocol`) validate frames
and :mod:`matchmaker.data.translate` turns each request into one of these; the
core never sees JSON. Sizes the core rules on (``public``, relayed ``data``)
are measured by the shell, which holds the encoded bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matchmaker.model import Balance, FilterTerm, FilterValue, Regions, Team

__all__ = [
    "MODE_COMMANDS",
    "PARTY_COMMANDS",
    "AnswerPing",
    "AttachDelegate",
    "Backfill",
    "CancelProposal",
    "CheckAlive",
    "ClientCommand",
    "CreateParty",
    "CreateProposal",
    "EnterPool",
    "FormGroups",
    "Greet",
    "JoinParty",
    "JoinSession",
    "LeaveParty",
    "LeavePool",
    "LeaveSession",
    "ListPool",
    "MakeClaim",
    "ModeCommand",
    "OfferChannel",
    "PartyCommand",
    "Pick",
    "RespondProposal",
    "ResumeFrom",
    "SayGoodbye",
    "Send",
    "Signal",
    "WatchPool",
]


@dataclass(slots=True)
class ResumeFrom:
    """``hello.resume``: take back the client of an earlier connection (see core.resume)."""

    token: str
    last_seq: int = 0


@dataclass(slots=True)
class Greet:
    """The first request of every connection: version, Project, credential, attributes."""

    version: int
    project: str | None = None
    credential: str | None = None
    attributes: dict[str, FilterValue] | None = None
    resume: ResumeFrom | None = None


@dataclass(slots=True)
class CheckAlive:
    """Client liveness probe; answered with a pong."""


@dataclass(slots=True)
class AnswerPing:
    """The client's answer to a server ping."""


@dataclass(slots=True)
class SayGoodbye:
    """Clean goodbye: the connection closes with 4000."""


@dataclass(frozen=True, slots=True)
class PartyMemberView:
    """A party member as another cluster member needs it to speak for it (a proxy)."""

    client_id: str
    credential: str | None
    attributes: dict[str, FilterValue]
    player_id: str | None = None


@dataclass(frozen=True, slots=True)
class PartyView:
    """A party, as the cluster member that holds it sends it with its leader's
    ``pool.enter`` to the member that owns the pool (which keeps a mirror of it there)."""

    party_id: str
    code: str
    leader: str
    members: list[PartyMemberView]


@dataclass(slots=True)
class EnterPool:
    """``pool.enter``: a policy, an ad-hoc pool, or neither (the default policy).

    ``public_size`` is the encoded size of ``public`` in bytes.
    """

    policy: str | None = None
    pool: str | None = None
    create: bool = False
    mode: str | None = None
    group_size: int | None = None
    filter: dict[str, FilterTerm] | None = None
    min_group_size: int | None = None
    fill_timeout_ms: int | None = None
    ttl_ms: int | None = None
    public: dict[str, Any] | None = None
    public_size: int = 0
    listed: bool = True
    party_id: str | None = None  # the leader enters its whole party as one entry
    party: PartyView | None = None  # that party, when another cluster member holds it
    teams: list[Team] | None = None
    balance: Balance | None = None
    regions: Regions | None = None
    latencies: dict[str, int] | None = None  # the client's measured ms to each region


@dataclass(slots=True)
class LeavePool:
    """``pool.leave``: withdraw this client's entry from a pool.

    ``entry_id`` (never a client's: a cluster member moving the entry to its pool's
    new owner sets it) names the entry meant: a newer one entered there since stays."""

    pool: str
    entry_id: str | None = None


@dataclass(slots=True)
class JoinSession:
    """``session.join``: an ad-hoc room by name, opened with ``create``.

    ``public_size`` is the encoded size of ``public`` in bytes.
    """

    session: str
    create: bool = False
    public: dict[str, Any] | None = None
    public_size: int = 0


@dataclass(slots=True)
class LeaveSession:
    """``session.leave``."""

    session_id: str


@dataclass(slots=True)
class Backfill:
    """``session.backfill``: fill ``seats`` more places of a session formed by a pool
    (``0`` cancels an earlier request)."""

    session_id: str
    seats: int


@dataclass(slots=True)
class Send:
    """``session.send``: relay ``data`` (encoded JSON, passed on untouched) to members."""

    session_id: str
    data: bytes
    to: list[str] | None = None
    seq: int | None = None  # the client's send number: taken once (ClientState.ack)


@dataclass(slots=True)
class Signal:
    """``rtc.signal``: relay a WebRTC ``signal`` (encoded JSON, passed on untouched) to one
    other member of a session, so members can open peer-to-peer channels."""

    session_id: str
    to: str
    signal: bytes


@dataclass(slots=True)
class OfferChannel:
    """``rtc.offer``: open a server-side WebRTC data channel from this SDP offer."""

    sdp: str


# -- pool-mode commands (claim, mutual, propose, delegated) ---------------------------------


@dataclass(frozen=True, slots=True)
class ListPool:
    """``pool.list``: a page of the entries listed in a claim pool, oldest first."""

    pool: str
    cursor: str | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class WatchPool:
    """``pool.watch``: start (or, with ``watch: false``, stop) listing events for a pool."""

    pool: str
    watch: bool = True


@dataclass(frozen=True, slots=True)
class MakeClaim:
    """``claim.make``: take ``targets`` (client ids) from the listing into one session."""

    pool: str
    targets: list[str]


@dataclass(frozen=True, slots=True)
class Pick:
    """``pick.add`` (``add``) or ``pick.remove``: a private pick of ``target`` in a mutual pool."""

    pool: str
    target: str
    add: bool = True


@dataclass(frozen=True, slots=True)
class CreateProposal:
    """``proposal.create``: propose a group of ``members`` (client ids, not the proposer)."""

    pool: str
    members: list[str]
    ttl_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RespondProposal:
    """``proposal.respond``: accept or decline a proposal addressed to this client."""

    proposal_id: str
    accept: bool


@dataclass(frozen=True, slots=True)
class CancelProposal:
    """``proposal.cancel``: the proposer withdraws an open proposal."""

    proposal_id: str


@dataclass(frozen=True, slots=True)
class AttachDelegate:
    """``delegate.attach``: become (one of) the delegate(s) that form a pool's groups."""

    pool: str


@dataclass(frozen=True, slots=True)
class FormGroups:
    """``delegate.form``: groups of entry ids, each validated and formed atomically."""

    pool: str
    groups: list[list[str]]


ModeCommand = (
    ListPool
    | WatchPool
    | MakeClaim
    | Pick
    | CreateProposal
    | RespondProposal
    | CancelProposal
    | AttachDelegate
    | FormGroups
)
MODE_COMMANDS = (
    ListPool,
    WatchPool,
    MakeClaim,
    Pick,
    CreateProposal,
    RespondProposal,
    CancelProposal,
    AttachDelegate,
    FormGroups,
)
"""The :data:`ModeCommand` classes, for ``isinstance``."""

# -- parties (core.parties) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateParty:
    """``party.create``: a new party, led by its creator, joined by its code."""


@dataclass(frozen=True, slots=True)
class JoinParty:
    """``party.join``: join the party of ``code`` (as the leader read it out)."""

    code: str


@dataclass(frozen=True, slots=True)
class LeaveParty:
    """``party.leave``."""

    party_id: str


PartyCommand = CreateParty | JoinParty | LeaveParty
PARTY_COMMANDS = (CreateParty, JoinParty, LeaveParty)
"""The :data:`PartyCommand` classes, for ``isinstance``."""

ClientCommand = (
    Greet
    | CheckAlive
    | AnswerPing
    | SayGoodbye
    | EnterPool
    | LeavePool
    | JoinSession
    | LeaveSession
    | Backfill
    | Send
    | Signal
    | OfferChannel
    | ModeCommand
    | PartyCommand
)
