"""The server's ``session.send`` bucket, mirrored by the client so that it writes no
faster than the server takes.

Past its bucket the server refuses a send (``rate.limited``, no ``seq`` taken) and every
send after it until a token is back, and 50 such refusals in a row close the connection
(3029). A client that paces its writes at the ``send_rate_per_s`` / ``send_burst`` the
``hello`` reply states keeps its sends held instead, written as tokens come back, so a
burst costs time, not a disconnection. Time is an argument (``now``, in seconds).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MARGIN", "Pace"]

MARGIN = 0.9
"""The share of the server's rate and burst the client spends: the server counts tokens
when it reads a frame, and frames written evenly can be read bunched (after a backlog,
or as the network batches them); the tokens left over absorb that."""


@dataclass(slots=True)
class Pace:
    """A token bucket: ``rate`` tokens a second, at most ``burst``, full at ``at``."""

    rate: float
    burst: float
    tokens: float
    at: float

    @classmethod
    def full(cls, limits: dict[str, float], now: float) -> Pace:
        """The bucket of a new connection (the server starts it full), from ``limits``."""
        burst = float(limits["send_burst"])
        spent = max(1.0, min(burst * MARGIN, burst - 1))  # a token left over, at least
        return cls(float(limits["send_rate_per_s"]) * MARGIN, spent, spent, now)

    def take(self, now: float) -> float:
        """Spend a token now (``0.0``) or say how many seconds until one is there."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate
