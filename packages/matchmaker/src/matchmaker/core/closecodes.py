"""WebSocket close codes of the data plane (``docs/protocol.md``, Close codes).

3000-3999 (and 1001): the client may reconnect and resume within the grace.
4000-4999: the client must not retry as is.
"""

from __future__ import annotations

__all__ = [
    "BYE",
    "FORBIDDEN",
    "GOING_AWAY",
    "HANDSHAKE_TIMEOUT",
    "HEARTBEAT_TIMEOUT",
    "NORMAL",
    "RATE_LIMITED",
    "REPLACED",
    "RESTARTING",
    "RESUME_EXPIRED",
    "SLOW_CONSUMER",
]

NORMAL = 1000  # the client closed its socket normally: a clean leave, nothing to resume
GOING_AWAY = 1001  # the server is shutting down, or the socket was lost
RESTARTING = 3001  # the server stops for a restart and keeps its clients: resume there
HEARTBEAT_TIMEOUT = 3002
SLOW_CONSUMER = 3008
REPLACED = 3009  # another connection resumed this one's client
RATE_LIMITED = 3029
BYE = 4000
HANDSHAKE_TIMEOUT = 4001
FORBIDDEN = 4003
RESUME_EXPIRED = 4004
