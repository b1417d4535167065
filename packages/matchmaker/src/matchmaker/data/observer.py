"""The data plane's thin observer: metrics from what the shell already sees.

The core is not instrumented. The shell reports the effects and events the core
returned (a refusal, a close, a relayed message, a session formed by a pool)
and when it queued them; this adds them to the tallies of
:class:`~matchmaker.observe.metrics.Metrics`. Each call is an integer or
dictionary increment (``tools/bench/matchmaker/observe.py`` measures them).
"""

from __future__ import annotations

from typing import Any

from matchmaker.core import closecodes
from matchmaker.observe.metrics import Metrics

__all__ = ["DataObserver"]

# The ``reason`` label of matchmaker_disconnects_total, by WebSocket close code.
CLOSE_REASONS = {
    closecodes.NORMAL: "normal",
    closecodes.GOING_AWAY: "going_away",
    closecodes.REPLACED: "replaced",
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

    __slots__ = ("_errors", "_latency", "metrics")

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._errors = metrics.errors
        self._latency: dict[str, Any] = {}  # mode -> the histogram's child (labels() is slow)

    def accepted(self) -> None:
        self.metrics.connections += 1

    def refused(self, code: str) -> None:
        self._errors[code] += 1

    def closed(self, code: int) -> None:
        self.metrics.disconnects[CLOSE_REASONS.get(code, "other")] += 1

    def relayed(self, frame_bytes: int, recipients: int) -> None:
        metrics = self.metrics
        metrics.relayed_messages += 1
        metrics.relayed_bytes += frame_bytes * recipients

    def matched(self, mode: str) -> None:
        """A pool formed a group (counted once per group)."""
        self.metrics.matches[mode] += 1

    def waited(self, mode: str, seconds: float) -> None:
        """One member of a group waited ``seconds`` from its ``pool.enter``."""
        child = self._latency.get(mode)
        if child is None:
            child = self._latency[mode] = self.metrics.match_latency.labels(mode)
        child.observe(seconds)
