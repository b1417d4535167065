"""Per-connection token buckets for inbound frames."""

from __future__ import annotations

__all__ = ["TokenBucket"]


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` banked; one token per frame."""

    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp = now

    def take(self, now: float) -> float:
        """Spend a token: ``0.0`` if there was one, else the seconds until there is."""
        tokens = self.tokens + (now - self.stamp) * self.rate
        self.tokens = tokens if tokens < self.burst else self.burst
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate
