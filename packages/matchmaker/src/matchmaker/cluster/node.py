"""One member of a cluster: forwards what belongs to other members, serves what they forward.

Every process keeps its own :class:`~matchmaker.core.engine.Matchmaker`. A pool
(every pool of one name in a Project) and an ad-hoc room are owned by one live
member, chosen by rendezvous hashing (:mod:`.ring`); a session lives on the
member that formed it (its id names that member). A request whose pool,
room or session lives elsewhere is not fed to the local conversation but sent
to the owner, which runs it through a *proxy* conversation for the remote
client (the same protocol rules, the same core call), answers the home member
and routes the events: to its own connections, or to the members whose
clients they address. So matching stays one synchronous core step on one
process, and a group forms whole or not at all.

Traffic between members goes through one Redis Stream per member (its inbox),
written by one sender task in order (:mod:`.streams`): see ``docs/operations.md``
for why Streams rather than pub/sub.

A dropped client stays away for the resume grace wherever its state is: its
home parks it and tells the members holding a proxy of it (``away``, later
``back``, or ``gone`` when the grace ran out), which pause and resume it there
as the core does locally. A resume on another member goes through
:mod:`.handoff`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from matchmaker.cluster import codec
from matchmaker.cluster.handoff import TUNNEL_KINDS, Handoff, Pipe, Send
from matchmaker.cluster.membership import HEARTBEAT_S, Membership
from matchmaker.cluster.ring import node_of, owner, pool_key, room_key
from matchmaker.cluster.streams import Inbox, Outbound, connection
from matchmaker.config import ServerConfig
from matchmaker.core import Delivery, Event, Matchmaker
from matchmaker.core.commands import Command, EnterPool, JoinSession, LeavePool
from matchmaker.core.conversation import Conversation, resume_refused
from matchmaker.core.effects import Close, Effect, Refuse, Reply, ResumeElsewhere
from matchmaker.core.engine import entry_limit
from matchmaker.core.events import (
    EntryClosed,
    MemberJoined,
    MemberLeft,
    PoolLeft,
    PoolWithdrawn,
    SessionCreated,
    SessionLeft,
)
from matchmaker.core.projects import current_project
from matchmaker.core.state import ClientState
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError

__all__ = ["ClusterNode", "Plane", "open_cluster"]

_log = logging.getLogger("matchmaker.cluster")

# Messages written to Redis per round trip, and entries read per XREAD.
BATCH = 512
# Messages waiting for Redis before new cross-process work is refused (cluster.unavailable).
OUTBOX_LIMIT = 50_000
# Pool and room owners remembered (a bound: ad-hoc pool and room names are the clients').
OWNER_CACHE = 65_536
# A re-entered entry (its owner died) answers to this request id, which no client can send.
_INTERNAL = "\x00cluster"
_REDIS_TIMEOUT_S = 1.0
# A forwarded request not answered within this long (its answer was lost in a Redis outage)
# is refused with cluster.unavailable, so no request is left waiting.
ANSWER_TIMEOUT_S = 3.0
_READ_BLOCK_MS = 1000


class Plane(Protocol):
    """What a member needs of its process's data plane."""

    core: Matchmaker
    directory: ProjectDirectory
    config: ServerConfig
    clients: dict[str, Any]  # the local clients' connections, by client id

    def deliver_one(self, recipients: Sequence[str], event: Event, *, remote: bool = True) -> None:
        """Queue ``event`` for the local ``recipients`` (and, if ``remote``, route the rest)."""
        ...

    def perform_for(self, client_id: str, effects: list[Effect]) -> None:
        """Carry out ``effects`` on a local client's connection, if it is still open."""
        ...

    def open_remote(self, send: Send) -> Pipe:
        """A connection whose socket is on another member (see :mod:`.handoff`)."""
        ...


def unavailable() -> MatchmakerError:
    return MatchmakerError(
        "the cluster's Redis cannot be reached; try again", code="cluster.unavailable"
    )


async def open_cluster(url: str, name: str) -> ClusterNode:
    """Connect to Redis at ``url`` and join cluster ``name``; raises ``cluster.unavailable``."""
    try:
        import redis.asyncio as aioredis
        from redis.exceptions import RedisError
    except ImportError as exc:
        raise MatchmakerError(
            "--cluster needs redis-py: install matchmaker[cluster]", code="cluster.unavailable"
        ) from exc

    commands = aioredis.Redis.from_url(
        url, socket_timeout=_REDIS_TIMEOUT_S, socket_connect_timeout=_REDIS_TIMEOUT_S
    )
    writer, reader = (connection(url, _REDIS_TIMEOUT_S) for _ in range(2))
    node = ClusterNode(
        commands, writer, reader, name=name, node=secrets.token_hex(4), errors=RedisError
    )
    try:
        await node.membership.beat()
        await node.membership.poll()
    except (RedisError, OSError) as exc:
        await node.close()
        raise MatchmakerError(
            f"cannot join cluster {name!r} at {_redact(url)}: {exc}", code="cluster.unavailable"
        ) from exc
    return node


def _redact(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    return f"{scheme}{sep}{rest.rpartition('@')[2]}"


class ClusterNode:
    """This process as a member: its inbox, its outbox, and the proxies of remote clients."""

    def __init__(
        self, redis: Any, writer: Any, reader: Any, *, name: str, node: str, errors: type[Exception]
    ) -> None:
        """``redis`` is a redis-py client (membership); ``writer`` and ``reader`` are
        connections of :func:`.streams.connection`, for this member's traffic alone."""
        self._redis = redis
        self._errors: tuple[type[Exception], ...] = (errors, OSError)
        self.node = node
        self.membership = Membership(redis, name, node)
        self._outbound = Outbound(writer, _REDIS_TIMEOUT_S)
        self._inbox = Inbox(
            reader, self.membership.inbox(node), block_ms=_READ_BLOCK_MS, count=BATCH
        )
        self.available = True
        self._plane: Plane | None = None
        # Remote clients served here: id -> (their home member, their proxy conversation).
        self._proxies: dict[str, tuple[str, Conversation]] = {}
        # Local clients: the members holding a proxy of them.
        self._holders: dict[str, set[str]] = {}
        # Local clients away (parked) whose holders were told so.
        self._away: set[str] = set()
        # Local clients: sessions hosted elsewhere -> the other members' ids.
        self._remote_sessions: dict[str, dict[str, set[str]]] = {}
        # Local clients: pool name -> (owner, the pool.enter, its request id) while waiting there.
        self._waiting: dict[str, dict[str, tuple[str, EnterPool, str | None]]] = {}
        # Members found dead, until seen again (a Redis restart can make live ones look dead).
        self._departed: set[str] = set()
        # Forwarded requests awaiting their answer: (client id, request id) -> when sent.
        self._pending: dict[tuple[str, str], float] = {}
        self._outbox: deque[tuple[str, dict[str, Any], Callable[[], None] | None]] = deque()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        # Owners by ring key among the current live members (emptied when they change).
        self._owners: dict[str, str] = {}
        self._handoff = Handoff(node, self._post)

    # -- lifecycle ------------------------------------------------------------------------

    def bind(self, plane: Plane) -> None:
        """Serve ``plane`` (called once by the data plane that uses this member)."""
        self._plane = plane
        self._handoff.bind(plane.open_remote)

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._read_loop()),
                asyncio.create_task(self._send_loop()),
                asyncio.create_task(self._membership_loop()),
            ]

    async def close(self) -> None:
        """Leave the cluster (peers see this member gone) and disconnect from Redis."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        with contextlib.suppress(*self._errors):
            await self.membership.leave()
        for link in (self._outbound, self._inbox):
            with contextlib.suppress(*self._errors):
                await link.close()
        with contextlib.suppress(*self._errors):
            await self._redis.aclose()

    def describe(self) -> dict[str, object]:
        """For ``/healthz``: this member, the live members, whether Redis answers."""
        return {
            "name": self.membership.name,
            "node": self.node,
            "members": len(self.membership.live),
            "available": self.available,
        }

    # -- the shell's hooks ----------------------------------------------------------------

    def forward(
        self, conversation: Conversation, command: Command, request_id: str | None, now: float
    ) -> bool:
        """Send ``command`` to the member that owns its pool, room or session.

        ``False``: it is this member's (or no member's), the local conversation
        handles it. ``True``: forwarded; the answer comes back later. While Redis
        is unreachable such a request is refused at once with ``cluster.unavailable``.
        """
        client = conversation.client
        if client is None or len(self.membership.live) == 1:
            return False  # alone, every owner is this member: not a single hash on the way
        target = self._target(client, command)
        if target is None:
            return False
        if type(command) is EnterPool and self._over_entry_limit(client, command):
            limits = self._bound().core.limits
            refused = conversation.admit(command, request_id, now)
            conversation.last_seen = now
            self._bound().perform_for(
                client.client_id, refused or [Refuse(request_id, entry_limit(limits))]
            )
            return True
        if target == self.node:
            return False
        conversation.last_seen = now
        client_id = client.client_id
        refused = conversation.admit(command, request_id, now)
        if refused is not None:
            self._bound().perform_for(client_id, refused)
            return True
        if not self.available or len(self._outbox) >= OUTBOX_LIMIT:
            self._refuse(client_id, request_id)
            return True
        if type(command) is EnterPool:
            name = command.policy or command.pool or ""
            self._waiting.setdefault(client_id, {})[name] = (target, command, request_id)
        self._forward(client, target, command, request_id)
        return True

    def _over_entry_limit(self, client: ClientState, command: EnterPool) -> bool:
        """Whether a new entry would pass ``max_pools_per_client`` counting the client's
        entries at every owner (each owner's core only sees those in its own pools)."""
        waiting = self._waiting.get(client.client_id)
        if not waiting:
            return False  # all its entries are here: the core counts them
        name = command.policy or command.pool or self._default_policy(client)
        if name in waiting or name in client.entries:
            return False  # pool.already_entered, from whoever owns it
        limit = self._bound().core.limits.max_pools_per_client
        return len(client.entries) + len(waiting) >= limit

    def _forward(
        self, client: ClientState, target: str, command: Command, request_id: str | None
    ) -> None:
        client_id = client.client_id
        self._holders.setdefault(client_id, set()).add(target)
        if request_id is not None and request_id != _INTERNAL:
            self._pending[client_id, request_id] = time.monotonic()
        message = {
            "k": "cmd",
            "from": self.node,
            "c": client_id,
            "p": client.project_id,
            "cr": client.credential,
            "a": client.attributes,
            "r": request_id,
            "v": codec.encode_value(command),
        }
        self._post(target, message, lambda: self._refuse(client_id, request_id))

    def deliver_remote(self, recipients: Sequence[str], event: Event) -> None:
        """Route an event to the members whose clients it addresses (not connected here)."""
        by_node: dict[str, list[str]] = {}
        for client_id in recipients:
            node = node_of(client_id)
            if node is not None and node != self.node:
                by_node.setdefault(node, []).append(client_id)
        if not by_node:
            return
        encoded = codec.encode_value(event)
        for node, ids in by_node.items():
            self._post(node, {"k": "ev", "to": ids, "e": encoded}, None)

    def observe(self, recipients: Sequence[str], event: Event) -> None:
        """Follow what local clients are told: their remote sessions and waiting entries."""
        kind = type(event)
        if kind is SessionCreated:
            assert isinstance(event, SessionCreated)
            self._on_session_created(event)
        elif kind is MemberJoined or kind is MemberLeft:
            assert isinstance(event, MemberJoined | MemberLeft)
            for client_id in recipients:
                others = self._remote_sessions.get(client_id, {}).get(event.session_id)
                if others is None:
                    continue
                if kind is MemberJoined:
                    others.add(event.client_id)
                else:
                    others.discard(event.client_id)
        elif isinstance(event, EntryClosed):
            for client_id in recipients:
                self._waiting.get(client_id, {}).pop(event.pool, None)

    def client_gone(self, client_id: str) -> None:
        """A local client disconnected for good (a clean close, or its resume grace ran
        out): every member holding a proxy of it drops it."""
        for node in self._holders.pop(client_id, ()):
            self._post(node, {"k": "gone", "c": client_id}, None)
        self._away.discard(client_id)
        self._remote_sessions.pop(client_id, None)
        self._waiting.pop(client_id, None)
        for key in [k for k in self._pending if k[0] == client_id]:
            del self._pending[key]

    def client_away(self, client_id: str) -> None:
        """A local client's connection dropped and it is parked: the members holding a
        proxy of it pause it too (its entries there, its sessions' peers see ``away``)."""
        holders = self._holders.get(client_id)
        if holders:
            self._away.add(client_id)
            for node in holders:
                self._post(node, {"k": "away", "c": client_id}, None)

    def client_attached(self, client_id: str) -> None:
        """A local client has a connection again: the members told it was away hear
        it is ``back`` (its entries there return to their pools)."""
        if client_id in self._away:
            self._away.discard(client_id)
            for node in self._holders.get(client_id, ()):
                self._post(node, {"k": "back", "c": client_id}, None)
        self._rehome(client_id)  # the members may have changed while it was away

    def resume_elsewhere(self, connection: Pipe, effect: ResumeElsewhere) -> None:
        """``hello`` resumes with a token of ``effect.issuer``: relay the connection there.
        An issuer that is not a live member took the client with it: ``resume.expired``."""
        if not self.available:
            connection.perform([Refuse(effect.request_id, unavailable())])
        elif effect.issuer not in self.membership.live:
            connection.perform(resume_refused(effect.request_id))
        else:
            self._handoff.relay(connection, effect)

    # -- routing --------------------------------------------------------------------------

    def _target(self, client: ClientState, command: Command) -> str | None:
        """The member that owns what ``command`` is about; ``None``: no member in particular.

        A request naming a pool (``pool.enter``, ``pool.leave`` and every mode's
        request) goes to the pool's owner, ``session.join`` to the room's owner,
        and one naming a session or a proposal to the member that minted its id.
        """
        live = self.membership.live
        project_id = client.project_id
        if type(command) is EnterPool:
            name = command.policy or command.pool or self._default_policy(client)
            return None if name is None else self._owner(pool_key(project_id, name))
        if type(command) is JoinSession:
            return self._owner(room_key(project_id, command.session))
        for field in ("session_id", "proposal_id"):
            minted = getattr(command, field, None)
            if isinstance(minted, str):
                node = node_of(minted)
                return node if node in live else None
        pool = getattr(command, "pool", None)
        return self._owner(pool_key(project_id, pool)) if isinstance(pool, str) else None

    def _owner(self, key: str) -> str:
        """``owner(key, live)``, hashed once per key while the members stay the same."""
        owners = self._owners
        found = owners.get(key)
        if found is None:
            if len(owners) >= OWNER_CACHE:
                owners.clear()
            found = owners[key] = owner(key, self.membership.live)
        return found

    def _default_policy(self, client: ClientState) -> str | None:
        plane = self._bound()
        try:
            project = current_project(
                plane.directory,
                client.project_id,
                client.credential,
                require_declared=plane.config.require_declared_projects,
            )
        except MatchmakerError:
            return None
        default = project.default_policy()
        return None if default is None else default.name

    def _bound(self) -> Plane:
        plane = self._plane
        assert plane is not None, "ClusterNode.bind was not called"
        return plane

    def _refuse(self, client_id: str, request_id: str | None) -> None:
        if request_id != _INTERNAL:
            self._bound().perform_for(client_id, [Refuse(request_id, unavailable())])

    # -- inbound --------------------------------------------------------------------------

    def _handle(self, message: dict[str, Any]) -> None:
        plane = self._bound()
        kind = message["k"]
        if kind == "ev":
            plane.deliver_one(message["to"], codec.decode_value(message["e"]), remote=False)
        elif kind == "cmd":
            self._serve(message)
        elif kind == "fx":
            self._answer(message["c"], [_decode_answer(e) for e in message["e"]])
        elif kind == "gone":
            proxy = self._proxies.pop(message["c"], None)
            if proxy is not None:
                self._deliver(proxy[1].disconnect())
        elif kind == "withdraw":
            self._withdraw(message["c"])
        elif kind in {"away", "back"}:
            self._proxy_away(message["c"], away=kind == "away")
        elif kind in TUNNEL_KINDS:
            self._handoff.handle(message)

    def _proxy_away(self, client_id: str, *, away: bool) -> None:
        """A remote client served here went away or came back: pause or resume it in the
        core, as its home did."""
        plane = self._bound()
        state = plane.core.clients.get(client_id)
        if client_id not in self._proxies or state is None or state.away == away:
            return
        if away:
            self._deliver(plane.core.suspend(client_id))
        else:
            self._deliver(plane.core.resume(client_id, _wall_clock_ms()))

    def _serve(self, message: dict[str, Any]) -> None:
        """Run a forwarded request through the proxy conversation of its client."""
        plane = self._bound()
        client_id: str = message["c"]
        home: str = message["from"]
        proxy = self._proxies.get(client_id)
        if proxy is None:
            state = ClientState(client_id, message["p"], message["cr"], dict(message["a"]))
            # The proxy is registered like a local client, so the core's rules (one entry
            # per pool, limits) and its events apply to it unchanged.
            plane.core.clients[client_id] = state
            conversation = Conversation(
                plane.core,
                plane.directory,
                require_declared=plane.config.require_declared_projects,
                now=time.monotonic(),
                wall_clock_ms=_wall_clock_ms,
            )
            conversation.client = state
            proxy = (home, conversation)
            self._proxies[client_id] = proxy
        conversation = proxy[1]
        request_id: str | None = message["r"]
        try:
            effects = conversation.receive(
                codec.decode_value(message["v"]), request_id, time.monotonic()
            )
        except Exception:
            _log.exception("unhandled error on a forwarded request")
            effects = [
                Refuse(request_id, MatchmakerError("internal error", code="server.internal"))
            ]
        answers = [e for e in effects if isinstance(e, Reply | Refuse | Close)]
        # The answer first: the home member must see pool.entered before session.created.
        if answers:
            encoded = [codec.encode_effect(e) for e in answers]
            self._post(home, {"k": "fx", "c": client_id, "e": encoded}, None)
        self._deliver([e for e in effects if isinstance(e, tuple)])
        # The proxy stays until its client disconnects (or its home dies): a mode may keep
        # state for it (a watch, a delegate) beyond entries and sessions.

    def _answer(self, client_id: str, effects: list[Effect]) -> None:
        """Answers to a local client's forwarded request."""
        waiting = self._waiting.get(client_id, {})
        shown: list[Effect] = []
        for effect in effects:
            request_id = getattr(effect, "request_id", None)
            if request_id == _INTERNAL:
                continue  # the answer to a re-entry or a move: nobody asked
            if request_id is not None:
                # (An answer after _expire_pending refused the request still goes out.)
                self._pending.pop((client_id, request_id), None)
            if isinstance(effect, Reply):
                answer = effect.answer
                if isinstance(answer, PoolLeft):
                    waiting.pop(answer.pool, None)
                elif isinstance(answer, SessionLeft):
                    self._remote_sessions.get(client_id, {}).pop(answer.session_id, None)
            elif isinstance(effect, Refuse) and effect.request_id is not None:
                self._forget_entry(client_id, effect.request_id)
            shown.append(effect)
        if shown:
            self._bound().perform_for(client_id, shown)

    def _forget_entry(self, client_id: str, request_id: str) -> None:
        """The ``pool.enter`` sent as ``request_id`` was refused: no entry waits for it."""
        waiting = self._waiting.get(client_id, {})
        for name, (_, _, asked) in list(waiting.items()):
            if asked == request_id:
                del waiting[name]

    def _deliver(self, deliveries: list[Delivery]) -> None:
        plane = self._bound()
        for recipients, event in deliveries:
            plane.deliver_one(recipients, event)

    def _on_session_created(self, event: SessionCreated) -> None:
        client_id = event.you
        host = node_of(event.session_id)
        if event.pool is not None:
            self._waiting.get(client_id, {}).pop(event.pool, None)
            # Matched in one pool: the entries it has with other owners are withdrawn too.
            for node in self._holders.get(client_id, set()) - {host}:
                self._post(node, {"k": "withdraw", "c": client_id}, None)
            if host != self.node:
                self._withdraw(client_id)
        if host != self.node:
            others = {m.client_id for m in event.members if m.client_id != client_id}
            self._remote_sessions.setdefault(client_id, {})[event.session_id] = others

    def _withdraw(self, client_id: str) -> None:
        """The client was matched elsewhere: withdraw its entries held here."""
        plane = self._bound()
        state = plane.core.clients.get(client_id)
        if state is None:
            return
        out: list[Delivery] = []
        for name in list(state.entries):
            entry_id, dropped = plane.core.leave_pool(client_id, name)
            out.extend(dropped)
            out.append(((client_id,), PoolWithdrawn(name, entry_id, "matched")))
        self._deliver(out)

    # -- failures -------------------------------------------------------------------------

    def _member_died(self, node: str) -> None:
        """``node`` stopped renewing its key: forget its clients, re-home what it owned."""
        plane = self._bound()
        _log.warning("cluster member %s is gone", node)
        self._departed.add(node)
        for client_id, (home, conversation) in list(self._proxies.items()):
            if home == node:
                del self._proxies[client_id]
                self._deliver(conversation.disconnect())
        for client_id, sessions in self._remote_sessions.items():
            for session_id in [s for s in sessions if node_of(s) == node]:
                for other in sorted(sessions.pop(session_id)):
                    left = MemberLeft(session_id, other, "disconnected")
                    plane.deliver_one((client_id,), left, remote=False)
        for holders in self._holders.values():
            holders.discard(node)
        self._handoff.member_died(node)
        for waiting in self._waiting.values():
            for name, (owner_node, command, _) in list(waiting.items()):
                if owner_node == node:
                    # Its pools died with it: _rebalance enters the entry again at the new owner.
                    waiting[name] = ("", command, _INTERNAL)

    def _rebalance(self) -> None:
        """The members changed: local clients' entries whose pool has a new owner move there.

        An entry at a live former owner is withdrawn there first. Entries of the
        ``auto`` mode that wait in this process's own core move too (others keep
        their mode's state here until they match, leave or expire).
        """
        plane = self._bound()
        for client_id in list(self._waiting):
            self._rehome(client_id)
        for client_id in list(plane.clients):
            state = plane.core.clients.get(client_id)
            if state is None:
                continue
            for name, entry in list(state.entries.items()):
                spec = entry.pool.spec
                new = self._owner(pool_key(state.project_id, name))
                if new == self.node or spec.mode != "auto" or entry.paused:
                    continue
                if entry.pool.key[0] == "policy":
                    command = EnterPool(policy=name, public=entry.public)
                else:
                    command = EnterPool(
                        pool=name,
                        create=True,
                        mode=spec.mode,
                        group_size=spec.group_size,
                        filter=dict(spec.filter) or None,
                        min_group_size=spec.min_group_size,
                        fill_timeout_ms=spec.fill_timeout_ms,
                        public=entry.public,
                    )
                _, out = plane.core.leave_pool(client_id, name)
                self._deliver(out)
                self._move(state, name, new, command)

    def _rehome(self, client_id: str) -> None:
        """Move the client's entries held by other members whose pool has a new owner.

        An away client's entries wait until it is back (:meth:`client_attached`):
        entered at a new owner, one could be matched at once, while it is away.
        """
        state = self._bound().core.clients.get(client_id)
        waiting = self._waiting.get(client_id)
        if state is None or state.away or not waiting:
            return
        for name, (old, command, _) in list(waiting.items()):
            new = self._target(state, command)
            if new is None or new == old:
                continue
            del waiting[name]
            if old in self.membership.live:
                self._forward(state, old, LeavePool(name), _INTERNAL)
            self._move(state, name, new, command)

    def _move(self, state: ClientState, name: str, target: str, command: EnterPool) -> None:
        """Enter ``command`` again at ``target`` (this process or another), answering nobody."""
        plane = self._bound()
        if target != self.node:
            self._waiting.setdefault(state.client_id, {})[name] = (target, command, _INTERNAL)
            self._forward(state, target, command, _INTERNAL)
            return
        with contextlib.suppress(MatchmakerError):
            project = current_project(
                plane.directory,
                state.project_id,
                state.credential,
                require_declared=plane.config.require_declared_projects,
            )
            _, out = plane.core.enter(state.client_id, project, command, _wall_clock_ms())
            self._deliver(out)

    # -- Redis ----------------------------------------------------------------------------

    def _post(self, node: str, message: dict[str, Any], fail: Callable[[], None] | None) -> None:
        if node in self._departed:
            return  # writing would only recreate the deleted inbox of a member that died
        if not self.available:
            if fail is not None:
                fail()
            return
        self._outbox.append((node, message, fail))
        self._wake.set()

    def _expire_pending(self, now: float) -> None:
        """Refuse the forwarded requests whose answer did not come in time."""
        late = [k for k, sent in self._pending.items() if now - sent > ANSWER_TIMEOUT_S]
        for client_id, request_id in late:
            del self._pending[client_id, request_id]
            self._forget_entry(client_id, request_id)
            self._refuse(client_id, request_id)

    def _set_available(self, available: bool) -> None:
        if available != self.available:
            self.available = available
            if available:
                self._outbound.after_outage()
                _log.warning("cluster Redis reachable again")
            else:
                _log.warning("cluster Redis unreachable: cross-process requests are refused")
                self._handoff.close_all()

    async def _send_loop(self) -> None:
        outbox, wake = self._outbox, self._wake
        while True:
            await wake.wait()
            wake.clear()
            while outbox:
                batch = [outbox.popleft() for _ in range(min(len(outbox), BATCH))]
                # One entry per member: its messages in order, encoded at once.
                by_node: dict[str, list[dict[str, Any]]] = {}
                for node, message, _ in batch:
                    by_node.setdefault(node, []).append(message)
                inbox = self.membership.inbox
                entries = [(inbox(node), codec.encode(m)) for node, m in by_node.items()]
                try:
                    await self._outbound.append(entries)
                except self._errors:
                    self._set_available(False)
                    for _, _, fail in batch:
                        if fail is not None:
                            fail()

    async def _read_loop(self) -> None:
        while True:
            try:
                payloads = await self._inbox.next()
            except self._errors:
                self._set_available(False)
                await asyncio.sleep(HEARTBEAT_S / 2)
                continue
            for payload in payloads:
                try:
                    messages = codec.decode(payload)
                except Exception:
                    _log.exception("cannot decode a cluster stream entry")
                    continue
                for message in messages:
                    try:
                        self._handle(message)
                    except Exception:
                        _log.exception("cannot handle a cluster message")
            # The answers and events these messages produced are written (to Redis, to
            # clients) before this task asks for more: asking is a write too, and would
            # delay them.
            await asyncio.sleep(0)

    async def _membership_loop(self) -> None:
        while True:
            try:
                await self.membership.beat()
                joined, died = await self.membership.poll()
            except self._errors:
                self._set_available(False)
            else:
                self._set_available(True)
                self._departed -= joined
                if joined or died:
                    self._owners.clear()
                for node in sorted(died):
                    self._member_died(node)
                if joined or died:
                    self._rebalance()
            self._expire_pending(time.monotonic())
            await asyncio.sleep(HEARTBEAT_S)


def _decode_answer(value: list[Any]) -> Effect:
    """An answer from another member; one this member cannot read still answers the request
    (``server.internal``), so the client is never left waiting."""
    try:
        return codec.decode_effect(value)
    except Exception:
        _log.exception("cannot decode an answer from another member")
        request_id = value[1] if len(value) > 1 and isinstance(value[1], str) else None
        return Refuse(request_id, MatchmakerError("internal error", code="server.internal"))


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)
