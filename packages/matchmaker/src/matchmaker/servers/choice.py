"""Which server runs the data plane: ``--server`` resolved, its ``serve``, its event loop.

Kept apart from :mod:`matchmaker.servers.base`, which the server modules import, so
choosing a server module (imported here on demand) makes no import cycle.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable

from matchmaker.config import SERVER_CHOICES
from matchmaker.errors import MatchmakerError
from matchmaker.servers.base import Serve

__all__ = ["event_loop_factory", "resolve_server", "serve_function"]


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
