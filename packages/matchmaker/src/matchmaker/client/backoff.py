"""How a reconnecting client spaces its attempts: doubling delays, capped, jittered.

Jitter spreads the clients of a restarted server over the delay instead of letting
them all knock at once; the cap keeps a long outage from leaving a game idle for long
after the server is back.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["FINAL_CLOSE_CODES", "Reconnect", "delay_s", "resumable"]

FINAL_CLOSE_CODES = frozenset({1000, 1001, 1002, 1007, 1009, 3009, 4000, 4001, 4003, 4004})
"""Close codes after which there is nothing to resume (``docs/protocol.md``, "Close codes"):
a clean leave, a server going down for good, a protocol fault, another connection took
the client, a refused or expired ``hello``. Every other end (3001 restart, 3002, 3008,
3029, a lost socket) is resumed."""


@dataclass(frozen=True, slots=True)
class Reconnect:
    """How :class:`~matchmaker.client.Client` resumes an unclean drop.

    The delay before attempt ``n`` is ``min(max_delay_ms, initial_delay_ms * 2**(n-1))``,
    jittered to 50-100 %. Attempts stop at ``max_attempts`` (``None``: no count) or when the
    server's ``resume_grace_ms`` has passed since the drop, whichever comes first.
    ``exactly_once`` numbers sends and resends the unacknowledged ones after a resume
    (the server must speak ``seq``/``ack``); ``False`` only delays sends made while away.
    """

    initial_delay_ms: int = 100
    max_delay_ms: int = 2000
    max_attempts: int | None = None
    exactly_once: bool = True


def delay_s(reconnect: Reconnect, attempt: int, rng: random.Random) -> float:
    """The wait before attempt ``attempt`` (1, 2, ...), in seconds."""
    ceiling = min(reconnect.max_delay_ms, reconnect.initial_delay_ms << min(attempt - 1, 30))
    return ceiling * (0.5 + rng.random() / 2) / 1000


def resumable(code: int | None) -> bool:
    """Whether a connection that ended with ``code`` (``None``: no close frame) is resumed."""
    return code not in FINAL_CLOSE_CODES
