"""What every server module offers: ``serve(listener, shutdown)`` on a socket we bound."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.types import ASGIApp

__all__ = ["Listener", "Serve"]


@dataclass(frozen=True, slots=True)
class Listener:
    """One ASGI app on one bound, listening socket.

    ``max_message`` is the WebSocket hard cap the server should enforce before
    buffering a frame whole (``None``: the app serves no WebSocket). ``grace_s``
    is how long open connections get to finish once shutdown begins.
    """

    app: ASGIApp
    sock: socket.socket
    grace_s: float
    max_message: int | None = None


Serve = Callable[[Listener, asyncio.Event], Awaitable[None]]
"""Serve ``listener`` until the event is set, then stop gracefully and return.

Runs in the caller's event loop and installs no signal handlers. The
lifespan of the app starts before the first connection is served and ends
after the last one closed (or the grace ran out).
"""
