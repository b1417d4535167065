"""Third-party loggers that echo what they carry, held at warning.

``--log-level debug`` is for matchmaker's own lines. Some libraries under it
write their payloads at debug or info: aiosqlite logs every call with its
arguments (an ``INSERT`` with a Project's body, secrets included), websockets
and wsproto/h11/h2/hpack log frames and headers (a ``hello`` with its
credential, an ``Authorization`` header), asyncpg and redis log statements and
commands, aiortc and aioice log SDP and ICE credentials. None of them can tell
a secret from other text, so they are held at warning, where they report
failures and not data. Their warnings and errors still reach the log.
"""

from __future__ import annotations

import logging

__all__ = ["CHATTY_LOGGERS", "quiet_third_party_loggers"]

CHATTY_LOGGERS = (
    "aiosqlite",
    "asyncpg",
    "websockets",
    "wsproto",
    "h11",
    "h2",
    "hpack",
    "redis",
    "aiortc",
    "aioice",
    "hypercorn.access",
)
"""Loggers that may write statements, frames, headers or SDP below warning."""


def quiet_third_party_loggers() -> None:
    """Hold every logger of :data:`CHATTY_LOGGERS` at warning or above."""
    for name in CHATTY_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(max(logger.level, logging.WARNING))
