"""The client: requests and their replies, events, sends, and (with ``reconnect=``) the
automatic resume of a dropped connection with exactly-once sends."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
from collections import deque
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Literal

import msgspec
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from matchmaker.client.backoff import Reconnect, resumable
from matchmaker.client.dial import Attributes, Dial, hello_data, open_socket
from matchmaker.client.events import DEFAULT_MAX_BUFFERED_EVENTS, Event, EventBuffer
from matchmaker.client.heartbeat import Watchdog
from matchmaker.client.retry import retry
from matchmaker.client.sends import Sends
from matchmaker.client.unacked import DEFAULT_MAX_UNACKED_BYTES, Unacked
from matchmaker.client.wire import CredentialSource, Incoming, decode, encode, error_from
from matchmaker.errors import MatchmakerError

__all__ = ["Client", "ClientState", "Event"]

ClientState = Literal["connecting", "open", "reconnecting", "closing", "closed"]
"""``connecting`` until the ``hello`` reply, ``open``, ``reconnecting`` while resuming a
drop (``reconnect=`` only), ``closing`` after ``close()``, ``closed`` for good."""

BYE_WAIT_S = 2.0
HEARTBEAT_TIMEOUT = 3002  # the code a drop noticed by the client's own heartbeat reports


class Client:
    """One client of the data plane; create it with :meth:`connect`."""

    def __init__(self, websocket: ClientConnection, events: EventBuffer | None = None) -> None:
        self.websocket = websocket
        self.client_id: str | None = None
        self.player_id: str | None = None  # the sub of a jwt credential, from the hello reply
        self.hello_reply: dict[str, Any] = {}
        self.resume_token: str | None = None
        # the seq of the last event received, held for the application or dropped by its
        # full buffer (matchmaker.client.events): what a resume starts after
        self.last_seq = 0
        self.state: ClientState = "connecting"
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._events = EventBuffer() if events is None else events
        self._changed = asyncio.Event()  # set (and replaced) at every change of state
        self._finished = asyncio.Event()
        self._dial: Dial | None = None  # set with reconnect=: how to connect again
        self._reconnect: Reconnect | None = None
        self._sends: Sends | None = None  # set with exactly-once sends
        self._rng = random.Random()
        self._heard = 0.0  # loop time of the last frame from the server
        self._local_code: int | None = None  # why the client dropped the socket itself
        self._close_error: MatchmakerError | None = None  # why it closed for good
        self._tasks: set[asyncio.Task[None]] = set()  # the resume loop and heartbeat
        # events a resume's socket brought before its welcome: only the newest of them can
        # outlast the buffer they go to, so it keeps no more
        self._replayed: deque[Event] = deque(maxlen=self._events.most)
        self._reader = self._start_reading(websocket)

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        hello: bool = True,
        project: str | None = None,
        credential: str | CredentialSource | None = None,
        attributes: Attributes | None = None,
        open_timeout: float = 10.0,
        resume: tuple[str, int] | None = None,
        reconnect: bool | Reconnect = False,
        max_unacked_bytes: int = DEFAULT_MAX_UNACKED_BYTES,
        max_buffered_events: int = DEFAULT_MAX_BUFFERED_EVENTS,
    ) -> Client:
        """Open a WebSocket to ``url`` and, unless ``hello=False``, complete the handshake
        (with ``resume=(token, last_seq)``: take back a dropped connection's client).
        ``credential`` may be a function, called for the credential at every ``hello``.
        ``reconnect=True`` (or a :class:`Reconnect`) resumes unclean drops by itself and
        sends exactly once, holding at most ``max_unacked_bytes`` of unacknowledged sends.

        At most ``max_buffered_events`` events (a positive ``int``, else ``ValueError``
        before any socket opens) wait for :meth:`next_event` / :meth:`events`; past it the
        oldest unread one is dropped, as the JavaScript client's ``maxBufferedEvents``. A
        dropped event counts as received (``last_seq``): a resume does not bring it back
        (:mod:`matchmaker.client.events` says why)."""
        events = EventBuffer(max_buffered_events)
        client = cls(await open_socket(url, open_timeout), events)
        if reconnect is not False:
            chosen = Reconnect() if reconnect is True else reconnect
            client._reconnect = chosen
            client._dial = Dial(url, project, credential, attributes, open_timeout)
            if chosen.exactly_once:
                unacked = Unacked(max_unacked_bytes)
                client._sends = Sends(unacked, client._written, client._is_open, client._spawn)
        if hello:
            try:
                await client.hello(
                    project=project, credential=credential, attributes=attributes, resume=resume
                )
            except BaseException:
                await client.close()
                raise
        return client

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def close_code(self) -> int | None:
        """The close code the server sent on the last connection, once it closed."""
        return self._local_code or self.websocket.close_code

    @property
    def unacked_bytes(self) -> int:
        """Bytes of sends held until the server acknowledges them (exactly-once sends);
        a send past ``max_unacked_bytes`` raises ``client.backpressure``."""
        return self._sends.unacked.bytes if self._sends is not None else 0

    async def hello(
        self,
        *,
        project: str | None = None,
        credential: str | CredentialSource | None = None,
        attributes: Attributes | None = None,
        resume: tuple[str, int] | None = None,
    ) -> dict[str, Any]:
        """Send ``hello``; returns the reply data (``client_id``, ``policies``, ``limits``...).

        ``resume=(token, last_seq)`` resumes: the reply's ``client_id`` is the earlier one,
        and the events after ``last_seq`` follow (``resume.expired`` when it is too late).
        ``credential`` may be a function (plain or async), called now for the credential
        to present; one that raises fails the ``hello`` with ``client.credential``.
        """
        data = await hello_data(project, credential, attributes, resume)
        if resume is not None:
            self.last_seq = resume[1]
        reply: dict[str, Any] = await self.request("hello", data)
        self._welcome(reply)
        return reply

    async def request(self, kind: str, data: Any = None, *, wait_s: float = 10.0) -> Any:
        """Send a request and wait for its reply's ``data``; an error reply raises. While
        reconnecting it waits for the connection first (within ``wait_s``); a reply lost
        with a dropped connection raises ``client.interrupted``."""
        async with asyncio.timeout(wait_s):
            await self._until_open()
            return await self._exchange(kind, data)

    async def enter(
        self,
        policy: str | None = None,
        *,
        pool: str | None = None,
        create: bool = False,
        mode: str | None = None,
        group_size: int | None = None,
        filter: dict[str, Any] | None = None,
        ttl_ms: int | None = None,
        public: dict[str, Any] | None = None,
        min_group_size: int | None = None,
        fill_timeout_ms: int | None = None,
        **more: Any,
    ) -> dict[str, Any]:
        """``pool.enter``; returns ``{pool, entry_id, mode, groupSize, expires_at}``.

        ``more`` are the other fields as the protocol names them: ``party_id`` (the
        leader only: the whole party enters as one entry), ``latencies``
        (``{region: ms}``, measured by the game), and for an ad-hoc pool ``teams``
        (``[{"name", "size"}]``), ``balance`` and ``regions``. The ``session.created``
        of such a pool carries ``teams`` (``{name: [client_id]}``) and ``region``.
        """
        fields = {
            **more,
            "policy": policy,
            "pool": pool,
            "create": create or None,
            "mode": mode,
            "groupSize": group_size,
            "minGroupSize": min_group_size,
            "fillTimeoutMs": fill_timeout_ms,
            "filter": filter,
            "ttl_ms": ttl_ms,
            "public": public,
        }
        reply: dict[str, Any] = await self.request(
            "pool.enter", {k: v for k, v in fields.items() if v is not None}
        )
        return reply

    async def party_create(self) -> dict[str, Any]:
        """``party.create``: a party led by this client; returns ``{party_id, code, leader,
        members}`` (read ``code`` out to the friends who join)."""
        reply: dict[str, Any] = await self.request("party.create")
        return reply

    async def party_join(self, code: str) -> dict[str, Any]:
        """``party.join`` by code; returns ``{party_id, code, leader, members}``."""
        reply: dict[str, Any] = await self.request("party.join", {"code": code})
        return reply

    async def party_leave(self, party_id: str) -> None:
        """``party.leave``."""
        await self.request("party.leave", {"party_id": party_id})

    async def leave(self, pool: str) -> dict[str, Any]:
        """``pool.leave``."""
        reply: dict[str, Any] = await self.request("pool.leave", {"pool": pool})
        return reply

    async def join(
        self, session: str, *, create: bool = False, public: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """``session.join`` an ad-hoc room; returns ``{session_id, created}``."""
        data: dict[str, Any] = {"session": session, "create": create}
        if public is not None:
            data["public"] = public
        reply: dict[str, Any] = await self.request("session.join", data)
        return reply

    async def backfill(self, session_id: str, seats: int) -> dict[str, Any]:
        """``session.backfill``: fill ``seats`` open places of a session formed by a pool
        (``0`` cancels); returns ``{session_id, filled: [client_id], pending}``."""
        data = {"session_id": session_id, "seats": seats}
        reply: dict[str, Any] = await self.request("session.backfill", data)
        return reply

    async def leave_session(self, session_id: str) -> None:
        """``session.leave``."""
        await self.request("session.leave", {"session_id": session_id})

    async def send(self, session_id: str, data: Any, *, to: list[str] | None = None) -> None:
        """``session.send``, fire and forget: the server's refusal arrives as an ``error``
        event (it has no reply); on a closed client this raises ``client.closed``.

        With exactly-once sends (``reconnect=``) the message is numbered and held until
        acknowledged, written now when open and again after a resume if unacknowledged;
        past ``max_unacked_bytes`` held it raises ``client.backpressure`` and is not sent.
        """
        message: dict[str, Any] = {"session_id": session_id, "data": data}
        if to is not None:
            message["to"] = to
        if self._sends is None:
            await self._until_open()
            await self._write(encode({"type": "session.send", "data": message}))
            return
        if self.state in ("closing", "closed"):
            raise self._closed()
        await self._sends.send(message)

    async def send_raw(self, frame: str | bytes) -> None:
        """Send a frame as is, text for ``str`` and binary for ``bytes`` (for tests and tools)."""
        await self._write(frame)

    async def next_event(self, kind: str | None = None, *, wait_s: float = 10.0) -> Event:
        """The next event (of type ``kind`` if given, dropping others before it)."""
        async with asyncio.timeout(wait_s):
            while True:
                event = await self._events.take()
                if event is None:
                    raise self._closed()
                if kind is None or event.type == kind:
                    return event

    async def events(self) -> AsyncIterator[Event]:
        """Every event until the client is closed (but those a full buffer dropped:
        ``max_buffered_events``)."""
        while (event := await self._events.take()) is not None:
            yield event

    async def wait_closed(self, wait_s: float = 10.0) -> int | None:
        """Wait for the client to close (the server's close, or a resume given up on);
        returns the close code."""
        async with asyncio.timeout(wait_s):
            await self._finished.wait()
        return self.close_code

    async def close(self) -> None:
        """Leave cleanly and close: after ``hello``, send ``bye`` (the server closes with
        4000 and the client leaves its pools and sessions at once, with nothing to resume),
        then close the socket and stop the reader. Sends not written yet are dropped."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if self.state == "open" and self.client_id is not None:
            self._set_state("closing")
            with contextlib.suppress(MatchmakerError, TimeoutError):
                await self._write('{"type":"bye"}')
                async with asyncio.timeout(BYE_WAIT_S):
                    await asyncio.shield(self._reader)
        if self.state != "closed":
            self._set_state("closing")
        await self.websocket.close()
        await asyncio.gather(self._reader, *tasks, return_exceptions=True)
        self._finish(None)

    def abort(self) -> None:
        """Drop the TCP connection without a closing handshake, as a network failure
        would: the server keeps the client resumable for its grace period (and a client
        with ``reconnect=`` resumes)."""
        self.websocket.transport.abort()

    # -- the connection -----------------------------------------------------------------

    def _start_reading(self, websocket: ClientConnection) -> asyncio.Task[None]:
        self._heard = asyncio.get_running_loop().time()
        return asyncio.create_task(self._read(websocket))

    async def _read(self, websocket: ClientConnection) -> None:
        try:
            async for frame in websocket:
                self._heard = asyncio.get_running_loop().time()
                try:
                    message = decode(frame)
                except msgspec.MsgspecError:
                    continue  # not a frame of this protocol: nothing to act on
                await self._receive(message)
        except ConnectionClosed:
            pass
        finally:
            self._dropped(websocket)

    async def _receive(self, message: Incoming) -> None:
        if message.ack is not None and self._sends is not None:
            self._sends.acknowledged(message.ack)
        if message.type in ("reply", "pong") and message.id is not None:
            future = self._pending.get(message.id)
            if future is not None and not future.done():
                if message.ok:
                    future.set_result(message.data)
                else:
                    future.set_exception(error_from(message.error))
        elif message.type == "reply":
            if self._sends is None or not self._sends.refused(message.error):
                self._events.put(Event("error", message.error))
        elif message.type == "ping":
            await self._write('{"type":"pong"}', quiet=True)
        elif message.type != "pong":
            if message.seq is not None:
                if message.seq <= self.last_seq:
                    return  # replayed by a resume, delivered already
                self.last_seq = message.seq
            event = Event(message.type, message.data, message.seq)
            if self.state == "reconnecting":
                self._replayed.append(event)  # after connection.back, which is not out yet
            else:
                self._events.put(event)

    def _welcome(self, reply: dict[str, Any]) -> None:
        """The ``hello`` reply: who this client is and, for a resume, which sends the
        server took (``ack``); the rest are written again on this connection."""
        self.client_id = reply["client_id"]
        self.player_id = reply.get("player_id")
        self.resume_token = reply["resume_token"]
        self.hello_reply = reply
        self._local_code = None
        if self._sends is not None:
            self._sends.welcome(reply)
        self._set_state("open")
        if self._reconnect is not None:
            self._spawn(self._beat(self.websocket, Watchdog.of(reply)))

    def _dropped(self, websocket: ClientConnection) -> None:
        """A socket ended: resume it, or close the client for good."""
        if websocket is not self.websocket or self.state == "closed":
            return
        code = self.close_code
        if self.state == "reconnecting":  # a resume attempt's socket: the loop tries again
            self._fail_pending(self._interrupted(code))
            return
        if self._reconnect is None or self.state != "open" or not resumable(code):
            self._finish(_close_reason(code) if self.state == "open" else None)
            return
        self._fail_pending(self._interrupted(code))
        self._set_state("reconnecting")
        grace_ms = self.hello_reply["limits"]["resume_grace_ms"]
        reason = websocket.close_reason or ""
        away = {"code": code, "reason": reason, "grace_ms": grace_ms}
        self._events.put(Event("connection.away", away))
        self._spawn(self._resume(self._reconnect, grace_ms / 1000))

    async def _resume(self, reconnect: Reconnect, grace_s: float) -> None:
        refused = await retry(self._attempt, reconnect, grace_s, self._rng)
        if refused is not None and self.state == "reconnecting":
            await self.websocket.close()  # after the server's own close: its code is kept
            self._finish(refused)

    async def _attempt(self, number: int, left_s: float) -> bool:
        """One reconnect: a fresh credential, a socket, a resuming ``hello``."""
        dial = self._dial
        assert dial is not None
        assert self.resume_token is not None
        resume = (self.resume_token, self.last_seq)
        try:
            data = await hello_data(dial.project, dial.credential, dial.attributes, resume)
            websocket = await open_socket(dial.url, min(dial.open_timeout, left_s))
        except MatchmakerError:
            return False  # unreachable, or the token service is: the next attempt asks again
        self.websocket = websocket
        self._local_code = None
        self._reader = self._start_reading(websocket)
        try:
            async with asyncio.timeout(left_s):
                reply = await self._exchange("hello", data)
        except TimeoutError:
            websocket.transport.abort()
            return False
        except MatchmakerError as error:
            if error.code == "client.interrupted":
                return False
            raise
        self._welcome(reply)
        resent = len(self._sends.unacked.held) if self._sends is not None else 0
        back = {"client_id": self.client_id, "attempts": number, "resent": resent}
        self._events.put(Event("connection.back", back))
        for event in self._replayed:
            self._events.put(event)
        self._replayed.clear()
        if self._reader.done():  # lost again before this task ran: resume that drop too
            self._dropped(websocket)
        elif self._sends is not None:
            await self._sends.flush()
        return True

    async def _beat(self, websocket: ClientConnection, watchdog: Watchdog) -> None:
        """Ping a quiet connection, drop a silent one (:mod:`.heartbeat`), while it is
        this client's open connection."""
        loop = asyncio.get_running_loop()
        pinged = loop.time()
        while websocket is self.websocket and self.state == "open":
            await asyncio.sleep(watchdog.check_every_s())
            now = loop.time()
            waiting = self._sends is not None and self._sends.waiting()
            due = watchdog.due(now, self._heard, pinged, waiting)
            if due == "drop":
                self._local_code = HEARTBEAT_TIMEOUT
                websocket.transport.abort()
                return
            if due == "ping":
                pinged = now
                await self._write('{"type":"ping"}', quiet=True)

    # -- plumbing -----------------------------------------------------------------------

    async def _exchange(self, kind: str, data: Any) -> Any:
        request_id = str(next(self._ids))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"id": request_id, "type": kind}
        if data is not None:
            message["data"] = data
        try:
            await self._write(encode(message), quiet=self._reconnect is not None)
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def _written(self, frame: str) -> bool:
        """Write a frame; ``False`` when the socket is gone (the reader reports the drop)."""
        try:
            await self.websocket.send(frame)
        except ConnectionClosed:
            return False
        return True

    def _is_open(self) -> bool:
        return self.state == "open"

    async def _write(self, frame: str | bytes, *, quiet: bool = False) -> None:
        """Write a frame; on a dropped socket raise ``client.closed``, or with ``quiet``
        leave it to the reader, which reports the drop to whatever waits."""
        try:
            await self.websocket.send(frame)
        except ConnectionClosed as error:
            if not quiet:
                raise self._closed() from error

    async def _until_open(self) -> None:
        """Wait out a reconnect; raise ``client.closed`` on a closing or closed client."""
        while self.state == "reconnecting":
            await self._changed.wait()
        if self.state in ("closing", "closed"):
            raise self._closed()

    def _set_state(self, state: ClientState) -> None:
        self.state = state
        self._changed.set()
        self._changed = asyncio.Event()

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _finish(self, error: MatchmakerError | None) -> None:
        """Closed for good: pending requests fail, ``connection.closed`` ends the events."""
        if self._finished.is_set():
            return
        self._close_error = error
        self._set_state("closed")
        self._fail_pending(self._closed())
        if self._sends is not None and error is not None:
            self._report_lost(self._sends)
        if self._reconnect is not None:
            why = error and {"code": error.code, "message": error.message}
            self._events.put(Event("connection.closed", {"code": self.close_code, "error": why}))
        self._events.end()
        self._finished.set()

    def _report_lost(self, sends: Sends) -> None:
        """Closed for good with sends held: each an ``error`` event ``client.closed`` with
        its ``seq`` (it may or may not have arrived)."""
        closed = self._closed()
        for held in sends.unacked.held:
            details = {**(closed.details or {}), "seq": held.seq}
            body = {"code": closed.code, "message": closed.message, "details": details}
            self._events.put(Event("error", body))

    def _fail_pending(self, error: MatchmakerError) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)

    def _interrupted(self, code: int | None) -> MatchmakerError:
        return MatchmakerError(
            f"the connection dropped ({code}) before the reply",
            code="client.interrupted",
            details={"close_code": code},
        )

    def _closed(self) -> MatchmakerError:
        details: dict[str, Any] = {"close_code": self.close_code}
        cause = self._close_error
        if cause is not None and cause.code != "client.closed":
            details["reason"] = cause.code
        return MatchmakerError("the connection is closed", code="client.closed", details=details)


def _close_reason(code: int | None) -> MatchmakerError | None:
    """Why the server closed for good, as a coded error (``None`` for a clean ``bye``)."""
    if code in (1000, 4000):
        return None
    return MatchmakerError(
        f"the server closed the connection ({code})",
        code="client.closed",
        details={"close_code": code},
    )
