"""What every server module offers: ``serve(listener, shutdown)`` on a socket we bound."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.types import ASGIApp

from matchmaker.errors import MatchmakerError

__all__ = [
    "SERVER_CHOICES",
    "Listener",
    "Serve",
    "event_loop_factory",
    "resolve_server",
    "serve_function",
]

SERVER_CHOICES = ("auto", "hypercorn", "granian")


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


def resolve_server(name: str) -> str:
    """``auto`` becomes ``granian`` when it is importable, else ``hypercorn``.

    Asking for granian without it installed is a coded error
    (``server.unavailable``), not a silent fallback.
    """
    if name not in SERVER_CHOICES:
        raise MatchmakerError(
            f"unknown server {name!r}: choose one of {', '.join(SERVER_CHOICES)}",
            code="server.unknown",
        )
    installed = importlib.util.find_spec("granian") is not None
    if name == "auto":
        return "granian" if installed else "hypercorn"
    if name == "granian" and not installed:
        raise MatchmakerError(
            "--server granian needs granian: pip install './packages/matchmaker[fast]'",
            code="server.unavailable",
        )
    return name


def serve_function(name: str) -> Serve:
    """The ``serve`` of a resolved server name (imports that server's module now)."""
    if name == "granian":
        from matchmaker.servers.granian_server import serve
    else:
        from matchmaker.servers.hypercorn_server import serve
    return serve


def event_loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop for a granian process when uvloop is installed, else ``None`` (asyncio's).

    granian schedules every ASGI call on the loop, so a faster loop pays under
    it; hypercorn keeps the standard loop, the one its tests run on.
    """
    if resolve_server(name) != "granian" or importlib.util.find_spec("uvloop") is None:
        return None
    import uvloop

    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory
