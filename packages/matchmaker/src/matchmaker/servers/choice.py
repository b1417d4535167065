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


# The servers installed only with an extra, and the extra that has each.
_OPTIONAL = {"picows": "fast"}


def resolve_server(name: str) -> str:
    """``auto`` becomes ``picows`` when it is importable, else ``hypercorn``.

    Asking for a server that is not installed is a coded error
    (``server.unavailable``), not a silent fallback.
    """
    if name not in SERVER_CHOICES:
        raise MatchmakerError(
            f"unknown server {name!r}: choose one of {', '.join(SERVER_CHOICES)}",
            code="server.unknown",
        )
    if name == "auto":
        return next((server for server in _OPTIONAL if _installed(server)), "hypercorn")
    if name in _OPTIONAL and not _installed(name):
        raise MatchmakerError(
            f"--server {name} needs {name}: pip install './packages/matchmaker[{_OPTIONAL[name]}]'",
            code="server.unavailable",
        )
    return name


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def serve_function(name: str) -> Serve:
    """The ``serve`` of a resolved server name (imports that server's module now)."""
    if name == "picows":
        from matchmaker.servers.picows_server import serve
    else:
        from matchmaker.servers.hypercorn_server import serve
    return serve


def event_loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop for a picows process when uvloop is installed, else ``None``
    (asyncio's).

    picows runs every frame's callback on the loop's transport, so a faster loop pays;
    hypercorn keeps the standard loop, the one its tests run on.
    """
    if resolve_server(name) == "hypercorn" or not _installed("uvloop"):
        return None
    import uvloop

    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory
