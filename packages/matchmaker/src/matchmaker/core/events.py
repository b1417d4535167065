"""What the core answers and announces, as plain values the shell encodes for the wire.

A request's :data:`Answer` goes back to the client that asked; an
:data:`Event` is pushed to the client ids of its :data:`Delivery`. The wire
module maps each class to its frame (``docs/protocol.md``); nothing here knows
JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from matchmaker.config import Limits
from matchmaker.model import Project

__all__ = [
    "Alive",
    "Answer",
    "Backfilled",
    "DelegateEntry",
    "Delivery",
    "EnteredPool",
    "EntryClosed",
    "EntryExpired",
    "EntryPoolClosed",
    "EntryWithdrawn",
    "Event",
    "JoinedSession",
    "Listing",
    "MemberJoined",
    "MemberLeft",
    "MemberStatus",
    "MessageRelayed",
    "ModeAnswer",
    "ModeEvent",
    "Note",
    "PoolDelta",
    "PoolLeft",
    "PoolListed",
    "PoolNoDelegate",
    "PoolSnapshot",
    "PoolUnlisted",
    "ProposalClosed",
    "ProposalReceived",
    "ProposalUpdated",
    "PublicMember",
    "Relayed",
    "ResumePartial",
    "SessionFormed",
    "SessionLeft",
    "SignalRelayed",
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
    resumed: bool = False  # the client id of an earlier connection, taken back with resume
    ice_servers: tuple[str, ...] = ()  # STUN/TURN URLs from the server's config
    player_id: str | None = None  # the sub of the client's jwt credential
    ack: int | None = None  # a resumed client's last send seq taken (None: not resumed)


@dataclass(slots=True)
class EnteredPool:
    """The answer to ``pool.enter``; ``expires_at`` is epoch milliseconds. ``latencies``
    are those the entry waits with (a ``regions`` pool's), for the arrivals recording:
    not on the wire."""

    pool: str
    entry_id: str
    mode: str
    group_size: int
    expires_at: int
    latencies: dict[str, int] | None = None


@dataclass(slots=True)
class PoolLeft:
    """The answer to ``pool.leave``: the withdrawn entry."""

    pool: str
    entry_id: str


@dataclass(slots=True)
class JoinedSession:
    """The answer to ``session.join``; ``created`` tells whether this join opened the room."""

    session_id: str
    created: bool


@dataclass(slots=True)
class SessionLeft:
    """The answer to ``session.leave``."""

    session_id: str


@dataclass(slots=True)
class Backfilled:
    """The answer to ``session.backfill``: who was seated now, how many seats stay open."""

    session_id: str
    filled: list[str]
    pending: int


@dataclass(slots=True)
class Relayed:
    """The answer to a ``session.send`` that asked for one (carried an ``id``);
    ``duplicate``: its ``seq`` was taken before, so it was not relayed again."""

    duplicate: bool = False


@dataclass(slots=True)
class Alive:
    """The answer to a client's ``ping`` (a ``pong`` frame)."""


@dataclass(frozen=True, slots=True)
class ModeAnswer:
    """Base of the answers of the claim, mutual, propose and delegated modes (defined
    with their mode); their fields are the wire's, so the shell sends them as they are."""


Answer = (
    Welcome
    | EnteredPool
    | PoolLeft
    | JoinedSession
    | SessionLeft
    | Backfilled
    | Relayed
    | Alive
    | ModeAnswer
)


# -- events ---------------------------------------------------------------------------------


@dataclass(slots=True)
class PublicMember:
    """A session member as the others see it (``player_id``: its token's ``sub``)."""

    client_id: str
    public: Public | None = None
    player_id: str | None = None


@dataclass(slots=True)
class SessionFormed:
    """The recipient (``you``) is a member of a new session: a match, or a room it joined."""

    session_id: str
    members: list[PublicMember]
    you: str
    pool: str | None = None
    teams: dict[str, list[str]] | None = None  # a teams pool's: team name -> client ids
    region: str | None = None  # a regions pool's: where the session plays


@dataclass(slots=True)
class MessageRelayed:
    """A message from ``sender``; ``data`` is the sender's payload, passed on untouched."""

    session_id: str
    sender: str
    data: object


@dataclass(slots=True)
class MemberJoined:
    """Someone joined a session the recipient is in."""

    session_id: str
    client_id: str
    public: Public | None = None
    player_id: str | None = None
    team: str | None = None  # the team it fills (a backfilled session with teams)


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
class EntryWithdrawn(EntryClosed):
    """An entry was withdrawn because its client was matched in another pool."""


@dataclass(slots=True)
class EntryExpired(EntryClosed):
    """An entry's TTL ran out before a match."""


@dataclass(slots=True)
class EntryPoolClosed(EntryClosed):
    """An entry's policy pool was closed: its policy was changed or removed."""


@dataclass(slots=True)
class SignalRelayed:
    """A WebRTC signal from ``sender``, a member of the recipient's session."""

    session_id: str
    sender: str
    signal: object


# -- pool-mode events -------------------------------------------------------------------------
#
# Their fields are already the wire's names, so the shell sends each as
# ``{"type": KIND, "data": <fields>}`` without a wire class per event.


@dataclass(frozen=True, slots=True)
class Note:
    """Base of what the core tells a cluster member's router and no client: delivered to
    no recipients, never encoded (the backfill's, :mod:`matchmaker.core.backfill`)."""


@dataclass(frozen=True, slots=True)
class ModeEvent:
    """Base of the events of the claim, mutual, propose and delegated modes."""

    KIND: ClassVar[str] = ""


@dataclass(frozen=True, slots=True)
class Listing:
    """A listed entry of a claim pool as ``pool.list`` and ``pool.listed`` show it."""

    client_id: str
    public: Public | None
    waited_ms: int


@dataclass(frozen=True, slots=True)
class PoolListed(ModeEvent):
    """A claimable entry appeared in a watched claim pool."""

    KIND: ClassVar[str] = "pool.listed"
    pool: str
    entry: Listing


@dataclass(frozen=True, slots=True)
class PoolUnlisted(ModeEvent):
    """A listed entry left a watched claim pool (``reason``: matched, left, expired...)."""

    KIND: ClassVar[str] = "pool.unlisted"
    pool: str
    client_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class ProposalReceived(ModeEvent):
    """The recipient is named in a proposal; answer with ``proposal.respond``."""

    KIND: ClassVar[str] = "proposal.received"
    proposal_id: str
    pool: str
    proposer: str
    members: list[PublicMember]
    expires_at: int


@dataclass(frozen=True, slots=True)
class ProposalUpdated(ModeEvent):
    """A named member accepted; ``pending`` lists those who have not answered yet."""

    KIND: ClassVar[str] = "proposal.updated"
    proposal_id: str
    client_id: str
    accepted: bool
    pending: list[str]


@dataclass(frozen=True, slots=True)
class ProposalClosed(ModeEvent):
    """A proposal ended without a session (``reason``: declined, cancelled, timeout, left,
    matched); everyone in it stays in the pool. ``client_id`` is who caused it, if anyone."""

    KIND: ClassVar[str] = "proposal.closed"
    proposal_id: str
    reason: str
    client_id: str | None = None


@dataclass(frozen=True, slots=True)
class DelegateEntry:
    """A waiting entry as a delegate sees it (with the client's attributes)."""

    entry_id: str
    client_id: str
    attributes: dict[str, Any]
    public: Public | None
    entered_at: int


@dataclass(frozen=True, slots=True)
class PoolSnapshot(ModeEvent):
    """Every waiting entry of a delegated pool at ``version``; deltas follow."""

    KIND: ClassVar[str] = "pool.snapshot"
    pool: str
    version: int
    entries: list[DelegateEntry]


@dataclass(frozen=True, slots=True)
class PoolDelta(ModeEvent):
    """One change of a delegated pool: its version goes up by one with each delta."""

    KIND: ClassVar[str] = "pool.delta"
    pool: str
    version: int
    added: list[DelegateEntry]
    removed: list[str]


@dataclass(frozen=True, slots=True)
class MemberStatus(ModeEvent):
    """A session member's connection: ``away`` (dropped, may resume) or ``back``."""

    KIND: ClassVar[str] = "session.member_status"
    session_id: str
    client_id: str
    status: Literal["away", "back"]


@dataclass(frozen=True, slots=True)
class ResumePartial(ModeEvent):
    """Sent first on a resume whose buffer overflowed: events ``from_seq``..``to_seq``
    are lost; everything after them is replayed."""

    KIND: ClassVar[str] = "resume.partial"
    from_seq: int
    to_seq: int


@dataclass(frozen=True, slots=True)
class PoolNoDelegate(ModeEvent):
    """No delegate has been attached to the recipient's delegated pool for the grace period;
    the entry keeps waiting."""

    KIND: ClassVar[str] = "pool.no_delegate"
    pool: str
    entry_id: str


Event = (
    SessionFormed
    | MessageRelayed
    | MemberJoined
    | MemberLeft
    | EntryWithdrawn
    | EntryExpired
    | ModeEvent
    | SignalRelayed
    | EntryPoolClosed
    | Note
)

Delivery = tuple[Sequence[str], Event]
"""An event and the client ids it goes to."""
