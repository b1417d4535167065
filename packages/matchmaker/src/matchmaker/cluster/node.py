"""One member of a cluster: the loops, the outbox and Redis's availability.

Every process keeps its own :class:`~matchmaker.core.engine.Matchmaker`; what
belongs to another member, and what to do about it, is decided by the member's
:class:`~.routing.Router` (sans I/O). This module only carries out its actions:
it writes the messages the router posts to the members' inboxes, reads its own
inbox and feeds the router what arrives, follows the live members, and tells
the router the time. Tunnels (a resume on another member) are :mod:`.handoff`'s.

Traffic between members goes through one Redis Stream per member (its inbox),
written by one sender task in order (:mod:`.streams`): see ``docs/operations.md``
for why Streams rather than pub/sub.
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

from matchmaker.asgi import Send
from matchmaker.cluster import messages
from matchmaker.cluster.handoff import TUNNEL_MESSAGES, Handoff, Pipe
from matchmaker.cluster.membership import HEARTBEAT_S, RETRY_S, Membership
from matchmaker.cluster.messages import Message
from matchmaker.cluster.routing import Action, Deliver, Perform, Post, Router, Routes
from matchmaker.cluster.streams import Inbox, Outbound, connection
from matchmaker.config import ServerConfig
from matchmaker.core import Event, Matchmaker
from matchmaker.core.commands import ClientCommand
from matchmaker.core.conversation import Conversation
from matchmaker.core.effects import Effect, ResumeElsewhere
from matchmaker.core.projects import current_project
from matchmaker.core.state import ClientState
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.model import Project

__all__ = ["ClusterNode", "Plane", "open_cluster"]

_log = logging.getLogger("matchmaker.cluster")

# Messages written to Redis per round trip, and entries read per XREAD.
BATCH = 512
# Messages waiting for Redis before new cross-process work is refused (cluster.unavailable).
OUTBOX_LIMIT = 50_000
_REDIS_TIMEOUT_S = 1.0
# How long leaving the cluster waits for the queued messages to be written (a drain's).
FLUSH_S = 2.0
_FLUSH_POLL_S = 0.01
_READ_BLOCK_MS = 1000


class Plane(Protocol):
    """What a member needs of its process's data plane."""

    core: Matchmaker
    directory: ProjectDirectory
    config: ServerConfig
    clients: dict[str, Any]  # the local clients' connections, by client id

    def deliver_one(
        self, recipients: Sequence[str], event: Event, now_ms: int, *, remote: bool = True
    ) -> None:
        """Queue ``event`` for the local ``recipients`` (and, if ``remote``, route the rest)."""
        ...

    def perform_for(self, client_id: str, effects: list[Effect], now_ms: int) -> None:
        """Carry out ``effects`` on a local client's connection, if it is still open."""
        ...

    def open_remote(self, send: Send) -> Pipe:
        """A connection whose socket is on another member (see :mod:`.handoff`)."""
        ...


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
        await node.membership.poll(_wall_clock_ms())
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
    """This process as a member: its inbox, its outbox, and its router."""

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
        self._router: Router | None = None
        self._outbox: deque[tuple[str, Message, Callable[[], None] | None]] = deque()
        self._sending = False  # a batch taken from the outbox is being written
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._handoff = Handoff(node, self._post)

    # -- lifecycle ------------------------------------------------------------------------

    def bind(self, plane: Plane) -> None:
        """Serve ``plane`` (called once by the data plane that uses this member)."""
        self._plane = plane
        require_declared = plane.config.require_declared_projects

        def project(client: ClientState) -> Project:
            return current_project(
                plane.directory,
                client.project_id,
                client.credential,
                require_declared=require_declared,
            )

        def conversation(now_ms: int) -> Conversation:
            return Conversation(
                plane.core, plane.directory, require_declared=require_declared, now_ms=now_ms
            )

        routes = Routes(
            self.node, plane.core, self.membership.live, project=project, conversation=conversation
        )
        self._router = Router(routes)
        self._handoff.bind(plane.open_remote)

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._read_loop()),
                asyncio.create_task(self._send_loop()),
                asyncio.create_task(self._membership_loop()),
            ]

    def drain(self, now_ms: int) -> bool:
        """This process is stopping (``SIGTERM``): hand its clients and sessions over to
        the surviving members (:mod:`.placement.drain`), before its connections close; :meth:`close`
        writes what is still queued before it leaves. ``False`` when nothing was handed
        over (no survivor, or no client): the connections then close as final (1001)."""
        actions = self._routing().drain.hand_over(now_ms)
        self._run(actions, now_ms)
        return bool(actions)

    async def close(self) -> None:
        """Leave the cluster (peers see this member gone) and disconnect from Redis, once
        what is queued for the members is written (a drain's hand-over, within
        :data:`FLUSH_S`)."""
        deadline = time.monotonic() + FLUSH_S
        while (self._outbox or self._sending) and self.available and self._tasks:
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(_FLUSH_POLL_S)
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
        self,
        conversation: Conversation,
        command: ClientCommand,
        request_id: str | None,
        now_ms: int,
    ) -> bool:
        """Send ``command`` to the member that owns its pool, room or session.

        ``False``: the local conversation handles it. ``True``: taken care of (sent,
        or refused at once); the answer comes back later.
        """
        sendable = self.available and len(self._outbox) < OUTBOX_LIMIT
        actions = self._routing().forward(
            conversation, command, request_id, now_ms, sendable=sendable
        )
        if actions is None:
            return False
        self._run(actions, now_ms)
        return True

    def deliver_remote(self, recipients: Sequence[str], event: Event, now_ms: int) -> None:
        """Route an event to the members whose clients it addresses (not connected here)."""
        self._run(self._routing().deliver_remote(recipients, event), now_ms)

    def observe(self, recipients: Sequence[str], event: Event, now_ms: int) -> None:
        """Follow what local clients are told: their remote sessions and waiting entries."""
        actions = self._routing().observe(recipients, event)
        if actions:
            self._run(actions, now_ms)

    def client_gone(self, client_id: str, now_ms: int) -> None:
        """A local client disconnected for good: every member holding a proxy drops it."""
        self._run(self._routing().client_gone(client_id), now_ms)

    def client_away(self, client_id: str, now_ms: int) -> None:
        """A local client's connection dropped and it is parked: its proxies pause too."""
        self._run(self._routing().client_away(client_id), now_ms)

    def client_attached(self, client_id: str, now_ms: int) -> None:
        """A local client has a connection again: its proxies hear it is ``back``."""
        self._run(self._routing().client_attached(client_id, now_ms), now_ms)

    def resume_elsewhere(self, connection: Pipe, effect: ResumeElsewhere, now_ms: int) -> None:
        """``hello`` resumes with a token of ``effect.issuer``: relay the connection there
        (or refuse it, as the router says)."""
        decided = self._routing().resume_elsewhere(effect, sendable=self.available)
        if isinstance(decided, ResumeElsewhere):
            self._handoff.relay(connection, decided)
        else:
            connection.perform(decided, now_ms)

    # -- carrying out the router's actions ------------------------------------------------

    def _run(self, actions: Sequence[Action], now_ms: int) -> None:
        """Carry out the router's ``actions``, decided at ``now_ms``."""
        plane = self._bound()
        for action in actions:
            match action:
                case Post(node=node, message=message):
                    self._post(node, message, None)
                case Perform(client_id=client_id, effects=effects):
                    plane.perform_for(client_id, effects, now_ms)
                case Deliver(deliveries=deliveries, remote=remote):
                    for recipients, event in deliveries:
                        plane.deliver_one(recipients, event, now_ms, remote=remote)

    def _post(self, node: str, message: Message, fail: Callable[[], None] | None) -> None:
        """Queue ``message`` for ``node``; if Redis does not take it, ``fail`` runs (the
        router's :meth:`~.routing.Router.lost` when there is none)."""
        if node in self._routing().routes.departed or not self.available:
            # Not written (to a member that died, it would only recreate its deleted inbox):
            # answered as a message Redis did not take, so no request is left waiting.
            self._failed(message, fail)
            return
        self._outbox.append((node, message, fail))
        self._wake.set()

    def _failed(self, message: Message, fail: Callable[[], None] | None) -> None:
        if fail is not None:
            fail()
        else:
            now_ms = _wall_clock_ms()
            self._run(self._routing().lost(message, now_ms), now_ms)

    def _routing(self) -> Router:
        router = self._router
        assert router is not None, "ClusterNode.bind was not called"
        return router

    def _bound(self) -> Plane:
        plane = self._plane
        assert plane is not None, "ClusterNode.bind was not called"
        return plane

    # -- Redis ----------------------------------------------------------------------------

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
                by_node: dict[str, list[Message]] = {}
                for node, message, _ in batch:
                    by_node.setdefault(node, []).append(message)
                inbox = self.membership.inbox
                entries = [
                    (inbox(node), messages.encode(self.node, m)) for node, m in by_node.items()
                ]
                self._sending = True
                try:
                    await self._outbound.append(entries)
                except self._errors:
                    self._set_available(False)
                    for _, message, fail in batch:
                        self._failed(message, fail)
                finally:
                    self._sending = False

    async def _read_loop(self) -> None:
        while True:
            try:
                payloads = await self._inbox.next()
            except self._errors:
                self._set_available(False)
                await asyncio.sleep(HEARTBEAT_S / 2)
                continue
            for payload in payloads:
                self._handle_entry(payload)
            # The answers and events these messages produced are written (to Redis, to
            # clients) before this task asks for more: asking is a write too, and would
            # delay them.
            await asyncio.sleep(0)

    def _handle_entry(self, payload: bytes) -> None:
        """One stream entry: its messages, to the handoff (tunnels) or the router."""
        try:
            entry = messages.decode(payload)
        except Exception:
            _log.exception("cannot decode a cluster stream entry")
            return
        router, now_ms = self._routing(), _wall_clock_ms()
        sender = entry.sender
        for message in entry.messages:
            try:
                if isinstance(message, TUNNEL_MESSAGES):
                    self._handoff.handle(message, now_ms)
                else:
                    self._run(router.receive(sender, message, now_ms), now_ms)
            except Exception:
                _log.exception("cannot handle a cluster message")

    async def _membership_loop(self) -> None:
        while True:
            try:
                change = await self.membership.poll(_wall_clock_ms())
            except self._errors:
                self._set_available(False)
            else:
                self._set_available(True)
                self._members_changed(change.joined, change.died)
            now_ms = _wall_clock_ms()
            self._run(self._routing().expire(now_ms), now_ms)
            # While Redis does not answer, try again soon: back, this member is in the
            # registry again before its peers' patience (the member TTL) runs out.
            await asyncio.sleep(HEARTBEAT_S if self.available else RETRY_S)

    def _members_changed(self, joined: frozenset[str], died: frozenset[str]) -> None:
        for node in sorted(died):
            _log.warning("cluster member %s is gone", node)
        live, local = self.membership.live, list(self._bound().clients)
        now_ms = _wall_clock_ms()
        actions = self._routing().members_changed(live, joined, died, local, now_ms)
        for node in sorted(died):
            self._handoff.member_died(node, now_ms)
        self._run(actions, now_ms)


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)
