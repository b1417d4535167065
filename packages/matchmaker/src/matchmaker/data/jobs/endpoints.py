"""Where sockets enter the plane: the ASGI endpoint (``/ws``) and the frame servers' factory."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

from matchmaker.asgi import Receive, Scope, Send
from matchmaker.core import closecodes
from matchmaker.core.conversation import Conversation
from matchmaker.data.connection import Connection, Hub
from matchmaker.data.direct import DirectConnection, Peer
from matchmaker.data.jobs.stopping import Stopping
from matchmaker.data.jobs.writers import Writers
from matchmaker.data.observer import DataObserver
from matchmaker.data.upgrade import upgrade_refusal
from matchmaker.errors import MatchmakerError
from matchmaker.observe.logs import fields
from mtcommon import render_json

__all__ = ["AsgiEndpoint", "FrameSockets"]

_log = logging.getLogger("matchmaker.data")


class AsgiEndpoint:
    """Serves one WebSocket on ``/ws`` per call, as an ASGI server (hypercorn) hands it."""

    def __init__(
        self,
        observer: DataObserver,
        stopping: Stopping,
        start: Callable[[], None],
        writers: Writers,
    ) -> None:
        self.observer = observer
        self.stopping = stopping
        self.start = start
        self.writers = writers

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
        if self.stopping.shutdown.is_set():
            code, reason = self.stopping.close_code()
            await send({"type": "websocket.close", "code": code, "reason": reason})
            return
        self.start()
        connection, writer = self.writers.open(send)
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
            # Waited, not awaited: a writer that crashed was logged, and closed its
            # connection, when it crashed (:class:`~.tasks.Background`).
            await asyncio.wait((writer,))


class FrameSockets:
    """Makes the connection of each WebSocket a frame server (picows) upgraded."""

    def __init__(
        self,
        hub: Hub,
        conversation: Callable[[], Conversation],
        open_connections: set[Connection],
        stopping: Stopping,
        start: Callable[[], None],
    ) -> None:
        self._hub = hub
        self._conversation = conversation
        self._open = open_connections
        self._stopping = stopping
        self._start = start

    def open_direct(self, peer: Peer) -> DirectConnection | None:
        """A WebSocket a frame server upgraded: its frames come to the returned
        connection, which writes to ``peer``. During shutdown it is closed at once: 3001
        when the clients are handed over, else ``None`` (the server closes it 1001)."""
        self._hub.observer.accepted()
        if self._stopping.refuses():
            return None
        self._start()
        connection = DirectConnection(self._hub, self._conversation(), peer)
        self._open.add(connection)
        if self._stopping.shutdown.is_set():
            connection.close(*self._stopping.close_code())
        return connection


async def _refuse_upgrade(send: Send, reason: str) -> None:
    """Answer a malformed upgrade request 400 ``request.invalid`` (ASGI's WebSocket
    denial response, which hypercorn speaks; picows answers from the data app)."""
    body = json.dumps(render_json(MatchmakerError(reason, code="request.invalid"))).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "websocket.http.response.start", "status": 400, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})
