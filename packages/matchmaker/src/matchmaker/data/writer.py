"""A connection whose frames leave through an ASGI-style ``send``, drained by a task.

The ASGI server (hypercorn), WebRTC data channels and cluster relays hand the
data plane an awaitable ``send``: the connection's own writer task awaits it frame by
frame, so delivering to many members never awaits one slow peer.
"""

from __future__ import annotations

import asyncio

from matchmaker.asgi import Send
from matchmaker.core.conversation import Conversation
from matchmaker.data.connection import Connection, Hub

__all__ = ["WriterConnection"]


class WriterConnection(Connection):
    """A :class:`Connection` drained by :meth:`write`, run as the connection's task."""

    __slots__ = ("_send", "_waiter")

    def __init__(self, hub: Hub, conversation: Conversation, send: Send) -> None:
        super().__init__(hub, conversation)
        self._send = send
        # The writer's wake-up while it waits with nothing to send (``None`` otherwise):
        # one bare future per idle period, resolved by the first push or the close.
        self._waiter: asyncio.Future[None] | None = None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def write(self) -> None:
        """The writer task: drain the queue, then send the close frame if one is due.

        It waits on a bare future only when the queue is empty (not an
        ``asyncio.Event``, whose wait is a coroutine and a waiter list per wake-up):
        a relay wakes it once per burst of frames.
        """
        queue, send = self._queue, self._send
        create_future = asyncio.get_running_loop().create_future
        while True:
            if not queue and self.close_code is None:
                self._waiter = waiter = create_future()
                await waiter
            while queue:
                await send({"type": "websocket.send", "text": queue.popleft()})
            if self.close_code is not None:
                await send(
                    {
                        "type": "websocket.close",
                        "code": self.close_code,
                        "reason": self.close_reason,
                    }
                )
                return
