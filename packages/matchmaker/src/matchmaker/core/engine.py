"""The matching core: clients, pools, sessions, membership. Synchronous, no I/O.

Every operation takes plain values (and the time, where it matters) and
returns its result plus a list of :data:`Delivery` — events for the I/O shell
to send. Nothing here awaits, so one operation is atomic with respect to every
other: a client can never be matched twice or half-matched.
"""

from __future__ import annotations

import heapq
import itertools
import secrets
from collections.abc import Sequence
from typing import Any

from matchmaker.config import Limits
from matchmaker.core.backfill import Backfills
from matchmaker.core.commands import (
    AttachDelegate,
    Backfill,
    CancelProposal,
    EnterPool,
    FormGroups,
    ModeCommand,
    RespondProposal,
)
from matchmaker.core.events import (
    Backfilled,
    Delivery,
    MemberInfo,
    MemberJoined,
    MemberLeft,
    MemberStatus,
    MessageRelayed,
    ModeAnswer,
    PoolClosed,
    PoolEntered,
    PoolExpired,
    PoolWithdrawn,
    SessionCreated,
    SessionJoined,
    SignalRelayed,
)
from matchmaker.core.modes import MODES
from matchmaker.core.pools import PoolKey, PoolSpec, resolve_pool
from matchmaker.core.projects import DELEGATE_SCOPE, holds_scope
from matchmaker.core.resume import Resumption
from matchmaker.core.state import ClientState, Entry, Member, Origin, Pool, Session
from matchmaker.core.strategy import wrong_mode
from matchmaker.errors import MatchmakerError
from matchmaker.model import FilterValue, Project

__all__ = ["Matchmaker", "entry_limit", "member_infos"]

# Rebuild the expiry heap once this many of its items belong to entries that left otherwise.
_HEAP_COMPACT_MIN = 1024


class Matchmaker:
    """All pools and sessions of one process, and the clients in them."""

    def __init__(self, limits: Limits, *, node: str | None = None) -> None:
        self.limits = limits
        self.clients: dict[str, ClientState] = {}
        self.pools: dict[PoolKey, Pool] = {}
        self.sessions: dict[str, Session] = {}
        self.rooms: dict[tuple[str, str], Session] = {}
        # (project id, player id) -> the connected (or away) clients of that player
        self.players: dict[tuple[str, str], set[str]] = {}
        self.resumption = Resumption(
            limits.resume_buffer, limits.resume_grace_ms / 1000, issuer=node
        )
        self._node = node if node is not None else secrets.token_hex(3)
        self._counter = itertools.count(1)
        self._expiry: list[tuple[int, int, Entry]] = []
        self._stale = 0
        self._timers: list[tuple[int, int, Pool, str]] = []
        self._clock = 0  # the latest time an operation was given: disconnect has none
        self.backfills = Backfills(self)

    def schedule(self, due_ms: int, pool: Pool, key: str) -> None:
        """Run ``pool.mode.timer(key)`` from the first :meth:`expire` at or after ``due_ms``."""
        heapq.heappush(self._timers, (due_ms, next(self._counter), pool, key))

    def entry_of(self, client_id: str, pool: Pool) -> Entry | None:
        """The live entry ``client_id`` holds in ``pool``, if any."""
        client = self.clients.get(client_id)
        entry = client.entries.get(pool.name) if client is not None else None
        return entry if entry is not None and entry.pool is pool and not entry.paused else None

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{self._node}-{next(self._counter)}"

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
        self.clients[client.client_id] = client
        if player_id is not None:
            self.players.setdefault((project_id, player_id), set()).add(client.client_id)
        return client

    def session_count(self, client: ClientState) -> int:
        """The sessions ``max_sessions_per_client`` counts for ``client``: a player's
        (token ``sub``) over all its connections, each session once."""
        if client.player_id is None:
            return len(client.sessions)
        ids = self.players.get((client.project_id, client.player_id), set()) | {client.client_id}
        return len(
            {sid for cid in ids if cid in self.clients for sid in self.clients[cid].sessions}
        )

    def disconnect(self, client_id: str, reason: str = "disconnected") -> list[Delivery]:
        """Forget a client: withdraw its entries and leave its sessions."""
        client = self.clients.pop(client_id, None)
        if client is None:
            return []
        player = (client.project_id, client.player_id or "")
        if client_id in self.players.get(player, ()):
            self.players[player].discard(client_id)
            if not self.players[player]:
                del self.players[player]
        out: list[Delivery] = []
        for entry in list(client.entries.values()):
            self._drop_entry(entry, reason, out)
        for pool in list(client.delegating.values()):
            pool.mode.detach(client, self._clock, out)
            self._free_if_idle(pool)
        for session in list(client.sessions.values()):
            self._leave(client, session, reason, out)
        return out

    def end_grace(self, now: float) -> tuple[list[str], list[Delivery]]:
        """Remove every away client whose resume grace ran out by ``now`` (monotonic
        seconds): entries withdrawn, peers told ``member_left {reason: disconnected}``.
        Returns the removed clients' ids and the deliveries."""
        gone = self.resumption.expired(now)
        out: list[Delivery] = []
        for client_id in gone:
            out.extend(self.disconnect(client_id))
        return gone, out

    def suspend(self, client_id: str) -> list[Delivery]:
        """The client's connection dropped but it may resume: its entries leave their
        buckets (and every mode's state: picks, proposals, listings, delegate views) but
        are kept, with their TTLs running; its session peers see it ``away``."""
        client = self.clients[client_id]
        client.away = True
        out: list[Delivery] = []
        for entry in client.entries.values():
            if entry.paused:
                continue  # held for a seat elsewhere: already out of its bucket
            pool = entry.pool
            pool.mode.leaving(entry, "away", out)
            pool.remove(entry)
            pool.paused += 1
            entry.paused = True
        self._status(client, "away", out)
        return out

    def resume(self, client_id: str, now_ms: int) -> list[Delivery]:
        """The client is back: its entries return to their pools in their old places (and
        may complete groups at once); its session peers see it ``back``."""
        self._clock = now_ms
        client = self.clients[client_id]
        client.away = False
        out: list[Delivery] = []
        self._status(client, "back", out)
        for entry in list(client.entries.values()):
            if not entry.live or entry.held:
                continue  # withdrawn as an earlier entry matched, or held for a seat elsewhere
            pool = entry.pool  # kept live by its paused entries
            pool.paused -= 1
            entry.paused = False
            pool.add(entry)
            pool.mode.entered(entry, now_ms, out)
        return out

    def _status(self, client: ClientState, status: str, out: list[Delivery]) -> None:
        for session in client.sessions.values():
            others = [cid for cid in session.members if cid != client.client_id]
            if others:
                out.append((others, MemberStatus(session.session_id, client.client_id, status)))

    # -- pools ----------------------------------------------------------------------------

    def enter(
        self, client_id: str, project: Project, request: EnterPool, now_ms: int
    ) -> tuple[PoolEntered, list[Delivery]]:
        """``pool.enter``: resolve the pool, admit the client, match what is complete."""
        self._clock = now_ms
        client = self.clients[client_id]
        name, spec, is_policy = resolve_pool(project, request)
        if name in client.entries:
            raise MatchmakerError(
                f"already waiting in pool {name!r}",
                code="pool.already_entered",
                details={"pool": name, "entry_id": client.entries[name].entry_id},
            )
        if len(client.entries) >= self.limits.max_pools_per_client:
            raise entry_limit(self.limits)
        if self.session_count(client) >= self.limits.max_sessions_per_client:
            raise _session_limit(self.limits)
        pool = self._pool_for(project.id, name, spec, is_policy, request)
        bucket = pool.spec.bucket_for(client.attributes)
        ttl = min(request.ttl_ms or self.limits.entry_ttl_ms, self.limits.entry_ttl_ms)
        seq = next(self._counter)
        entry = Entry(
            f"e{self._node}-{seq}",
            seq,
            client,
            pool,
            bucket,
            request.public,
            now_ms + ttl,
            entered_at=now_ms,
            listed=request.listed,
        )
        self.pools[pool.key] = pool
        pool.add(entry)
        client.entries[name] = entry
        heapq.heappush(self._expiry, (entry.expires_at, seq, entry))
        entered = PoolEntered(
            name, entry.entry_id, pool.spec.mode, pool.spec.group_size, entry.expires_at
        )
        out: list[Delivery] = []
        pool.mode.entered(entry, now_ms, out)
        return entered, out

    def _new_pool(self, key: PoolKey, project_id: str, name: str, spec: PoolSpec) -> Pool:
        pool = Pool(key, project_id, name, spec)
        pool.mode = MODES[spec.mode](pool, self)
        return pool

    def command(
        self, client_id: str, project: Project, command: ModeCommand, now_ms: int
    ) -> tuple[ModeAnswer, list[Delivery]]:
        """A request of the claim, mutual, propose or delegated mode: find the pool (and
        the client's entry in it) and let the pool's mode handle it."""
        self._clock = now_ms
        client = self.clients[client_id]
        entry: Entry | None = None
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
                },
            )
        return live

    def leave_pool(self, client_id: str, name: str) -> tuple[str, list[Delivery]]:
        """``pool.leave``: withdraw the client's entry; returns its id."""
        client = self.clients[client_id]
        entry = client.entries.get(name)
        if entry is None:
            raise MatchmakerError(
                f"no entry in pool {name!r}", code="pool.not_found", details={"pool": name}
            )
        out: list[Delivery] = []
        self._drop_entry(entry, "left", out)
        return entry.entry_id, out

    def expire(self, now_ms: int) -> list[Delivery]:
        """Withdraw every entry whose TTL ran out by ``now_ms`` (``pool.expired`` to each)
        and run the mode timers that are due (proposal deadlines, delegate grace)."""
        self._clock = now_ms
        out: list[Delivery] = []
        timers = self._timers
        while timers and timers[0][0] <= now_ms:
            _, _, pool, key = heapq.heappop(timers)
            pool.mode.timer(key, now_ms, out)
        heap = self._expiry
        while heap and heap[0][0] <= now_ms:
            entry = heapq.heappop(heap)[2]
            if entry.live:
                self._drop_entry(entry, "expired", out, stale=False)
                out.append(
                    (
                        (entry.client.client_id,),
                        PoolExpired(entry.pool.name, entry.entry_id, "ttl"),
                    )
                )
            else:
                self._stale -= 1
        return out

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
                self._drop_entry(entry, "policy_changed", out)
                closed = PoolClosed(pool.name, entry.entry_id, "policy_changed")
                out.append(((entry.client.client_id,), closed))
        return out

    def _drop_entry(
        self, entry: Entry, reason: str, out: list[Delivery], *, stale: bool = True
    ) -> None:
        pool = entry.pool
        entry.live = False
        del entry.client.entries[pool.name]
        if entry.paused:  # it left the buckets and the mode's view when its client went away
            pool.paused -= 1
        else:
            pool.mode.leaving(entry, reason, out)
            pool.remove(entry)
        self._free_if_idle(pool)
        if stale:
            self._stale += 1
            if self._stale >= _HEAP_COMPACT_MIN and self._stale * 2 > len(self._expiry):
                self._expiry = [item for item in self._expiry if item[2].live]
                heapq.heapify(self._expiry)
                self._stale = 0

    def _free_if_idle(self, pool: Pool) -> None:
        """Forget a pool with no entries, waiting or paused (and nothing its mode keeps it
        live for)."""
        idle = pool.size == 0 and pool.paused == 0 and not pool.mode.holds()
        if idle and self.pools.get(pool.key) is pool:
            del self.pools[pool.key]

    def form(self, group: list[Entry], out: list[Delivery]) -> str:
        """Move ``group`` (live entries of one pool, validated by its mode) into a new
        session; returns its id. Nothing here can fail, so the group forms whole."""
        pool = group[0].pool
        assert all(e.live and e.pool is pool for e in group), "a mode formed a stale group"
        origin = Origin(pool.key, pool.spec, group[0].bucket)
        session = Session(self.new_id("s"), pool.project_id, pool=pool.name, origin=origin)
        for entry in group:
            self._matched(entry, session, out)
        self.sessions[session.session_id] = session
        self._announce(session, out)
        return session.session_id

    def _matched(self, entry: Entry, session: Session, out: list[Delivery]) -> None:
        """``entry`` leaves its pool for ``session``."""
        self._drop_entry(entry, "matched", out)
        self._joined(entry.client, entry.public, session, out)

    def _joined(
        self, client: ClientState, public: Any, session: Session, out: list[Delivery]
    ) -> None:
        """``client`` is a member of ``session`` now: its other entries are withdrawn
        (matched in one pool, it waits in none)."""
        self._withdraw_entries(client, out)
        session.members[client.client_id] = Member(client, public)
        client.sessions[session.session_id] = session

    def _withdraw_entries(self, client: ClientState, out: list[Delivery]) -> None:
        for other in list(client.entries.values()):
            self._drop_entry(other, "matched", out)
            withdrawn = PoolWithdrawn(other.pool.name, other.entry_id, "matched")
            out.append(((client.client_id,), withdrawn))

    def seat(self, entry: Entry, session: Session, out: list[Delivery]) -> None:
        """Backfill: ``entry`` joins a formed session. The members get
        ``session.member_joined``, the newcomer ``session.created`` with every member."""
        self._drop_entry(entry, "matched", out)
        self.admit(entry.client, entry.public, session, out)

    def admit(
        self, client: ClientState, public: Any, session: Session, out: list[Delivery]
    ) -> None:
        """Backfill: ``client`` joins a formed session (its entry already left its pool,
        here or at another cluster member)."""
        joined = MemberJoined(session.session_id, client.client_id, public, client.player_id)
        out.append((list(session.members), joined))
        self._joined(client, public, session, out)
        created = SessionCreated(
            session.session_id, member_infos(session), client.client_id, session.pool
        )
        out.append(((client.client_id,), created))

    def hold(self, entry: Entry, out: list[Delivery]) -> None:
        """Backfill across members: ``entry`` leaves its bucket (and its mode's view), kept
        for a session elsewhere until that member answers."""
        pool = entry.pool
        pool.mode.leaving(entry, "held", out)
        pool.remove(entry)
        pool.paused += 1
        entry.paused = entry.held = True

    def release(self, entry: Entry, now_ms: int, out: list[Delivery]) -> None:
        """A held ``entry`` was not seated: back to its place (if its client is not away)."""
        self._clock = now_ms
        entry.held = False
        if entry.client.away:
            return  # it returns with its client (resume)
        pool = entry.pool
        pool.paused -= 1
        entry.paused = False
        pool.add(entry)
        pool.mode.entered(entry, now_ms, out)

    def seated_elsewhere(self, entry: Entry, out: list[Delivery]) -> None:
        """A held ``entry`` was seated by the session's member: it leaves as matched, and
        its client's other entries here are withdrawn."""
        entry.held = False
        self._drop_entry(entry, "matched", out)
        self._withdraw_entries(entry.client, out)

    def take_seat(self, entry: Entry, now_ms: int, out: list[Delivery]) -> bool:
        return self.backfills.take(entry, now_ms, out)

    def refill(self, session_id: str, opened_ms: int, now_ms: int, out: list[Delivery]) -> None:
        self.backfills.retry(session_id, opened_ms, now_ms, out)

    def backfill(
        self, client_id: str, command: Backfill, now_ms: int
    ) -> tuple[Backfilled, list[Delivery]]:
        """``session.backfill``: a member asks the session's pool to fill open seats."""
        self._clock = now_ms
        session = self._membership(self.clients[client_id], command.session_id)
        out: list[Delivery] = []
        return self.backfills.request(session, command.seats, now_ms, out), out

    def _announce(self, session: Session, out: list[Delivery]) -> None:
        members = member_infos(session)
        for cid in session.members:
            created = SessionCreated(session.session_id, members, cid, session.pool)
            out.append(((cid,), created))

    # -- sessions -------------------------------------------------------------------------

    def join_session(
        self, client_id: str, project: Project, room: str, create: bool, public: Any
    ) -> tuple[SessionJoined, list[Delivery]]:
        """``session.join``: enter an ad-hoc room, creating it with ``create: true``."""
        client = self.clients[client_id]
        if create and project.lockdown:
            raise MatchmakerError(
                "this Project is locked down: ad-hoc sessions cannot be created",
                code="project.lockdown",
            )
        session = self.rooms.get((project.id, room))
        if session is not None and client_id in session.members:
            return SessionJoined(session.session_id, created=False), []
        if self.session_count(client) >= self.limits.max_sessions_per_client:
            raise _session_limit(self.limits)
        out: list[Delivery] = []
        if session is None:
            if not create:
                raise MatchmakerError(
                    f"no session named {room!r}; send create: true to open it",
                    code="session.not_found",
                    details={"session": room},
                )
            session = Session(self.new_id("s"), project.id, room=room)
            self.rooms[(project.id, room)] = session
            self.sessions[session.session_id] = session
        elif len(session.members) >= self.limits.max_session_members:
            raise MatchmakerError(
                f"session {room!r} is full",
                code="session.full",
                details={"limit": self.limits.max_session_members},
            )
        else:
            joined = MemberJoined(session.session_id, client_id, public, client.player_id)
            out.append((list(session.members), joined))
        created = not session.members
        session.members[client_id] = Member(client, public)
        client.sessions[session.session_id] = session
        members = member_infos(session)
        out.append(
            (
                (client_id,),
                SessionCreated(session.session_id, members, client_id),
            )
        )
        return SessionJoined(session.session_id, created), out

    def leave_session(self, client_id: str, session_id: str) -> list[Delivery]:
        """``session.leave``: the others get ``session.member_left {reason: left}``."""
        client = self.clients[client_id]
        session = self._membership(client, session_id)
        out: list[Delivery] = []
        self._leave(client, session, "left", out)
        return out

    def relay(
        self, client_id: str, session_id: str, to: list[str] | None, data: object
    ) -> Delivery:
        """``session.send``: the ``session.message`` and who gets it."""
        client = self.clients[client_id]
        session = client.sessions.get(session_id) or self._membership(client, session_id)
        members = session.members
        if to is None:
            recipients: Sequence[str] = [cid for cid in members if cid != client_id]
        else:
            missing = [cid for cid in to if cid not in members]
            if missing:
                raise MatchmakerError(
                    "some recipients are not members of the session",
                    code="session.not_member",
                    details={"session_id": session_id, "to": missing},
                )
            # Each member once: repeating an id must not multiply one frame into a flood
            # that overflows that member's outbound queue (3008).
            recipients = list(dict.fromkeys(to))
        return recipients, MessageRelayed(session_id, client_id, data)

    def signal(self, client_id: str, session_id: str, to: str, signal: object) -> Delivery:
        """``rtc.signal``: relay to ``to``, who must be another member of the session; a
        signal never reaches anyone outside it."""
        client = self.clients[client_id]
        session = self._membership(client, session_id)
        if to == client_id or to not in session.members:
            raise MatchmakerError(
                "signals go to another member of the same session",
                code="session.not_member",
                details={"session_id": session_id, "to": [to]},
            )
        return (to,), SignalRelayed(session_id, client_id, signal)

    def _membership(self, client: ClientState, session_id: str) -> Session:
        session = client.sessions.get(session_id)
        if session is not None:
            return session
        if session_id in self.sessions:
            raise MatchmakerError(
                "you are not a member of this session",
                code="session.not_member",
                details={"session_id": session_id},
            )
        raise MatchmakerError(
            f"no session {session_id!r}",
            code="session.not_found",
            details={"session_id": session_id},
        )

    def _leave(
        self, client: ClientState, session: Session, reason: str, out: list[Delivery]
    ) -> None:
        del session.members[client.client_id]
        del client.sessions[session.session_id]
        if session.members:
            left = MemberLeft(session.session_id, client.client_id, reason)
            out.append((list(session.members), left))
            self.backfills.changed(session.session_id, out)
            return
        del self.sessions[session.session_id]
        self.backfills.cancel(session.session_id, out)
        if session.room is not None:
            del self.rooms[(session.project_id, session.room)]


def member_infos(session: Session) -> list[MemberInfo]:
    """The members of ``session`` as ``session.created`` shows them."""
    return [MemberInfo(cid, m.public, m.client.player_id) for cid, m in session.members.items()]


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
    )


def _session_limit(limits: Limits) -> MatchmakerError:
    return MatchmakerError(
        f"at most {limits.max_sessions_per_client} sessions per client",
        code="session.limit",
        details={"limit": limits.max_sessions_per_client},
    )
