"""Per-connection token buckets for inbound frames."""

from __future__ import annotations

__all__ = ["TokenBucket"]


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` banked; one token per frame.

    Time is the core's: epoch milliseconds, passed in. A wall clock set back adds no
    tokens but takes none either, and refilling goes on from the new time: the step
    cannot lock a client out until the clock catches up.
    """

    __slots__ = ("burst", "rate_per_ms", "stamp_ms", "tokens")

    def __init__(self, rate: float, burst: int, now_ms: int) -> None:
        self.rate_per_ms = rate / 1000
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp_ms = now_ms

    def take(self, now_ms: int) -> float:
        """Spend a token: ``0.0`` if there was one, else the milliseconds until there is."""
        elapsed = now_ms - self.stamp_ms
        if elapsed:  # (frames of one millisecond: nothing to refill, on the hot path)
            self.stamp_ms = now_ms
            if elapsed > 0:
                tokens = self.tokens + elapsed * self.rate_per_ms
                self.tokens = tokens if tokens < self.burst else self.burst
        tokens = self.tokens
        if tokens >= 1.0:
            self.tokens = tokens - 1.0
            return 0.0
        return (1.0 - tokens) / self.rate_per_ms
