"""Wait for state that offers no event to await: poll a condition until a deadline.

The one polling loop of the matchmaker tests, in a blocking form (for tests that drive a
process) and an asyncio form (for tests that share the loop with a server).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")


def _attempts(within_s: float, what: str) -> Iterator[None]:
    """Yield once per attempt (at least once), then fail when ``within_s`` has passed."""
    deadline = time.monotonic() + within_s
    yield
    while time.monotonic() < deadline:
        yield
    raise AssertionError(f"{what} not reached within {within_s} s")


def wait_until(
    condition: Callable[[], T | None], within_s: float = 5.0, what: str = "condition"
) -> T:
    """Call ``condition`` until it returns something true, and return that (blocking)."""
    for _ in _attempts(within_s, what):
        if result := condition():
            return result
        time.sleep(0.02)
    raise AssertionError("unreachable")  # _attempts raises when the time is up


async def eventually(
    condition: Callable[[], T | None], within_s: float = 5.0, what: str = "condition"
) -> T:
    """Call ``condition`` until it returns something true, and return that."""
    for _ in _attempts(within_s, what):
        if result := condition():
            return result
        await asyncio.sleep(0.01)
    raise AssertionError("unreachable")  # _attempts raises when the time is up
