"""A small asyncio client for the data plane, over the ``websockets`` library.

::

    async with await Client.connect("ws://127.0.0.1:8080/ws", project="demo") as client:
        await client.enter(policy="duel")
        created = await client.next_event("session.created")
        await client.send(created.data["session_id"], {"move": "e4"})

Replies that carry an error raise :class:`~matchmaker.errors.MatchmakerError`
with the server's code; events (pushes) are read with :meth:`Client.next_event`
or ``async for event in client.events()``.

A ``credential`` is a string or a :data:`CredentialSource`, a function called at every
``hello`` for the credential to present: a game with short-lived tokens hands over a
fresh one each time it (re)connects.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from matchmaker.errors import MatchmakerError

__all__ = ["Client", "CredentialSource", "Event"]

CredentialSource = Callable[[], str | Awaitable[str]]
"""A function (plain or async) returning the credential to present, called at every
``hello``: where a game fetches a fresh short-lived token."""


@dataclass(frozen=True, slots=True)
class Event:
    """A server push: ``type``, ``data`` and the per-client ``seq``.

    A failed fire-and-forget request (no ``id``) arrives as an event of type
    ``error`` whose ``data`` is the error object.
    """

    type: str
    data: Any
    seq: int | None = None


class _Incoming(msgspec.Struct):
    type: str
    id: str | None = None
    ok: bool = True
    data: Any = None
    error: Any = None
    seq: int | None = None


_decode = msgspec.json.Decoder(_Incoming).decode
_encode = msgspec.json.Encoder().encode


class Client:
    """One connection to the data plane; create it with :meth:`connect`."""

    def __init__(self, websocket: ClientConnection) -> None:
        self.websocket = websocket
        self.client_id: str | None = None
        self.player_id: str | None = None  # the sub of a jwt credential, from the hello reply
        self.hello_reply: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._events: asyncio.Queue[Event | None] = asyncio.Queue()
        self.resume_token: str | None = None
        self.last_seq = 0  # the seq of the last event received: what a resume starts after
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        hello: bool = True,
        project: str | None = None,
        credential: str | CredentialSource | None = None,
        attributes: dict[str, str | int | float | bool] | None = None,
        open_timeout: float = 10.0,
        resume: tuple[str, int] | None = None,
    ) -> Client:
        """Open a WebSocket to ``url`` and, unless ``hello=False``, complete the handshake
        (with ``resume=(token, last_seq)``: take back a dropped connection's client).
        ``credential`` may be a function, called for the credential at every ``hello``."""
        try:
            websocket = await connect(
                url, compression=None, open_timeout=open_timeout, max_size=None, ping_interval=None
            )
        except (OSError, WebSocketException, TimeoutError) as error:
            raise MatchmakerError(
                f"cannot connect to {url}: {error}", code="client.connect"
            ) from error
        client = cls(websocket)
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
        """The close code the server sent, once the connection is closed."""
        return self.websocket.close_code

    async def hello(
        self,
        *,
        project: str | None = None,
        credential: str | CredentialSource | None = None,
        attributes: dict[str, str | int | float | bool] | None = None,
        resume: tuple[str, int] | None = None,
    ) -> dict[str, Any]:
        """Send ``hello``; returns the reply data (``client_id``, ``policies``, ``limits``...).

        ``resume=(token, last_seq)`` resumes: the reply's ``client_id`` is the earlier one,
        and the events after ``last_seq`` follow (``resume.expired`` when it is too late).
        ``credential`` may be a function (plain or async), called now for the credential
        to present; one that raises fails the ``hello`` with ``client.credential``.
        """
        data: dict[str, Any] = {"v": 1}
        if project is not None:
            data["project"] = project
        presented = await _credential(credential)
        if presented is not None:
            data["credential"] = presented
        if attributes:
            data["attributes"] = attributes
        if resume is not None:
            data["resume"] = {"token": resume[0], "last_seq": resume[1]}
            self.last_seq = resume[1]
        reply: dict[str, Any] = await self.request("hello", data)
        self.client_id = reply["client_id"]
        self.player_id = reply.get("player_id")
        self.resume_token = reply["resume_token"]
        self.hello_reply = reply
        return reply

    async def request(self, kind: str, data: Any = None, *, wait_s: float = 10.0) -> Any:
        """Send a request and wait for its reply's ``data``; an error reply raises."""
        request_id = str(next(self._ids))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"id": request_id, "type": kind}
        if data is not None:
            message["data"] = data
        try:
            await self._send(_encode(message).decode())
            async with asyncio.timeout(wait_s):
                return await future
        finally:
            self._pending.pop(request_id, None)

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

        ``more`` are the other fields as the protocol names them: ``latencies``
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
        event (it has no reply); on a closed connection this raises ``client.closed``, as
        every call does."""
        message: dict[str, Any] = {"session_id": session_id, "data": data}
        if to is not None:
            message["to"] = to
        await self._send(_encode({"type": "session.send", "data": message}).decode())

    async def send_raw(self, frame: str | bytes) -> None:
        """Send a frame as is, text for ``str`` and binary for ``bytes`` (for tests and tools)."""
        await self._send(frame)

    async def next_event(self, kind: str | None = None, *, wait_s: float = 10.0) -> Event:
        """The next event (of type ``kind`` if given, dropping others before it)."""
        async with asyncio.timeout(wait_s):
            while True:
                event = await self._events.get()
                if event is None:
                    self._events.put_nowait(None)
                    raise self._closed()
                if kind is None or event.type == kind:
                    return event

    async def events(self) -> AsyncIterator[Event]:
        """Every event until the connection closes."""
        while True:
            event = await self._events.get()
            if event is None:
                self._events.put_nowait(None)
                return
            yield event

    async def wait_closed(self, wait_s: float = 10.0) -> int | None:
        """Wait for the server to close the connection; returns the close code."""
        async with asyncio.timeout(wait_s):
            await asyncio.shield(self._reader)
        return self.close_code

    async def close(self) -> None:
        """Leave cleanly and close: after ``hello``, send ``bye`` (the server closes with
        4000 and the client leaves its pools and sessions at once, with nothing to resume),
        then close the socket and stop the reader."""
        if self.client_id is not None and self.websocket.close_code is None:
            with contextlib.suppress(MatchmakerError, TimeoutError):
                await self._send('{"type":"bye"}')
                async with asyncio.timeout(2.0):
                    await asyncio.shield(self._reader)
        await self.websocket.close()
        await asyncio.gather(self._reader, return_exceptions=True)

    def abort(self) -> None:
        """Drop the TCP connection without a closing handshake, as a network failure
        would: the server keeps the client resumable for its grace period."""
        self.websocket.transport.abort()

    async def _send(self, frame: str | bytes) -> None:
        try:
            await self.websocket.send(frame)
        except ConnectionClosed as error:
            raise self._closed() from error

    def _closed(self) -> MatchmakerError:
        return MatchmakerError(
            "the connection is closed",
            code="client.closed",
            details={"close_code": self.close_code},
        )

    async def _read(self) -> None:
        try:
            async for frame in self.websocket:
                message = _decode(frame)
                if message.type in ("reply", "pong") and message.id is not None:
                    future = self._pending.get(message.id)
                    if future is None or future.done():
                        continue
                    if message.ok:
                        future.set_result(message.data)
                    else:
                        future.set_exception(_error(message.error))
                elif message.type == "reply":
                    self._events.put_nowait(Event("error", message.error))
                elif message.type == "ping":
                    await self.websocket.send('{"type":"pong"}')
                else:
                    if message.seq is not None:
                        self.last_seq = message.seq
                    self._events.put_nowait(Event(message.type, message.data, message.seq))
        except ConnectionClosed:
            pass
        finally:
            closed = self._closed()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(closed)
            self._events.put_nowait(None)


async def _credential(source: str | CredentialSource | None) -> str | None:
    """The credential to present now: ``source`` itself, or what calling it returns."""
    if source is None or isinstance(source, str):
        return source
    try:
        value = source()
        credential = await value if inspect.isawaitable(value) else value
    except Exception as error:
        raise MatchmakerError(
            f"the credential function failed: {type(error).__name__}: {error}",
            code="client.credential",
        ) from error
    if not isinstance(credential, str):
        raise MatchmakerError(
            f"the credential function returned {type(credential).__name__}, not a string",
            code="client.credential",
        )
    return credential


def _error(body: Any) -> MatchmakerError:
    body = body if isinstance(body, dict) else {}
    return MatchmakerError(
        str(body.get("message", "error")),
        code=str(body.get("code", "server.internal")),
        details=body.get("details"),
    )
