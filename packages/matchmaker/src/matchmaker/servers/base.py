"""What every server module offers: ``serve(listener, shutdown)`` on a socket we bound,
and what an app offers a server that speaks WebSocket itself (:class:`FrameApp`)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from starlette.types import ASGIApp

__all__ = ["FrameApp", "HTTPAnswer", "Listener", "Serve", "SocketHandler", "SocketPeer"]


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


HTTPAnswer = tuple[int, dict[str, str], bytes]
"""A whole HTTP response (status, headers, body), computed without awaiting."""


class SocketPeer(Protocol):
    """One upgraded WebSocket as a frame server (picows) hands it to the app."""

    def send(self, text: str) -> None:
        """Write one text frame now (the transport buffers what the socket cannot take)."""
        ...

    def close(self, code: int, reason: str) -> None:
        """Send the close frame; the server ends the TCP connection after the reply."""
        ...


class SocketHandler(Protocol):
    """What the app does with one WebSocket's frames, called synchronously by the server."""

    def on_frame(self, frame: str | bytes) -> None:
        """A whole message (fragments joined, text checked to be UTF-8)."""
        ...

    def pause(self) -> None:
        """The transport's buffer is full: queue outbound frames until :meth:`resume`."""
        ...

    def resume(self) -> None:
        """The transport takes data again."""
        ...

    def on_closed(self, code: int) -> None:
        """The socket ended: ``code`` is the client's close code, 1001 without one."""
        ...


@runtime_checkable
class FrameApp(Protocol):
    """An app a WebSocket server can run without ASGI: frames in and out synchronously.

    A server that speaks WebSocket itself (picows) asks :meth:`answer_get` about every
    GET and upgrades those it answers ``None`` to :meth:`open_socket`; the lifespan is
    :meth:`startup` and :meth:`shutdown`. The app stays an ASGI app too (hypercorn runs
    that).
    """

    def answer_get(self, target: str, headers: list[tuple[bytes, bytes]]) -> HTTPAnswer | None:
        """The response to ``GET target`` (headers' names lower case), or ``None`` to
        upgrade it to a WebSocket."""
        ...

    def open_socket(self, peer: SocketPeer) -> SocketHandler | None:
        """The handler of a new WebSocket (``None``: refused, the server closes 1001)."""
        ...

    async def startup(self) -> None: ...

    async def shutdown(self) -> None: ...
