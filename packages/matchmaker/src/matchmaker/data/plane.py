"""The data plane of one process: the core, the live connections, the timers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Sequence
from typing import Any, Protocol

from matchmaker.asgi import Receive, Scope, Send
from matchmaker.config import ServerConfig
from matchmaker.core import Delivery, Event, Matchmaker, closecodes
from matchmaker.core.commands import ClientCommand
from matchmaker.core.conversation import Conversation
from matchmaker.core.effects import Effect, ResumeElsewhere
from matchmaker.core.events import EntryClosed, MessageRelayed, SessionFormed
from matchmaker.core.modes.quality import quality
from matchmaker.data.connection import Connection
from matchmaker.data.direct import DirectConnection, Peer
from matchmaker.data.handover import close_entries, hand_over, take_over
from matchmaker.data.observer import DataObserver
from matchmaker.data.recording import ArrivalRecorder
from matchmaker.data.translate import error_frame, event_head, reply_frame
from matchmaker.data.upgrade import upgrade_refusal
from matchmaker.data.webrtc import ChannelAnswer, answer_offer, channel_send, close_quietly
from matchmaker.data.writer import WriterConnection
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.model import Project
from matchmaker.observe.logs import fields
from matchmaker.observe.metrics import Metrics
from mtcommon import render_json

__all__ = ["ClusterHooks", "DataPlane"]


# How often entry TTLs are checked; an entry expires at most this late.
EXPIRY_TICK_S = 0.25

_log = logging.getLogger("matchmaker.data")


class ClusterHooks(Protocol):
    """Where a cluster member (:mod:`matchmaker.cluster`, with ``--cluster``) plugs in.

    Without ``--cluster`` the plane has none and nothing below is called.
    """

    node: str
    available: bool
    """Whether the cluster's Redis answers (``/readyz`` is 503 while it does not)."""

    def bind(self, plane: Any) -> None: ...

    def start(self) -> None: ...

    def forward(
        self,
        conversation: Conversation,
        command: ClientCommand,
        request_id: str | None,
        now_ms: int,
    ) -> bool:
        """Send a request that another process owns there; ``False``: handle it here."""
        ...

    def deliver_remote(self, recipients: Sequence[str], event: Event, now_ms: int) -> None:
        """Route an event to clients that are not connected here."""
        ...

    def observe(self, recipients: Sequence[str], event: Event, now_ms: int) -> None:
        """See an event delivered to local clients."""
        ...

    def client_gone(self, client_id: str, now_ms: int) -> None:
        """A local client left the core."""
        ...

    def client_away(self, client_id: str, now_ms: int) -> None:
        """A local client's connection dropped: it is away for the resume grace."""
        ...

    def client_attached(self, client_id: str, now_ms: int) -> None:
        """A local client has a connection (again, if it resumed)."""
        ...

    def resume_elsewhere(
        self, connection: Connection, effect: ResumeElsewhere, now_ms: int
    ) -> None:
        """Hand ``connection`` over to the member that issued its resume token."""
        ...

    def drain(self, now_ms: int) -> bool:
        """The process is stopping: hand its clients and sessions over to the others
        (``False``: there was nobody to hand over to, or nothing to hand over)."""
        ...

    def describe(self) -> dict[str, object]: ...


class DataPlane:
    """Owns the matching core and every WebSocket; an ASGI app for ``/ws``."""

    def __init__(
        self,
        config: ServerConfig,
        directory: ProjectDirectory,
        shutdown: asyncio.Event,
        metrics: Metrics | None = None,
        cluster: ClusterHooks | None = None,
        *,
        restartable: bool = False,
    ) -> None:
        self.config = config
        # A stop hands the clients over to the next process (3001, :mod:`.handover`).
        self.restartable = restartable
        # Under --cluster, set when a stop handed the clients to the surviving members.
        self.drained = False
        self.observer = DataObserver(Metrics() if metrics is None else metrics)
        self._metrics = self.observer.metrics  # relay_local counts without a call
        self._last_match = ""  # the session id last counted as a match
        self.directory = directory
        self.shutdown = shutdown
        self.core = Matchmaker(config.limits, node=None if cluster is None else cluster.node)
        self._outboxes = self.core.resumption.outboxes  # read on every delivery
        self.clients: dict[str, Connection] = {}
        self.open: set[Connection] = set()
        self.recorder = (
            None
            if config.record_arrivals is None
            else ArrivalRecorder(
                config.record_arrivals, config.record_arrivals_max_bytes, directory
            )
        )
        self._tasks: list[asyncio.Task[None]] = []
        self.cluster = cluster
        self.forward = None if cluster is None else cluster.forward
        if cluster is not None:
            cluster.bind(self)
        urls = (config.ice_servers or "").split(",")
        self._ice_servers = tuple(url.strip() for url in urls if url.strip())
        # Server-side WebRTC peers (aiortc), when used, and the connection that opened each.
        self._peers: dict[Any, Connection] = {}
        self._offering: list[Connection] = []  # offers being answered, by connection
        self._background: set[asyncio.Task[None]] = set()
        directory.subscribe(self._on_project_changed)

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Start the timers (idempotent; also done lazily by the first connection)."""
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._expire_loop()),
                asyncio.create_task(self._heartbeat_loop()),
                asyncio.create_task(self._watch_shutdown()),
            ]
            if self.cluster is not None:
                self.cluster.start()

    async def stop(self) -> None:
        """Stop the timers and stop following Project changes."""
        self.directory.unsubscribe(self._on_project_changed)
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.recorder is not None:
            self.recorder.close()

    def _on_project_changed(self, project_id: str, project: Project | None) -> None:
        """Clients waiting under a changed or removed policy are told (``pool.closed``)."""
        self.deliver(self.core.close_changed_policies(project_id, project), _wall_clock_ms())

    async def _watch_shutdown(self) -> None:
        await self.shutdown.wait()
        # Under --cluster the clients go to the surviving members first (they resume there).
        if self.cluster is not None:
            self.drained = self.cluster.drain(_wall_clock_ms())
        code, reason = self._stop_close()
        for connection in list(self.open):
            connection.close(code, reason)

    def _stop_close(self) -> tuple[int, str]:
        """How a stop closes a WebSocket: 3001 ``resume`` when the clients are handed over
        (to the next process through the store, or drained to the surviving members of
        the cluster: they resume there), else 1001."""
        if self.restartable or self.drained:
            return closecodes.RESTARTING, "resume"
        return closecodes.GOING_AWAY, "server shutting down"

    def take_over(self, body: str, now_ms: int) -> None:
        """Before serving: take the clients a stopped process handed over (:mod:`.handover`)."""
        self.deliver(take_over(self.core, body, now_ms), now_ms)

    def hand_over(self, now_ms: int) -> str | None:
        """Once the servers stopped: the hand-over of the parked clients for the next
        process (``None``: nobody to hand over), their entries closed first."""
        self.deliver(close_entries(self.core, now_ms), now_ms)
        return hand_over(self.core, now_ms)

    async def _expire_loop(self) -> None:
        while True:
            await asyncio.sleep(EXPIRY_TICK_S)
            now_ms = _wall_clock_ms()
            self.deliver(self.core.expire(now_ms), now_ms)
            gone, deliveries = self.core.end_grace(now_ms)
            self.deliver(deliveries, now_ms)
            if self.cluster is not None:
                for client_id in gone:
                    self.cluster.client_gone(client_id, now_ms)

    async def _heartbeat_loop(self) -> None:
        # Only silent clients are pinged, a few at a time as they fall silent: a busy
        # client needs no ping, and pinging everyone at once would stall live traffic.
        interval = self.config.limits.heartbeat_interval_ms / 1000
        while True:
            await asyncio.sleep(interval / 4)
            now_ms = _wall_clock_ms()
            for connection in list(self.clients.values()):
                effect = connection.conversation.heartbeat(now_ms)
                if effect is not None:
                    connection.perform([effect], now_ms)

    # -- membership -----------------------------------------------------------------------

    def attach(self, connection: Connection, now_ms: int) -> None:
        """A connection completed ``hello``. A resume that took the client from a connection
        still open (half-open TCP, say) closes that one with 3009, leaving the client be."""
        client_id = connection.client_id
        assert client_id is not None
        old = self.clients.get(client_id)
        self.clients[client_id] = connection
        if old is not None and old is not connection:
            old.conversation.replaced()
            old.close(closecodes.REPLACED, "replaced by a resumed connection")
        client = connection.conversation.client
        assert client is not None
        if self.cluster is not None:
            self.cluster.client_attached(client_id, now_ms)
        _log.info(
            "client connected",
            extra=fields(event="hello", client=client_id, project=client.project_id),
        )

    def detach(self, connection: Connection) -> None:
        """A connection is closing. After a clean close (the client's 1000, or a 4xxx) its
        client leaves pools and sessions now; after any other it is away for the resume
        grace."""
        self.open.discard(connection)
        client_id = connection.client_id
        if client_id is not None and self.clients.get(client_id) is connection:
            del self.clients[client_id]
        if connection.relay is None:  # a relay's close is counted where its client lives
            self.observer.closed(connection.close_code or closecodes.GOING_AWAY)
        _log.info(
            "connection closed",
            extra=fields(
                event="close",
                client=client_id,
                code=connection.close_code,
                reason=connection.close_reason,
            ),
        )
        code = connection.close_code
        resumable = code is not None and code != closecodes.NORMAL and code < closecodes.BYE
        # Nothing survives a shutdown, unless it hands the clients over.
        resumable = resumable and (self.restartable or not self.shutdown.is_set())
        now_ms = _wall_clock_ms()
        self.deliver(connection.conversation.disconnect(now_ms, resumable=resumable), now_ms)
        cluster = self.cluster
        if cluster is not None and client_id is not None:
            # Parked (its outbox kept) or gone: the other members holding its state follow.
            if client_id in self.core.resumption.outboxes:
                cluster.client_away(client_id, now_ms)
            else:
                cluster.client_gone(client_id, now_ms)

    # -- delivery -------------------------------------------------------------------------

    def deliver(self, deliveries: list[Delivery], now_ms: int) -> None:
        """Queue the core's outputs (of an operation at ``now_ms``) on their recipients'
        connections."""
        for recipients, event in deliveries:
            self.deliver_one(recipients, event, now_ms)

    def deliver_one(
        self, recipients: Sequence[str], event: Event, now_ms: int, *, remote: bool = True
    ) -> None:
        """Encode ``event`` once, number it per recipient (kept for replay, stamped at
        ``now_ms``: the time its caller already read, for the replay buffer's age bound) and
        queue it for each recipient that is connected; an away recipient gets it on resume.

        Only the ``seq`` differs between recipients: the frame up to its closing
        brace is encoded to text here, once, not once per recipient. In a cluster,
        recipients not connected here are routed to their process (unless the event
        came from another process: ``remote=False``). An event for no one is a note
        of the core for the cluster's router (a backfill's, :mod:`matchmaker.core.backfill`).
        """
        if not recipients:
            if self.cluster is not None:
                self.cluster.observe(recipients, event, now_ms)
            return
        head = event_head(event)
        clients, outboxes = self.clients, self._outboxes
        kind = type(event)
        if not remote:
            pass  # counted by the process whose core produced it (a cluster sums once)
        elif kind is MessageRelayed:
            self.observer.relayed(len(head), len(recipients))
        elif kind is SessionFormed or isinstance(event, EntryClosed):
            self._observe_pool_event(recipients, event)
        cluster = self.cluster
        elsewhere: list[str] | None = None if cluster is None else []
        for client_id in recipients:
            outbox = outboxes.get(client_id)
            if outbox is None:
                if elsewhere is not None:
                    elsewhere.append(client_id)
                continue
            frame = outbox.stamp(head, now_ms)
            connection = clients.get(client_id)
            if connection is not None:
                connection.push(frame)
        if cluster is not None:
            cluster.observe(recipients, event, now_ms)
            if elsewhere and remote:
                cluster.deliver_remote(elsewhere, event, now_ms)

    def relay_local(self, recipients: list[str], event: MessageRelayed, now_ms: int) -> None:
        """:meth:`deliver_one` for a relayed message of a process outside a cluster (the one
        delivery of almost every ``session.send``): no cluster to route to or tell, no
        dispatch on the event's type; the same frame, seqs, replay buffer and counters.
        ``now_ms`` (epoch milliseconds) is the time the message arrived, for the replay
        buffer's age bound: the connection read it already, so no clock is read here."""
        head = event_head(event)
        metrics = self._metrics
        metrics.relayed_messages += 1
        metrics.relayed_bytes += len(head) * len(recipients)
        clients, outboxes = self.clients, self._outboxes
        for client_id in recipients:
            outbox = outboxes.get(client_id)
            if outbox is not None:
                frame = outbox.stamp(head, now_ms)
                connection = clients.get(client_id)
                if connection is not None:
                    connection.push(frame)

    def perform_for(self, client_id: str, effects: list[Effect], now_ms: int) -> None:
        """Carry out ``effects`` (an answer from another process, at ``now_ms``) on a
        client's connection."""
        connection = self.clients.get(client_id)
        if connection is not None:
            connection.perform(effects, now_ms)

    # -- cluster handoff ------------------------------------------------------------------

    def resume_elsewhere(
        self, connection: Connection, effect: ResumeElsewhere, now_ms: int
    ) -> None:
        """A resume token of another member: that member serves the client through here."""
        assert self.cluster is not None, "only a cluster member's tokens name another issuer"
        self.cluster.resume_elsewhere(connection, effect, now_ms)

    def open_remote(self, send: Send) -> WriterConnection:
        """A connection whose socket is on another process (a client that resumed there
        with this process's token): ``send`` carries its frames and its close there."""
        connection = WriterConnection(self, self._conversation(), send)
        self.open.add(connection)
        writer = asyncio.create_task(connection.write())
        self._background.add(writer)
        writer.add_done_callback(self._background.discard)
        return connection

    # -- WebRTC ---------------------------------------------------------------------------

    def open_channel(self, connection: Connection, request_id: str | None, sdp: str) -> None:
        """Answer ``rtc.offer`` in the background; the reply goes to ``connection``. Each
        peer costs like a connection, so one connection opens at most
        ``rtc_peers_per_connection`` of them (``rtc.limit``)."""
        limit = self.config.limits.rtc_peers_per_connection
        opened = sum(1 for owner in self._peers.values() if owner is connection)
        if opened + self._offering.count(connection) >= limit:
            error = MatchmakerError(
                f"at most {limit} WebRTC peers per connection",
                code="rtc.limit",
                details={"limit": limit},
            )
            connection.push(error_frame(request_id, error))
            return
        self._offering.append(connection)
        task = asyncio.create_task(self._answer(connection, request_id, sdp))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _answer(self, connection: Connection, request_id: str | None, sdp: str) -> None:
        try:
            peer, answer = await answer_offer(sdp, self._serve_channel)
        except MatchmakerError as error:
            connection.push(error_frame(request_id, error))
            return
        finally:
            self._offering.remove(connection)
        self._peers[peer] = connection
        connection.push(reply_frame(request_id, ChannelAnswer(answer)))

    def _serve_channel(self, peer: Any, channel: Any) -> None:
        """A data channel opened: it is a connection of its own, speaking the protocol."""
        connection = WriterConnection(self, self._conversation(), channel_send(peer, channel))
        self.open.add(connection)
        writer = asyncio.create_task(connection.write())

        def closed() -> None:
            if connection.close_code is None:
                connection.close(closecodes.GOING_AWAY, "")
            writer.cancel()
            self._peers.pop(peer, None)
            self._close_later(peer)

        channel.on("message", connection.on_frame)
        channel.on("close", closed)

    def _close_later(self, peer: Any) -> None:
        task = asyncio.create_task(close_quietly(peer))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _conversation(self) -> Conversation:
        return Conversation(
            self.core,
            self.directory,
            require_declared=self.config.require_declared_projects,
            now_ms=_wall_clock_ms(),
            ice_servers=self._ice_servers,
        )

    def _observe_pool_event(self, recipients: Sequence[str], event: Event) -> None:
        """A match or an entry ending: forget the entries' start times, observing the wait
        of each matched member that had entered, and counting the group once.

        The core announces a group's ``session.created`` events one after another, so the
        last session counted is enough to count each group once, by the mode of its
        first member that waited (in some modes not every member entered the pool).
        """
        session = None
        if isinstance(event, SessionFormed):
            if event.pool is None:
                return  # a room joined, not a match
            pool = event.pool
            session = self.core.sessions.get(event.session_id)
        else:
            assert isinstance(event, EntryClosed)
            pool = event.pool
        now = time.monotonic()
        rated = None if session is None else quality(session)
        policy = None if rated is None else rated.policy
        for client_id in recipients:
            connection = self.clients.get(client_id)
            started = None if connection is None else connection.entered.pop(pool, None)
            if started is None or not isinstance(event, SessionFormed):
                continue
            entered_at, mode = started
            self.observer.waited(mode, now - entered_at)
            if session is not None:
                self.observer.waited_in(session.project_id, policy, now - entered_at)
            if event.session_id != self._last_match:
                self._last_match = event.session_id
                self.observer.matched(mode)
                if session is not None and rated is not None:
                    self.observer.formed(session.project_id, rated)

    # -- frame servers (picows) and ASGI ---------------------------------------------------

    def open_direct(self, peer: Peer) -> DirectConnection | None:
        """A WebSocket a frame server upgraded: its frames come to the returned
        connection, which writes to ``peer``. During shutdown it is closed at once: 3001
        when the clients are handed over, else ``None`` (the server closes it 1001)."""
        self.observer.accepted()
        if self.shutdown.is_set() and not (self.restartable or self.drained):
            return None
        self.start()
        connection = DirectConnection(self, self._conversation(), peer)
        self.open.add(connection)
        if self.shutdown.is_set():
            connection.close(*self._stop_close())
        return connection

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one WebSocket on ``/ws``."""
        if (await receive())["type"] != "websocket.connect":
            return
        refusal = upgrade_refusal(scope)
        if refusal is not None:
            await _refuse_upgrade(send, refusal)
            return
        await send({"type": "websocket.accept"})
        self.observer.accepted()
        if _log.isEnabledFor(logging.DEBUG):
            peer = scope.get("client")
            _log.debug(
                "connection opened",
                extra=fields(event="open", peer=None if peer is None else f"{peer[0]}:{peer[1]}"),
            )
        if self.shutdown.is_set():
            code, reason = self._stop_close()
            await send({"type": "websocket.close", "code": code, "reason": reason})
            return
        self.start()
        connection = WriterConnection(self, self._conversation(), send)
        self.open.add(connection)
        writer = asyncio.create_task(connection.write())
        # Unless the client closes normally (1000), losing the socket is unclean: the
        # client may resume within the grace.
        gone = closecodes.GOING_AWAY
        try:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    if message.get("code") == closecodes.NORMAL:
                        gone = closecodes.NORMAL
                    break
                text = message.get("text")
                connection.on_frame(text if text is not None else message.get("bytes") or b"")
        finally:
            if connection.close_code is None:
                connection.close(gone, "")
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer


async def _refuse_upgrade(send: Send, reason: str) -> None:
    """Answer a malformed upgrade request 400 ``request.invalid`` (ASGI's WebSocket
    denial response, which hypercorn speaks; picows answers from the data app)."""
    body = json.dumps(render_json(MatchmakerError(reason, code="request.invalid"))).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "websocket.http.response.start", "status": 400, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


def _wall_clock_ms() -> int:
    """The core's clock: epoch milliseconds (``connection.py`` reads it inline per frame)."""
    return int(time.time() * 1000)
