"""The server seam: which ASGI server runs the data plane (``--server``).

::

    listener.py          Listener and Serve: the one interface every server module implements
    base.py              --server resolved (auto, hypercorn, granian) and its serve function
    hypercorn_server.py  hypercorn (pure Python, always installed; the control plane's server)
    granian_server.py    granian's embedded server (Rust, ``matchmaker[fast]``), data plane only

``auto`` picks granian when it is installed, else hypercorn. Each module
imports its server library only when chosen, so a process that never serves
granian never loads it.
"""

from __future__ import annotations

from matchmaker.servers.base import (
    SERVER_CHOICES,
    event_loop_factory,
    resolve_server,
    serve_function,
)
from matchmaker.servers.listener import Listener, Serve

__all__ = [
    "SERVER_CHOICES",
    "Listener",
    "Serve",
    "event_loop_factory",
    "resolve_server",
    "serve_function",
]
