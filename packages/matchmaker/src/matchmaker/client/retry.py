"""The reconnect loop: attempts spaced by :func:`~matchmaker.client.backoff.delay_s`,
within the server's grace and the attempt cap, until one resumes or one is refused.

It knows nothing of sockets: ``attempt`` does one reconnect and says whether it
resumed (``True``), failed in a way worth retrying (``False``: refused connection, lost
socket, no answer, a credential function that failed) or raises the server's final
refusal (``resume.expired``, a revoked credential).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

from matchmaker.client.backoff import Reconnect, delay_s
from matchmaker.errors import MatchmakerError

__all__ = ["Attempt", "retry"]

Attempt = Callable[[int, float], Awaitable[bool]]
"""One reconnect: ``(attempt number, seconds left in the grace)`` → resumed?"""


async def retry(
    attempt: Attempt, reconnect: Reconnect, grace_s: float, rng: random.Random
) -> MatchmakerError | None:
    """Reconnect until resumed (``None``) or it is too late: the error to close with."""
    loop = asyncio.get_running_loop()
    until = loop.time() + grace_s
    number = 0
    while reconnect.max_attempts is None or number < reconnect.max_attempts:
        number += 1
        wait = delay_s(reconnect, number, rng)
        if loop.time() + wait >= until:
            return MatchmakerError(
                "could not resume within the server's grace",
                code="resume.expired",
                details={"attempts": number - 1},
            )
        await asyncio.sleep(wait)
        try:
            if await attempt(number, until - loop.time()):
                return None
        except MatchmakerError as refused:
            return refused
    return MatchmakerError(
        f"could not resume in {number} attempts",
        code="client.connect",
        details={"attempts": number},
    )
