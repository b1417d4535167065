"""The data plane's thin observer: metrics from what the shell already sees.

The core is not instrumented. The shell reports the effects and events the core
returned (a refusal, a close, a relayed message, a session formed by a pool)
and when it queued them; this turns those into counters and the match-latency
histogram. Each call is a dictionary lookup and a counter increment.
"""

from __future__ import annotations

from matchmaker.core import closecodes
from matchmaker.observe.metrics import Metrics

__all__ = ["DataObserver"]

# The ``reason`` label of matchmaker_disconnects_total, by WebSocket close code.
CLOSE_REASONS = {
    closecodes.GOING_AWAY: "going_away",
    closecodes.HEARTBEAT_TIMEOUT: "heartbeat_timeout",
    closecodes.SLOW_CONSUMER: "slow_consumer",
    closecodes.RATE_LIMITED: "rate_limited",
    closecodes.BYE: "bye",
    closecodes.HANDSHAKE_TIMEOUT: "handshake_timeout",
    closecodes.FORBIDDEN: "forbidden",
    closecodes.RESUME_EXPIRED: "resume_expired",
    1009: "too_large",
}


class DataObserver:
    """Records into :class:`Metrics`; the plane and its connections call it."""

    __slots__ = ("_bytes", "_disconnects", "_errors", "_messages", "metrics")

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._messages = metrics.relayed_messages
        self._bytes = metrics.relayed_bytes
        self._errors = metrics.errors
        self._disconnects = metrics.disconnects

    def accepted(self) -> None:
        self.metrics.connections.inc()

    def refused(self, code: str) -> None:
        self._errors.labels(code).inc()

    def closed(self, code: int) -> None:
        self._disconnects.labels(CLOSE_REASONS.get(code, "other")).inc()

    def relayed(self, frame_bytes: int, recipients: int) -> None:
        self._messages.inc()
        self._bytes.inc(frame_bytes * recipients)

    def matched(self, mode: str) -> None:
        """A pool formed a group (counted once per group)."""
        self.metrics.matches.labels(mode).inc()

    def waited(self, mode: str, seconds: float) -> None:
        """One member of a group waited ``seconds`` from its ``pool.enter``."""
        self.metrics.match_latency.labels(mode).observe(seconds)
