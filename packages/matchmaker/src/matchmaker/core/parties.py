"""Parties: friends who queue together. Synchronous, no I/O.

A client creates a party (``party.create``) and reads its ``code`` out to its
friends, who join with it (``party.join``). The party's leader (its creator, then
the oldest member left) enters a pool for all of them: the party is *one* entry
with a seat per member (:attr:`~matchmaker.core.state.PoolEntry.seats`), so a
mode matches it whole or not at all and every member lands in the same session.
A party that changes while its entry waits (a member joins, leaves, or is gone
past its resume grace) no longer is what entered: the entry is withdrawn for
everyone (``pool.withdrawn``, reason ``party_changed``); a member that is away
pauses it until everyone is back.

Bounds: ``max_parties_per_client`` parties per client, ``max_parties_per_project``
live parties per Project, ``max_party_members`` members per party (a party is
also never larger than the pool it enters: :func:`party_capacity`). A code is
:data:`CODE_LENGTH` symbols of Crockford's base32 (40 bits), and each client may
try at most :data:`JOIN_BURST` codes at once and :data:`JOIN_RATE_PER_S` a second
after that (``rate.limited``): ``docs/protocol.md`` works out what guessing costs.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from matchmaker.config import Limits
from matchmaker.core.admission.ratelimit import TokenBucket
from matchmaker.core.commands import (
    CreateParty,
    JoinParty,
    LeaveParty,
    PartyCommand,
    PartyMemberView,
    PartyView,
)
from matchmaker.core.events import Delivery, ModeAnswer, ModeEvent, Note
from matchmaker.core.pools import PoolSpec
from matchmaker.core.state import ClientState, PoolEntry
from matchmaker.errors import MatchmakerError

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "JOIN_BURST",
    "JOIN_RATE_PER_S",
    "Parties",
    "Party",
    "PartyChanged",
    "PartyCreated",
    "PartyEntered",
    "PartyHost",
    "PartyInfo",
    "PartyLeft",
    "PartyMember",
    "PartyMemberJoined",
    "PartyMemberLeft",
    "normalise_code",
    "party_capacity",
]

CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford's base32: no I, L, O or U, so a code read out loud is not misheard."""
CODE_LENGTH = 8
"""Symbols in a party code: 32**8 (about 1.1e12) codes."""
JOIN_RATE_PER_S = 1.0
"""``party.join`` requests one client may make per second, after :data:`JOIN_BURST`."""
JOIN_BURST = 5
"""``party.join`` requests one client may make at once."""

# What a reader may type for a symbol Crockford's alphabet leaves out.
_READ_AS = str.maketrans({"O": "0", "I": "1", "L": "1"})


def normalise_code(code: str) -> str:
    """A code as typed (any case, with spaces or dashes, O for 0, I or L for 1) as minted."""
    return code.upper().replace("-", "").replace(" ", "").translate(_READ_AS)


def party_capacity(spec: PoolSpec) -> int:
    """The most members a party entering a pool of ``spec`` may have: one group, or
    where the pool has teams its largest team (a party plays on one team)."""
    return spec.largest_team


@dataclass(slots=True, eq=False)
class Party:
    """A party: its members (in the order they joined), its leader, and the entry it
    waits with, if any."""

    party_id: str
    code: str
    project_id: str
    leader: str
    members: dict[str, ClientState] = field(default_factory=dict)
    entry: PoolEntry | None = None
    # A cluster member's copy of a party another member holds, made when its leader
    # entered a pool owned here: it carries the entry; joins, leaves and their events
    # are the holder's.
    mirror: bool = False

    def away(self) -> bool:
        """Whether a member is away (dropped, within its resume grace)."""
        return any(member.away for member in self.members.values())


# -- answers and events (their fields are the wire's) ----------------------------------------


@dataclass(frozen=True, slots=True)
class PartyMember:
    """A party member as the others see it (``player_id``: its token's ``sub``)."""

    client_id: str
    player_id: str | None = None


@dataclass(frozen=True, slots=True)
class PartyInfo(ModeAnswer):
    """The answer to ``party.create`` and ``party.join``: the party as it is now."""

    party_id: str
    code: str
    leader: str
    members: list[PartyMember]


@dataclass(frozen=True, slots=True)
class PartyCreated(PartyInfo):
    """The answer to ``party.create``: the creator leads."""


@dataclass(frozen=True, slots=True)
class PartyLeft(ModeAnswer):
    """The answer to ``party.leave``."""

    party_id: str


@dataclass(frozen=True, slots=True)
class PartyMemberJoined(ModeEvent):
    """Someone joined a party the recipient is in."""

    KIND: ClassVar[str] = "party.member_joined"
    party_id: str
    client_id: str
    player_id: str | None = None


@dataclass(frozen=True, slots=True)
class PartyMemberLeft(ModeEvent):
    """A member left the recipient's party (``reason``: ``left`` or ``disconnected``);
    ``leader`` is who leads it now."""

    KIND: ClassVar[str] = "party.member_left"
    party_id: str
    client_id: str
    reason: str
    leader: str


@dataclass(frozen=True, slots=True)
class PartyEntered(ModeEvent):
    """The recipient's party leader entered a pool for the party: one entry for all."""

    KIND: ClassVar[str] = "party.entered"
    party_id: str
    pool: str
    entry_id: str


@dataclass(frozen=True, slots=True)
class PartyChanged(Note):
    """For the cluster's router, never a client (no recipients): a party held here
    changed, so an entry it waits with at another member is to be withdrawn there."""

    party_id: str


class PartyHost(Protocol):
    """What the parties use of the engine."""

    limits: Limits
    clients: dict[str, ClientState]

    def new_id(self, prefix: str) -> str:
        """A process-unique id starting with ``prefix``."""
        ...

    def withdraw(self, entry: PoolEntry, reason: str, out: list[Delivery]) -> None:
        """Take ``entry`` out of its pool; tell all its holders ``pool.withdrawn``."""
        ...

    def pause(self, entry: PoolEntry, out: list[Delivery]) -> None:
        """Take ``entry`` out of its bucket, kept (with its TTL running)."""
        ...

    def unpause(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        """Put a paused ``entry`` back in its place (it may complete a group at once)."""
        ...


class Parties:
    """The parties of one process: create, join, leave, and what a member's comings and
    goings do to the party's waiting entry."""

    def __init__(self, host: PartyHost) -> None:
        self.host = host
        self.by_code: dict[tuple[str, str], Party] = {}  # (project id, code)
        self.per_project: dict[str, int] = {}
        self.joins: dict[str, TokenBucket] = {}  # client id -> its party.join bucket
        self.mirrors: dict[str, Party] = {}  # by party id: parties held by other members
        self.notes = False  # a cluster router follows the parties' changes (PartyChanged)
        # Whether this member may mint a code (a cluster routes party.join by its code).
        self.placed: Callable[[str, str], bool] = lambda project_id, code: True

    def command(
        self, client: ClientState, command: PartyCommand, now_ms: int
    ) -> tuple[ModeAnswer, list[Delivery]]:
        """``party.create``, ``party.join`` or ``party.leave``."""
        out: list[Delivery] = []
        match command:
            case CreateParty():
                return self._create(client), out
            case JoinParty():
                return self._join(client, command.code, now_ms, out), out
            case LeaveParty():
                party = self.of(client, command.party_id)
                self._remove(party, client, "left", out)
                return PartyLeft(party.party_id), out

    def of(self, client: ClientState, party_id: str) -> Party:
        """The party ``party_id`` of ``client``: ``party.not_found`` if it is not in it."""
        party = client.parties.get(party_id)
        if party is None:
            raise MatchmakerError(
                f"you are in no party {party_id!r}",
                code="party.not_found",
                details={"party_id": party_id},
            )
        return party

    def _create(self, client: ClientState) -> PartyCreated:
        limits = self.host.limits
        self._check_client_limit(client)
        project_id = client.project_id
        if self.per_project.get(project_id, 0) >= limits.max_parties_per_project:
            raise MatchmakerError(
                f"at most {limits.max_parties_per_project} parties per Project",
                code="party.limit",
                details={"limit": limits.max_parties_per_project, "per": "project"},
            )
        code = _mint_code()
        # Taken: 1 in 1e8 at the cap; not placed here: (n-1)/n of codes among n members.
        while (project_id, code) in self.by_code or not self.placed(project_id, code):
            code = _mint_code()
        party = Party(self.host.new_id("p"), code, project_id, client.client_id)
        self.by_code[project_id, code] = party
        self.per_project[project_id] = self.per_project.get(project_id, 0) + 1
        party.members[client.client_id] = client
        client.parties[party.party_id] = party
        return PartyCreated(party.party_id, code, party.leader, _members(party))

    def _join(self, client: ClientState, code: str, now_ms: int, out: list[Delivery]) -> PartyInfo:
        bucket = self.joins.get(client.client_id)
        if bucket is None:
            bucket = self.joins[client.client_id] = TokenBucket(JOIN_RATE_PER_S, JOIN_BURST, now_ms)
        wait_ms = bucket.take(now_ms)
        if wait_ms:
            raise MatchmakerError(
                "too many party.join requests",
                code="rate.limited",
                details={"retry_after_ms": max(1, int(wait_ms + 0.999))},
            )
        party = self.by_code.get((client.project_id, normalise_code(code)))
        if party is None:
            raise MatchmakerError("no party has this code", code="party.not_found")
        if client.client_id in party.members:
            return PartyInfo(party.party_id, party.code, party.leader, _members(party))
        self._check_client_limit(client)
        limit = self.host.limits.max_party_members
        if len(party.members) >= limit:
            raise MatchmakerError(
                f"party {party.party_id!r} is full",
                code="party.full",
                details={"party_id": party.party_id, "limit": limit},
            )
        self._changed(party, out)
        joined = PartyMemberJoined(party.party_id, client.client_id, client.player_id)
        out.append((list(party.members), joined))
        party.members[client.client_id] = client
        client.parties[party.party_id] = party
        return PartyInfo(party.party_id, party.code, party.leader, _members(party))

    def reopen(self, party: Party) -> None:
        """A party another process handed over as it stopped for a restart (its members
        clients the engine took back, its entry closed there): its code joins it here."""
        self.by_code[party.project_id, party.code] = party
        self.per_project[party.project_id] = self.per_project.get(party.project_id, 0) + 1
        for client in party.members.values():
            client.parties[party.party_id] = party

    def _check_client_limit(self, client: ClientState) -> None:
        limit = self.host.limits.max_parties_per_client
        if sum(1 for party in client.parties.values() if not party.mirror) >= limit:
            raise MatchmakerError(
                f"at most {limit} parties per client",
                code="party.limit",
                details={"limit": limit, "per": "client"},
            )

    def _changed(self, party: Party, out: list[Delivery]) -> None:
        """The party is about to change: an entry it waits with is withdrawn for all (here,
        or, noted for the cluster's router, at the member that owns its pool)."""
        if party.entry is not None:
            self.host.withdraw(party.entry, "party_changed", out)
        if self.notes and not party.mirror:
            out.append(((), PartyChanged(party.party_id)))

    def _remove(self, party: Party, client: ClientState, reason: str, out: list[Delivery]) -> None:
        self._changed(party, out)
        del party.members[client.client_id]
        del client.parties[party.party_id]
        if party.mirror:  # its holder tells the members
            if not party.members:
                del self.mirrors[party.party_id]
            return
        if not party.members:
            del self.by_code[party.project_id, party.code]
            left = self.per_project[party.project_id] - 1
            if left:
                self.per_project[party.project_id] = left
            else:
                del self.per_project[party.project_id]
            return
        if party.leader == client.client_id:
            party.leader = next(iter(party.members))
        event = PartyMemberLeft(party.party_id, client.client_id, reason, party.leader)
        out.append((list(party.members), event))

    # -- a cluster's parties --------------------------------------------------------------

    def view(self, client: ClientState, party_id: str) -> PartyView | None:
        """Party ``party_id`` of ``client`` as another member needs it to enter a pool for
        it, if the party is held here (``None``: it is not, or not here)."""
        party = client.parties.get(party_id)
        if party is None or party.mirror:
            return None
        members = [
            PartyMemberView(cid, c.credential, dict(c.attributes), c.player_id)
            for cid, c in party.members.items()
        ]
        return PartyView(party.party_id, party.code, party.leader, members)

    def mirror(self, project_id: str, view: PartyView) -> None:
        """Keep a copy of a party another member holds, whose leader enters a pool owned
        here (its members are known here: the cluster made proxies of them). A copy
        kept from an earlier entry is replaced, unless that entry still waits."""
        old = self.mirrors.get(view.party_id)
        if old is not None:
            if old.entry is not None:
                return  # entering() refuses the second entry: pool.already_entered
            self._drop_mirror(old)
        party = Party(view.party_id, view.code, project_id, view.leader, mirror=True)
        for member in view.members:
            client = self.host.clients.get(member.client_id)
            if client is not None:
                party.members[client.client_id] = client
                client.parties[party.party_id] = party
        self.mirrors[party.party_id] = party

    def withdraw_mirror(self, party_id: str, out: list[Delivery]) -> None:
        """The party's holder says it changed: its entry here is withdrawn for all."""
        party = self.mirrors.get(party_id)
        if party is not None:
            self._changed(party, out)
            self._drop_mirror(party)

    def _drop_mirror(self, party: Party) -> None:
        for client in party.members.values():
            client.parties.pop(party.party_id, None)
        del self.mirrors[party.party_id]

    # -- the engine's calls -----------------------------------------------------------------

    def entering(self, client: ClientState, party_id: str, spec: PoolSpec) -> Party:
        """Check a ``pool.enter`` for party ``party_id`` of a pool of ``spec``: only its
        leader enters it, once, whole, in an ``auto`` pool (with or without a range rule:
        the rule then holds member by member)."""
        party = self.of(client, party_id)
        if party.leader != client.client_id:
            raise MatchmakerError(
                "only the party's leader enters it",
                code="party.not_leader",
                details={"party_id": party_id, "leader": party.leader},
            )
        capacity = party_capacity(spec)
        if len(party.members) > capacity:
            raise MatchmakerError(
                f"the party has {len(party.members)} members; this pool takes at most {capacity}",
                code="party.too_large",
                details={"party_id": party_id, "limit": capacity},
            )
        if spec.mode != "auto":
            raise MatchmakerError(
                "parties enter auto pools only",
                code="party.unsupported",
                details={"party_id": party_id, "mode": spec.mode},
            )
        if party.entry is not None:
            raise MatchmakerError(
                f"the party already waits in pool {party.entry.pool.name!r}",
                code="pool.already_entered",
                details={"pool": party.entry.pool.name, "entry_id": party.entry.entry_id},
            )
        return party

    def entered(self, party: Party, entry: PoolEntry, out: list[Delivery]) -> None:
        """The leader's ``entry`` waits for the whole party now: the others are told."""
        party.entry = entry
        entry.party = party
        entry.seats = len(party.members)
        others = [cid for cid in party.members if cid != party.leader]
        if others:
            out.append((others, PartyEntered(party.party_id, entry.pool.name, entry.entry_id)))

    def gone(self, client: ClientState, out: list[Delivery]) -> None:
        """``client`` is gone (disconnected, or past its grace): it leaves its parties."""
        self.joins.pop(client.client_id, None)
        for party in list(client.parties.values()):
            self._remove(party, client, "disconnected", out)

    def away(self, client: ClientState, out: list[Delivery]) -> None:
        """A member dropped: its parties' waiting entries pause until everyone is back."""
        for party in client.parties.values():
            entry = party.entry
            if entry is not None and not entry.paused:
                self.host.pause(entry, out)

    def back(self, client: ClientState, now_ms: int, out: list[Delivery]) -> None:
        """A member is back: a party whose members all are takes its place again."""
        for party in list(client.parties.values()):
            entry = party.entry
            if entry is None or not entry.paused or entry.held or party.away():
                continue
            self.host.unpause(entry, now_ms, out)


def _members(party: Party) -> list[PartyMember]:
    return [PartyMember(cid, c.player_id) for cid, c in party.members.items()]


def _mint_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
