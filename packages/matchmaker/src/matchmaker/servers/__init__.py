"""The server seam: which server runs the data plane (``--server``).

::

    base.py              Listener, the one interface every server module implements;
                         FrameApp, what an app offers a server that speaks WebSocket itself
    choice.py            --server resolved, the chosen module's serve, its event loop
    hypercorn_server.py  hypercorn (pure Python, always installed; the control plane's server)
    picows_server.py     picows (Cython WebSocket, ``matchmaker[fast]``), data plane only

``auto`` picks picows when it is installed, else hypercorn. Each module imports
its server library only when chosen, so a process that never serves picows
never loads it.
"""

from __future__ import annotations

from matchmaker.config import SERVER_CHOICES
from matchmaker.servers.base import Listener, Serve
from matchmaker.servers.choice import event_loop_factory, resolve_server, serve_function

__all__ = [
    "SERVER_CHOICES",
    "Listener",
    "Serve",
    "event_loop_factory",
    "resolve_server",
    "serve_function",
]
