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
from matchmaker.core.modes.quality import Quality
from matchmaker.observe.metrics import AD_HOC, Metrics, PolicyQuality

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

    def waited_in(self, project: str, policy: str | None, seconds: float) -> None:
        """The same wait, by ``project`` and ``policy`` (``None``: an ad-hoc pool)."""
        label = policy or AD_HOC
        self.metrics.match_wait.labels(project, label).observe(seconds)
        tally = self._quality(project, label)
        tally.waits += 1
        tally.wait_s += seconds

    def formed(self, project: str, quality: Quality) -> None:
        """A group formed with ``quality``: its spreads and team imbalance."""
        metrics = self.metrics
        label = quality.policy or AD_HOC
        tally = self._quality(project, label)
        tally.matches += 1
        for attribute, spread in quality.spreads.items():
            metrics.match_spread.labels(project, label, attribute).observe(spread)
            tally.spreads[attribute] = tally.spreads.get(attribute, 0.0) + spread
        if quality.imbalance is not None:
            metrics.team_imbalance.labels(project, label).observe(quality.imbalance)
            tally.imbalances += 1
            tally.imbalance += quality.imbalance

    def _quality(self, project: str, policy: str) -> PolicyQuality:
        found = self.metrics.quality.get((project, policy))
        if found is None:
            found = self.metrics.quality[project, policy] = PolicyQuality()
        return found
