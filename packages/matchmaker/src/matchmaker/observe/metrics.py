"""The process's Prometheus metrics, one registry per process (tests run many in one).

The data plane counts into plain integers and :class:`collections.Counter`
tallies (an increment costs tens of nanoseconds, against microseconds for a
``prometheus_client.Counter`` with labels, and a relay is counted per message);
a collector turns them into metric families at scrape time, and
``prometheus_client`` writes the exposition. The gauges are read from the live
state at scrape time through a :data:`~matchmaker.observe.live.LiveSnapshot`,
so they can never drift from what is really connected. Everything runs on the
event loop's thread, the scrape included, so the tallies need no lock.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from matchmaker.observe.live import LiveSnapshot

__all__ = ["AD_HOC", "CONTENT_TYPE", "Metrics", "PolicyQuality"]

CONTENT_TYPE = CONTENT_TYPE_LATEST

# Seconds from pool.enter to the match: a quick pair on loopback up to a long wait.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600)
# A distance in an attribute's own unit (a rating, a level): from equal to far apart.
SPREAD_BUCKETS = (0, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
AD_HOC = "(ad-hoc)"
"""The ``policy`` label of a group formed in an ad-hoc pool (its name is the client's:
one label value for them all keeps the series bounded)."""


@dataclass(slots=True)
class PolicyQuality:
    """The running sums of one policy's match quality, for the live view's means."""

    matches: int = 0
    waits: int = 0
    wait_s: float = 0.0
    spreads: dict[str, float] = field(default_factory=dict)  # attribute -> summed spread
    imbalances: int = 0
    imbalance: float = 0.0


class Metrics:
    """Every metric of one process; :meth:`exposition` is the ``/metrics`` body.

    The recorders (the data plane's observer, the control plane's audit) add to
    the public tallies directly.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.match_latency = Histogram(
            "matchmaker_match_latency_seconds",
            "Seconds from a client's pool.enter to its match, by pool mode.",
            ["mode"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        quality = ["project", "policy"]
        self.match_wait = Histogram(
            "matchmaker_match_wait_seconds",
            "Seconds each member waited from pool.enter to its match, by Project and policy.",
            quality,
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.match_spread = Histogram(
            "matchmaker_match_spread",
            "The largest distance between two members of a formed group, for each "
            "range-rule attribute, by Project and policy.",
            [*quality, "attribute"],
            buckets=SPREAD_BUCKETS,
            registry=self.registry,
        )
        self.team_imbalance = Histogram(
            "matchmaker_team_imbalance",
            "The difference of the teams' mean balanced attribute in a formed group, "
            "by Project and policy.",
            quality,
            buckets=SPREAD_BUCKETS,
            registry=self.registry,
        )
        self.quality: dict[tuple[str, str], PolicyQuality] = {}  # (project, policy)
        self.connections = 0
        self.relayed_messages = 0
        self.relayed_bytes = 0
        self.matches: Tally[str] = Tally()
        self.errors: Tally[str] = Tally()
        self.disconnects: Tally[str] = Tally()
        self.control_requests: Tally[tuple[str, str]] = Tally()
        self.registry.register(_Tallies(self))

    def watch(self, snapshot: LiveSnapshot, connected: Callable[[], int]) -> None:
        """Read the gauges from ``snapshot`` (and ``connected`` clients) at each scrape."""
        self.registry.register(_LiveGauges(snapshot, connected))

    def record_control_request(self, method: str, status: int) -> None:
        self.control_requests[method, str(status)] += 1

    def exposition(self) -> bytes:
        """The text format of every metric (``Content-Type``: :data:`CONTENT_TYPE`)."""
        return generate_latest(self.registry)


class _Tallies(Collector):
    """The counters, from the tallies of :class:`Metrics`."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def describe(self) -> list[Metric]:
        return []  # families appear as they are counted; nothing to check at registration

    def collect(self) -> Iterator[Metric]:
        m = self._metrics
        yield _counter("matchmaker_connections", "WebSocket connections accepted.", m.connections)
        yield _counter(
            "matchmaker_relayed_messages", "session.send messages relayed.", m.relayed_messages
        )
        yield _counter(
            "matchmaker_relayed_bytes",
            "Bytes of relayed message frames queued, summed over recipients.",
            m.relayed_bytes,
        )
        yield _labelled("matchmaker_matches", "Groups formed in pools, by mode.", "mode", m.matches)
        yield _labelled(
            "matchmaker_errors", "Error replies sent to clients, by code.", "code", m.errors
        )
        yield _labelled(
            "matchmaker_disconnects",
            "Connections closed, by reason.",
            "reason",
            m.disconnects,
        )
        family = CounterMetricFamily(
            "matchmaker_control_requests",
            "Control-plane (management port) requests, by method and status.",
            labels=["method", "status"],
        )
        for (method, status), count in sorted(m.control_requests.items()):
            family.add_metric([method, status], count)
        yield family


def _counter(name: str, documentation: str, value: int) -> CounterMetricFamily:
    return CounterMetricFamily(name, documentation, value=value)


def _labelled(name: str, documentation: str, label: str, tally: Tally[str]) -> CounterMetricFamily:
    family = CounterMetricFamily(name, documentation, labels=[label])
    for key, count in sorted(tally.items()):
        family.add_metric([key], count)
    return family


class _LiveGauges(Collector):
    """The gauges, computed from the live state when scraped."""

    def __init__(self, snapshot: LiveSnapshot, connected: Callable[[], int]) -> None:
        self._snapshot = snapshot
        self._connected = connected

    def describe(self) -> list[Metric]:
        return []  # computed at scrape time; nothing to check at registration

    def collect(self) -> Iterator[Metric]:
        projects = self._snapshot()
        yield GaugeMetricFamily(
            "matchmaker_clients", "Clients connected (past hello).", value=self._connected()
        )
        per_project = GaugeMetricFamily(
            "matchmaker_project_clients", "Clients connected, by Project.", labels=["project"]
        )
        away_per_project = GaugeMetricFamily(
            "matchmaker_project_clients_away",
            "Clients away (dropped, resumable), by Project.",
            labels=["project"],
        )
        pools: Tally[str] = Tally()
        entries: Tally[str] = Tally()
        sessions = away = 0
        for project in projects:
            if project.clients:
                per_project.add_metric([project.id], project.clients)
            if project.away:
                away_per_project.add_metric([project.id], project.away)
            away += project.away
            sessions += len(project.sessions)
            for pool in project.pools:
                pools[pool.mode] += 1
                entries[pool.mode] += pool.waiting
        yield GaugeMetricFamily(
            "matchmaker_clients_away", "Clients away (dropped, resumable).", value=away
        )
        yield per_project
        yield away_per_project
        yield _gauge_by_mode("matchmaker_pools", "Live pools, by mode.", pools)
        yield _gauge_by_mode(
            "matchmaker_pool_entries", "Entries waiting in pools, by mode.", entries
        )
        yield GaugeMetricFamily("matchmaker_sessions", "Live sessions.", value=sessions)


def _gauge_by_mode(name: str, documentation: str, tally: Tally[str]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=["mode"])
    for mode, value in sorted(tally.items()):
        family.add_metric([mode], value)
    return family
