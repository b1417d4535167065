"""hypercorn: the pure-Python server, always installed.

It enforces the WebSocket hard cap itself (a message, finished or not, over
``max_message`` is closed with 1009 before more of it is buffered) and, on shutdown,
stops accepting, gives open connections ``grace_s`` and only then runs the lifespan
shutdown. Its WebSocket stream is the hardened one of :mod:`.hypercorn_ws` (no
compression, a close code for every refused frame).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import cast

from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config, Sockets
from hypercorn.typing import Framework

from matchmaker.servers import hypercorn_ws
from matchmaker.servers.base import Listener

__all__ = ["serve"]


class _BoundConfig(Config):
    """A hypercorn Config serving one socket we bound ourselves (so port 0 works)."""

    def __init__(self, sock: socket.socket, grace_s: float) -> None:
        super().__init__()
        self._sock = sock
        self.graceful_timeout = grace_s
        self.accesslog = None
        # Faults the app lets escape reach the log instead of vanishing.
        self.errorlog = logging.getLogger("hypercorn.error")

    def create_sockets(self) -> Sockets:
        return Sockets(secure_sockets=[], insecure_sockets=[self._sock], quic_sockets=[])


async def serve(listener: Listener, shutdown: asyncio.Event) -> None:
    """Serve ``listener`` with hypercorn until ``shutdown`` is set."""
    hypercorn_ws.install()
    config = _BoundConfig(listener.sock, listener.grace_s)
    if listener.max_message is not None:
        config.websocket_max_message_size = listener.max_message
    # Starlette's ASGI types are looser than hypercorn's; the apps are plain ASGI 3.
    await hypercorn_serve(cast(Framework, listener.app), config, shutdown_trigger=shutdown.wait)
