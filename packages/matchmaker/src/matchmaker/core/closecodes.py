"""WebSocket close codes of the data plane (``docs/protocol.md``, Close codes).

3000-3999: the client may reconnect (and, once served, resume).
4000-4999: the client must not retry as is.
"""

from __future__ import annotations

__all__ = [
    "BYE",
    "FORBIDDEN",
    "GOING_AWAY",
    "HANDSHAKE_TIMEOUT",
    "HEARTBEAT_TIMEOUT",
    "RATE_LIMITED",
    "RESUME_EXPIRED",
    "SLOW_CONSUMER",
]

GOING_AWAY = 1001  # the server is shutting down
HEARTBEAT_TIMEOUT = 3002
SLOW_CONSUMER = 3008
RATE_LIMITED = 3029
BYE = 4000
HANDSHAKE_TIMEOUT = 4001
FORBIDDEN = 4003
RESUME_EXPIRED = 4004
