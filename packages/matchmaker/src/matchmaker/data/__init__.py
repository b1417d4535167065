"""The data plane: WebSocket protocol, Project resolution, pools and sessions.

::

    app.py          create_data_app: /ws and /healthz
    plane.py        DataPlane: the core, the live connections, the timers
    connection.py   one WebSocket: frames in, core calls, bounded queue out
    protocol.py     the wire Structs (docs/protocol.md)
    runtime.py      tune_gc, raise_open_file_limit: process-wide settings for the launcher
    core/           the sans-I/O matching core
"""

from __future__ import annotations

from matchmaker.data.app import DataApp, create_data_app, websocket_max_message_size
from matchmaker.data.plane import DataPlane
from matchmaker.data.runtime import raise_open_file_limit, tune_gc

__all__ = [
    "DataApp",
    "DataPlane",
    "create_data_app",
    "raise_open_file_limit",
    "tune_gc",
    "websocket_max_message_size",
]
