"""The client's side of heartbeats, as a decision on the clock: when to ping and when to
give a silent connection up.

A half-open TCP connection reports nothing: only silence tells it apart from a quiet
game. After ``interval`` without a frame from the server the client pings (any frame
proves liveness), after ``timeout`` it drops the socket and resumes. While sends wait
for an ``ack`` it pings at the interval too, since a client that only sends hears nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Watchdog"]


@dataclass(frozen=True, slots=True)
class Watchdog:
    """The server's heartbeat (``hello`` reply) in seconds, watched from the client."""

    interval_s: float
    timeout_s: float

    @classmethod
    def of(cls, reply: dict[str, object]) -> Watchdog:
        """From a ``hello`` reply's ``heartbeat {interval_ms, timeout_ms}``."""
        beat = reply["heartbeat"]
        assert isinstance(beat, dict)
        return cls(beat["interval_ms"] / 1000, beat["timeout_ms"] / 1000)

    def check_every_s(self) -> float:
        """How often to look: a quarter interval, so a timeout is late by at most that."""
        return max(0.01, self.interval_s / 4)

    def due(
        self, now: float, heard: float, pinged: float, waiting: bool
    ) -> Literal["drop", "ping"] | None:
        """What to do at ``now``, given when the last frame came (``heard``), the last
        ping went (``pinged``), and whether sends wait for an ``ack``."""
        if now - heard >= self.timeout_s:
            return "drop"
        quiet = now - heard >= self.interval_s
        if (quiet or waiting) and now - pinged >= self.interval_s:
            return "ping"
        return None
