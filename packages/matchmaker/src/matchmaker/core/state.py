"""The plain records the matching core keeps: clients, live pools, entries, sessions.

They point at each other (an entry knows its pool and client, a pool its
entries), so they live in one module.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from matchmaker.core.pools import Bucket, PoolKey, PoolSpec
from matchmaker.model import FilterValue

if TYPE_CHECKING:
    from matchmaker.core.modes import ModeStrategy
    from matchmaker.core.parties import Party

__all__ = ["ClientState", "Lineup", "Member", "Origin", "Pool", "PoolEntry", "Session"]


@dataclass(slots=True, eq=False)
class ClientState:
    """One connected client, past ``hello``."""

    client_id: str
    project_id: str
    credential: str | None
    attributes: dict[str, FilterValue]
    entries: dict[str, PoolEntry] = field(default_factory=dict)  # by pool name
    sessions: dict[str, Session] = field(default_factory=dict)  # by session id
    delegating: dict[str, Pool] = field(default_factory=dict)  # by pool name
    away: bool = False  # disconnected, within its resume grace: entries paused
    player_id: str | None = None  # a jwt credential's sub: the same player on any connection
    # The highest session.send seq taken from this client (0: none): resume state, kept
    # while the client is away, so a send again after a drop is taken once.
    ack: int = 0
    parties: dict[str, Party] = field(default_factory=dict)  # by party id (core.parties)


@dataclass(slots=True, eq=False)
class PoolEntry:
    """A client waiting in a pool."""

    entry_id: str
    seq: int
    client: ClientState
    pool: Pool
    bucket: Bucket
    public: dict[str, Any] | None
    expires_at: int
    live: bool = True
    entered_at: int = 0
    listed: bool = True  # claim pools: a listed entry can be claimed, a seeker only claims
    paused: bool = False  # out of its pool's buckets while its client is away, or held
    held: bool = False  # offered to a session hosted by another cluster member (paused too)
    party: Party | None = None  # entered by a party's leader: one entry, a seat per member
    seats: int = 1  # the places of a group it takes: its party's members when it entered
    latencies: dict[str, int] | None = None  # the client's measured ms to each region

    def holders(self) -> tuple[str, ...]:
        """Who hears of this entry ending: its client, and the rest of its party."""
        party = self.party
        return (self.client.client_id,) if party is None else tuple(party.members)


@dataclass(slots=True, eq=False)
class Member:
    """A client in a session, with the public data it showed when it got there."""

    client: ClientState
    public: dict[str, Any] | None
    # Seated by another cluster member's offer, its session.created on its way through that
    # member: the session's events for it, kept until its home says it was told (then None).
    untold: list[Any] | None = None


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a session formed: its pool's key and spec, and its members' bucket (what a
    backfill fills its seats from)."""

    key: PoolKey
    spec: PoolSpec
    bucket: Bucket


@dataclass(slots=True, eq=False)
class Session:
    """A group of clients that relay messages to each other; deleted when empty."""

    session_id: str
    project_id: str
    pool: str | None = None
    room: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    origin: Origin | None = None  # formed by a pool (not a room)
    teams: dict[str, list[str]] | None = None  # team name -> its members' ids (a teams pool)
    region: str | None = None  # where it plays (a regions pool)


@dataclass(frozen=True, slots=True)
class Lineup:
    """How a mode formed a group: its teams (name -> client ids) and its region."""

    teams: dict[str, list[str]] | None = None
    region: str | None = None


@dataclass(slots=True)
class Pool:
    """A live pool: one FIFO of waiting entries per ``@self`` bucket."""

    key: PoolKey
    project_id: str
    name: str
    spec: PoolSpec
    buckets: dict[Bucket, dict[str, PoolEntry]] = field(default_factory=dict)
    size: int = 0
    paused: int = 0  # entries out of the buckets while their clients are away
    newest: int = 0  # the highest seq added: an entry below it is a resumed one
    mode: ModeStrategy = field(init=False)  # set by the engine right after construction

    def add(self, entry: PoolEntry) -> None:
        fifo = self.buckets.setdefault(entry.bucket, {})
        fifo[entry.entry_id] = entry
        self.size += 1
        if entry.seq > self.newest:
            self.newest = entry.seq
        elif len(fifo) > 1:
            # A resumed entry takes back its place: keep the bucket in arrival order. (The
            # seq decides, not the bucket's last two: a bucket matched out of order, as a
            # skill pool's is, keeps deleted slots that walking it backwards would visit.)
            self.buckets[entry.bucket] = dict(sorted(fifo.items(), key=lambda kv: kv[1].seq))

    def remove(self, entry: PoolEntry) -> None:
        fifo = self.buckets[entry.bucket]
        del fifo[entry.entry_id]
        if not fifo:
            del self.buckets[entry.bucket]
        self.size -= 1

    def oldest(self, bucket: Bucket, count: int) -> list[PoolEntry]:
        """The ``count`` oldest entries of a bucket (fewer if it holds fewer)."""
        fifo = self.buckets.get(bucket, {})
        out: list[PoolEntry] = []
        it: Iterator[PoolEntry] = iter(fifo.values())
        for entry in it:
            out.append(entry)
            if len(out) == count:
                break
        return out
