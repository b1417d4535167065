"""The matching core: clients, pools, sessions, membership. Synchronous, no I/O.

Every operation takes plain values (and the time, where it matters: ``now_ms``,
epoch milliseconds, the one clock of the core; nothing here remembers it) and
returns its result plus a list of :data:`Delivery` — events for the I/O shell
to send. Nothing here awaits, so one operation is atomic with respect to every
other: a client can never be matched twice or half-matched.

:class:`Matchmaker` holds the clients' operations (connect, away, back, gone)
and the pools' (enter, the modes' commands, leave, policy changes). It composes, by
explicit calls and no class chain, one :class:`~matchmaker.core.tables.Tables` (the
records, the shared steps, expiry) and the collaborators that each hold that same
state and own one job: :class:`~matchmaker.core.sessions.Sessions` (forming, rooms,
relay, leaving), :class:`~matchmaker.core.backfill.Backfills` and
:class:`~matchmaker.core.parties.Parties`. What shells, the cluster and the modes call
of those is bound here once as a plain attribute (``core.relay`` is
``core.membership.relay``): the same calls per message as a method of its own.
"""

from __future__ import annotations

import heapq
from typing import Any

from matchmaker.config import Limits
from matchmaker.core.backfill import Backfills
from matchmaker.core.commands import (
    AttachDelegate,
    CancelProposal,
    EnterPool,
    FormGroups,
    ModeCommand,
    PartyCommand,
    RespondProposal,
)
from matchmaker.core.events import (
    Delivery,
    EnteredPool,
    EntryPoolClosed,
    EntryWithdrawn,
    ModeAnswer,
)
from matchmaker.core.modes import MODES
from matchmaker.core.modes.strategy import wrong_mode
from matchmaker.core.parties import Parties, Party
from matchmaker.core.pools import Bucket, PoolKey, PoolSpec, resolve_pool
from matchmaker.core.projects import DELEGATE_SCOPE, holds_scope
from matchmaker.core.sessions import Sessions, session_limit
from matchmaker.core.state import ClientState, Pool, PoolEntry
from matchmaker.core.tables import Tables
from matchmaker.errors import MatchmakerError
from matchmaker.model import FilterValue, Project

__all__ = ["Matchmaker", "entry_limit"]


class Matchmaker:
    """All pools and sessions of one process, and the clients in them."""

    def __init__(self, limits: Limits, *, node: str | None = None) -> None:
        self.tables = tables = Tables(limits, node=node)
        self.membership = membership = Sessions(tables)
        self.backfills = membership.backfills = Backfills(membership)
        self.parties = Parties(tables)
        # The state's tables, the same objects as the collaborators hold (never reassigned).
        self.limits = tables.limits
        self.clients = tables.clients
        self.pools = tables.pools
        self.sessions = tables.sessions
        self.rooms = tables.rooms
        self.players = tables.players
        self.resumption = tables.resumption
        # The tables' steps a mode, a shell or the cluster calls on the core.
        self.new_id = tables.new_id
        self.entry_of = tables.entry_of
        self.schedule = tables.schedule
        self.next_due = tables.next_due
        self.expire = tables.expire
        # What the sessions do, asked of the core by the cluster, the modes, the shells.
        self.form = membership.form
        self.admit = membership.admit
        self.told = membership.told
        self.awaits_told = membership.awaits_told
        self.take_seat = membership.take_seat
        self.refill = membership.refill
        self.backfill = membership.backfill
        self.join_session = membership.join_session
        self.reopen = membership.reopen
        self.leave_session = membership.leave_session
        self.relay = membership.relay
        self.signal = membership.signal

    # -- clients --------------------------------------------------------------------------

    def connect(
        self,
        project_id: str,
        credential: str | None,
        attributes: dict[str, FilterValue],
        player_id: str | None = None,
    ) -> ClientState:
        """Register a client that completed ``hello`` (``player_id``: its token's ``sub``)."""
        client = ClientState(
            self.new_id("c"), project_id, credential, dict(attributes), player_id=player_id
        )
        self._register(client)
        return client

    def readmit(
        self,
        client_id: str,
        project_id: str,
        attributes: dict[str, FilterValue],
        player_id: str | None,
    ) -> ClientState:
        """A client another process handed over as it stopped for a restart
        (:mod:`matchmaker.data.handover`): away, as it was parked there, with no
        credential until its resuming ``hello`` presents one. Its sessions follow
        (:meth:`reopen`)."""
        client = ClientState(client_id, project_id, None, dict(attributes), player_id=player_id)
        client.away = True
        self._register(client)
        return client

    def _register(self, client: ClientState) -> None:
        self.clients[client.client_id] = client
        if client.player_id is not None:
            key = (client.project_id, client.player_id)
            self.players.setdefault(key, set()).add(client.client_id)

    def close_entries(self, client_id: str, reason: str, now_ms: int) -> list[Delivery]:
        """Withdraw the client's entries, each with ``pool.closed {reason}``, and detach
        it from delegated pools: what a restart does not hand over (a pool is rebuilt by
        the clients entering it again), told to the client before the process stops."""
        client = self.clients[client_id]
        out: list[Delivery] = []
        for entry in list(client.entries.values()):
            holders = entry.holders()  # a party's entry: every member hears it closed
            self.tables.drop_entry(entry, reason, out)
            closed = EntryPoolClosed(entry.pool.name, entry.entry_id, reason)
            out.append((holders, closed))
        for pool in list(client.delegating.values()):
            pool.mode.detach(client, now_ms, out)
            self.tables.free_if_idle(pool)
        client.delegating.clear()
        return out

    def disconnect(
        self, client_id: str, now_ms: int, reason: str = "disconnected"
    ) -> list[Delivery]:
        """Forget a client at ``now_ms``: withdraw its entries and leave its sessions."""
        client = self.clients.pop(client_id, None)
        if client is None:
            return []
        player = (client.project_id, client.player_id or "")
        if client_id in self.players.get(player, ()):
            self.players[player].discard(client_id)
            if not self.players[player]:
                del self.players[player]
        out: list[Delivery] = []
        self.parties.gone(client, out)
        for entry in list(client.entries.values()):
            self.tables.drop_entry(entry, reason, out)
        for pool in list(client.delegating.values()):
            pool.mode.detach(client, now_ms, out)
            self.tables.free_if_idle(pool)
        for session in list(client.sessions.values()):
            self.membership.leave(client, session, reason, now_ms, out)
        return out

    def end_grace(self, now_ms: int) -> tuple[list[str], list[Delivery]]:
        """Remove every away client whose resume grace ran out by ``now_ms``: entries
        withdrawn, peers told ``member_left {reason: disconnected}``.
        Returns the removed clients' ids and the deliveries."""
        gone = self.resumption.expired(now_ms)
        out: list[Delivery] = []
        for client_id in gone:
            out.extend(self.disconnect(client_id, now_ms))
        return gone, out

    def suspend(self, client_id: str) -> list[Delivery]:
        """The client's connection dropped but it may resume: its entries leave their
        buckets (and every mode's state: picks, proposals, listings, delegate views) but
        are kept, with their TTLs running; its session peers see it ``away``."""
        client = self.clients[client_id]
        client.away = True
        out: list[Delivery] = []
        for entry in client.entries.values():
            if not entry.paused:  # (a held one is out of its bucket already)
                self.tables.pause(entry, out)
        self.parties.away(client, out)
        self.membership.status(client, "away", out)
        return out

    def resume(self, client_id: str, now_ms: int) -> list[Delivery]:
        """The client is back: its entries return to their pools in their old places (and
        may complete groups at once); its session peers see it ``back``."""
        client = self.clients[client_id]
        client.away = False
        out: list[Delivery] = []
        self.membership.status(client, "back", out)
        for entry in list(client.entries.values()):
            if not entry.live or entry.held:
                continue  # withdrawn as an earlier entry matched, or held for a seat elsewhere
            if entry.party is not None and entry.party.away():
                continue  # its party waits for another member to come back
            self.tables.unpause(entry, now_ms, out)
        self.parties.back(client, now_ms, out)
        return out

    # -- pools ----------------------------------------------------------------------------

    def enter(
        self, client_id: str, project: Project, request: EnterPool, now_ms: int
    ) -> tuple[EnteredPool, list[Delivery]]:
        """``pool.enter``: resolve the pool, admit the client, match what is complete."""
        client = self.clients[client_id]
        name, spec, is_policy = resolve_pool(project, request)
        if name in client.entries:
            raise MatchmakerError(
                f"already waiting in pool {name!r}",
                code="pool.already_entered",
                details={"pool": name, "entry_id": client.entries[name].entry_id},
            )
        _not_waiting_with_a_party(client, name)
        if len(client.entries) >= self.limits.max_pools_per_client:
            raise entry_limit(self.limits)
        if self.tables.session_count(client) >= self.limits.max_sessions_per_client:
            raise session_limit(self.limits)
        pool = self._pool_for(project.id, name, spec, is_policy, request)
        bucket = pool.spec.bucket_for(client.attributes)
        if pool.spec.regions is not None and not request.latencies:
            raise MatchmakerError(
                f"pool {name!r} chooses a region by latency: send latencies {{region: ms}}",
                code="pool.latencies_required",
                details={"pool": name},
            )
        party = None
        if request.party_id is not None:
            held = client.parties.get(request.party_id)
            if request.party is not None and (held is None or held.mirror):
                self.parties.mirror(project.id, request.party)  # held by another member
            party = self.parties.entering(client, request.party_id, pool.spec)
            self._admit_party(party, pool, bucket)
        ttl = min(request.ttl_ms or self.limits.entry_ttl_ms, self.limits.entry_ttl_ms)
        tables = self.tables
        seq = next(tables.counter)
        entry = PoolEntry(
            f"e{tables.node}-{seq}",
            seq,
            client,
            pool,
            bucket,
            request.public,
            now_ms + ttl,
            entered_at=now_ms,
            listed=request.listed,
            latencies=request.latencies if pool.spec.regions is not None else None,
        )
        self.pools[pool.key] = pool
        pool.add(entry)
        client.entries[name] = entry
        heapq.heappush(tables.expiry, (entry.expires_at, seq, entry))
        entered = EnteredPool(
            name,
            entry.entry_id,
            pool.spec.mode,
            pool.spec.group_size,
            entry.expires_at,
            entry.latencies,
        )
        out: list[Delivery] = []
        if party is not None:
            self.parties.entered(party, entry, out)
            if party.away():  # waits, out of its bucket, until everyone is back
                self.tables.pause(entry, out)
                return entered, out
        pool.mode.entered(entry, now_ms, out)
        return entered, out

    def _admit_party(self, party: Party, pool: Pool, bucket: Bucket) -> None:
        """Every member of a party entering ``pool`` must pass its filter into the
        leader's bucket, and have room for one more session."""
        for member in party.members.values():
            if pool.name in member.entries:  # waiting there alone: one entry per pool
                raise MatchmakerError(
                    f"party member {member.client_id!r} already waits in pool {pool.name!r}",
                    code="pool.already_entered",
                    details={"pool": pool.name, "client_id": member.client_id},
                )
            if pool.spec.bucket_for(member.attributes) != bucket:
                raise MatchmakerError(
                    "party members must agree on the pool's @self attributes",
                    code="pool.filter_mismatch",
                    details={"party_id": party.party_id, "client_id": member.client_id},
                )
            if self.tables.session_count(member) >= self.limits.max_sessions_per_client:
                raise session_limit(self.limits)

    def party(
        self, client_id: str, command: PartyCommand, now_ms: int
    ) -> tuple[ModeAnswer, list[Delivery]]:
        """``party.create``, ``party.join`` or ``party.leave`` (:mod:`.parties`)."""
        return self.parties.command(self.clients[client_id], command, now_ms)

    def _new_pool(self, key: PoolKey, project_id: str, name: str, spec: PoolSpec) -> Pool:
        pool = Pool(key, project_id, name, spec)
        pool.mode = MODES[spec.mode](pool, self)
        return pool

    def command(
        self, client_id: str, project: Project, command: ModeCommand, now_ms: int
    ) -> tuple[ModeAnswer, list[Delivery]]:
        """A request of the claim, mutual, propose or delegated mode: find the pool (and
        the client's entry in it) and let the pool's mode handle it."""
        client = self.clients[client_id]
        entry: PoolEntry | None = None
        match command:
            case RespondProposal() | CancelProposal():
                pid = command.proposal_id
                entry = next(
                    (e for e in client.entries.values() if e.pool.mode.owns_proposal(pid)), None
                )
                if entry is None:
                    raise MatchmakerError(
                        f"no open proposal {pid!r} involves you",
                        code="proposal.not_found",
                        details={"proposal_id": pid},
                    )
                pool = entry.pool
            case AttachDelegate():
                pool = self._delegated_pool(client, project, command.pool)
            case FormGroups():
                attached = client.delegating.get(command.pool)
                if attached is None:
                    raise MatchmakerError(
                        f"attach to pool {command.pool!r} first",
                        code="delegate.not_attached",
                        details={"pool": command.pool},
                    )
                pool = attached
            case _:
                entry = client.entries.get(command.pool)
                if entry is None:
                    raise MatchmakerError(
                        f"you have no entry in pool {command.pool!r}",
                        code="pool.not_found",
                        details={"pool": command.pool},
                    )
                pool = entry.pool
        out: list[Delivery] = []
        return pool.mode.command(client, entry, command, now_ms, out), out

    def _delegated_pool(self, client: ClientState, project: Project, name: str) -> Pool:
        """The pool a ``delegate.attach`` means, live from now on; only a credential with
        the ``delegate`` scope may attach."""
        if not holds_scope(project, client.credential, DELEGATE_SCOPE):
            raise MatchmakerError(
                "attaching a delegate needs a credential with the 'delegate' scope",
                code="project.forbidden",
                details={"scope": DELEGATE_SCOPE},
            )
        request = EnterPool(pool=name)
        resolved, spec, is_policy = resolve_pool(project, request)
        pool = self._pool_for(project.id, resolved, spec, is_policy, request)
        if pool.spec.mode != "delegated":
            raise wrong_mode(pool)
        self.pools[pool.key] = pool
        return pool

    def _pool_for(
        self,
        project_id: str,
        name: str,
        spec: PoolSpec | None,
        is_policy: bool,
        request: EnterPool,
    ) -> Pool:
        if is_policy:
            assert spec is not None
            key: PoolKey = ("policy", project_id, name, spec)
            return self.pools.get(key) or self._new_pool(key, project_id, name, spec)
        key = ("adhoc", project_id, name)
        live = self.pools.get(key)
        if live is None:
            if spec is None:
                raise MatchmakerError(
                    f"no live pool named {name!r}; send create: true with mode and groupSize",
                    code="pool.not_found",
                    details={"pool": name},
                )
            if spec.group_size > self.limits.max_session_members:
                raise MatchmakerError(
                    f"groupSize is at most {self.limits.max_session_members}",
                    code="protocol.bad_request",
                    details={"limit": self.limits.max_session_members},
                )
            return self._new_pool(key, project_id, name, spec)
        wanted = spec or _joining(live.spec, request)
        if wanted != live.spec:
            raise MatchmakerError(
                f"pool {name!r} is live with other parameters",
                code="pool.conflict",
                details={
                    "pool": name,
                    "mode": live.spec.mode,
                    "groupSize": live.spec.group_size,
                    "filter": dict(live.spec.filter),
                    "minGroupSize": live.spec.min_group_size,
                    "fillTimeoutMs": live.spec.fill_timeout_ms,
                    "teams": [{"name": t.name, "size": t.size} for t in live.spec.teams] or None,
                },
            )
        return live

    def leave_pool(
        self, client_id: str, name: str, entry_id: str | None = None
    ) -> tuple[str, list[Delivery]]:
        """``pool.leave``: withdraw the client's entry (``entry_id``: only if it is that
        one); returns its id."""
        client = self.clients[client_id]
        entry = client.entries.get(name)
        if entry is None or entry_id not in (None, entry.entry_id):
            raise MatchmakerError(
                f"no entry in pool {name!r}", code="pool.not_found", details={"pool": name}
            )
        out: list[Delivery] = []
        others = [cid for cid in entry.holders() if cid != client_id]
        self.tables.drop_entry(entry, "left", out)
        if others:  # a party's entry: its members hear that their leader left the pool
            out.append((others, EntryWithdrawn(name, entry.entry_id, "left")))
        return entry.entry_id, out

    def close_changed_policies(self, project_id: str, project: Project | None) -> list[Delivery]:
        """After a Project's config changed: close its policy pools that no longer match.

        A live policy pool stays open only while the Project (``None``: deleted)
        still has a policy of that name with the same mode, group sizes and
        filter. Every entry of any other pool is withdrawn with ``pool.closed``
        (reason ``policy_changed``), so its client can enter again under the
        current policy instead of waiting out its TTL in a pool nobody new joins.
        """
        policies = () if project is None else project.policies
        current = {(p.name, PoolSpec.of_policy(p)) for p in policies}
        out: list[Delivery] = []
        for key, pool in list(self.pools.items()):
            if key[0] != "policy" or pool.project_id != project_id:
                continue
            if (pool.name, pool.spec) in current:
                continue
            entries = [entry for fifo in pool.buckets.values() for entry in fifo.values()]
            if pool.paused:  # away clients' and held entries: closed too, not put back
                entries += [
                    entry
                    for client in self.clients.values()
                    for entry in client.entries.values()
                    if entry.pool is pool and entry.paused
                ]
            for entry in entries:
                holders = entry.holders()
                self.tables.drop_entry(entry, "policy_changed", out)
                closed = EntryPoolClosed(pool.name, entry.entry_id, "policy_changed")
                out.append((holders, closed))
        return out


def _not_waiting_with_a_party(client: ClientState, name: str) -> None:
    """A party member waits in its party's entry too: never a second time on its own."""
    for party in client.parties.values():
        if party.entry is not None and party.entry.pool.name == name:
            raise MatchmakerError(
                f"already waiting in pool {name!r} with party {party.party_id!r}",
                code="pool.already_entered",
                details={"pool": name, "entry_id": party.entry.entry_id},
            )


def entry_limit(limits: Limits) -> MatchmakerError:
    """The refusal of a ``pool.enter`` past ``max_pools_per_client``."""
    return MatchmakerError(
        f"at most {limits.max_pools_per_client} live pool entries per client",
        code="pool.limit",
        details={"limit": limits.max_pools_per_client},
    )


def _joining(live: PoolSpec, request: EnterPool) -> PoolSpec:
    """The spec a join by name without ``create`` asks for: what it names, else the live."""

    def pick(asked: Any, current: Any) -> Any:
        return current if asked is None else asked

    return PoolSpec.of(
        pick(request.mode, live.mode),
        pick(request.group_size, live.group_size),
        pick(request.filter, dict(live.filter)),
        pick(request.min_group_size, live.min_group_size),
        pick(request.fill_timeout_ms, live.fill_timeout_ms),
        line=(
            pick(request.teams, live.teams or None),
            pick(request.balance, live.balance),
            pick(request.regions, live.regions),
        ),
    )
