"""Opening a :class:`WriterConnection` with its writer task: the ASGI endpoint, the WebRTC
data channels and the cluster's hand-off all open one the same way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from matchmaker.asgi import Send
from matchmaker.core import closecodes
from matchmaker.core.conversation import Conversation
from matchmaker.data.connection import Connection, Hub
from matchmaker.data.jobs.tasks import Background
from matchmaker.data.writer import WriterConnection

__all__ = ["Writers"]


class Writers:
    """Opens connections drained by a writer task, each in the plane's ``open`` set."""

    def __init__(
        self,
        hub: Hub,
        conversation: Callable[[], Conversation],
        open_connections: set[Connection],
        background: Background,
    ) -> None:
        self._hub = hub
        self._conversation = conversation
        self._open = open_connections
        self._background = background

    def open(self, send: Send) -> tuple[WriterConnection, asyncio.Task[None]]:
        """A new connection whose frames leave through ``send``, and its writer task.

        A writer that crashes (``send`` raised) is logged and its connection closed 1001,
        as a lost socket: the client leaves or may resume, and its socket is told.
        """
        connection = WriterConnection(self._hub, self._conversation(), send)
        self._open.add(connection)

        def crashed(error: BaseException) -> None:
            if connection.close_code is None:
                connection.close(closecodes.GOING_AWAY, "")
            self._background.spawn(_send_close(send), "writer.close")

        writer = self._background.spawn(connection.write(), "writer", crashed)
        return connection, writer


async def _send_close(send: Send) -> None:
    """Tell the socket of a crashed writer that it is closed (1001, as a lost socket)."""
    await send({"type": "websocket.close", "code": closecodes.GOING_AWAY, "reason": ""})
