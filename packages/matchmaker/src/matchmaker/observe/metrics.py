"""The process's Prometheus metrics, one registry per process (tests run many in one).

Counters and the latency histogram are recorded as things happen (the data
plane and the control plane call the ``record_*`` methods); the gauges are read
from the live state at scrape time through a :data:`~matchmaker.observe.live.LiveSnapshot`,
so they can never drift from what is really connected.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterator

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from matchmaker.observe.live import LiveSnapshot

__all__ = ["CONTENT_TYPE", "Metrics"]

CONTENT_TYPE = CONTENT_TYPE_LATEST

# Seconds from pool.enter to the match: a quick pair on loopback up to a long wait.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600)


class Metrics:
    """Every metric of one process; :meth:`exposition` is the ``/metrics`` body."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.matches = Counter(
            "matchmaker_matches", "Groups formed in pools, by pool mode.", ["mode"], registry=r
        )
        self.match_latency = Histogram(
            "matchmaker_match_latency_seconds",
            "Seconds from a client's pool.enter to its match, by pool mode.",
            ["mode"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.relayed_messages = Counter(
            "matchmaker_relayed_messages", "session.send messages relayed.", registry=r
        )
        self.relayed_bytes = Counter(
            "matchmaker_relayed_bytes",
            "Bytes of relayed message frames queued to recipients.",
            registry=r,
        )
        self.errors = Counter(
            "matchmaker_errors", "Error replies sent to clients, by code.", ["code"], registry=r
        )
        self.disconnects = Counter(
            "matchmaker_disconnects",
            "Connections the server closed (or saw close), by reason.",
            ["reason"],
            registry=r,
        )
        self.connections = Counter(
            "matchmaker_connections", "WebSocket connections accepted.", registry=r
        )
        self.control_requests = Counter(
            "matchmaker_control_requests",
            "Control-plane (management port) requests, by method and status.",
            ["method", "status"],
            registry=r,
        )

    def watch(self, snapshot: LiveSnapshot, connected: Callable[[], int]) -> None:
        """Read the gauges from ``snapshot`` (and ``connected`` clients) at each scrape."""
        self.registry.register(_LiveGauges(snapshot, connected))

    def record_control_request(self, method: str, status: int) -> None:
        self.control_requests.labels(method, str(status)).inc()

    def exposition(self) -> bytes:
        """The text format of every metric (``Content-Type``: :data:`CONTENT_TYPE`)."""
        return generate_latest(self.registry)


class _LiveGauges(Collector):
    """The gauges, computed from the live state when scraped."""

    def __init__(self, snapshot: LiveSnapshot, connected: Callable[[], int]) -> None:
        self._snapshot = snapshot
        self._connected = connected

    def describe(self) -> list[GaugeMetricFamily]:
        return []  # computed at scrape time; nothing to check at registration

    def collect(self) -> Iterator[GaugeMetricFamily]:
        projects = self._snapshot()
        yield GaugeMetricFamily(
            "matchmaker_clients", "Clients connected (past hello).", value=self._connected()
        )
        per_project = GaugeMetricFamily(
            "matchmaker_project_clients", "Clients connected, by Project.", labels=["project"]
        )
        pools: Tally[str] = Tally()
        entries: Tally[str] = Tally()
        sessions = 0
        for project in projects:
            per_project.add_metric([project.id], project.clients)
            sessions += len(project.sessions)
            for pool in project.pools:
                pools[pool.mode] += 1
                entries[pool.mode] += pool.waiting
        yield per_project
        yield _by_mode("matchmaker_pools", "Live pools, by mode.", pools)
        yield _by_mode("matchmaker_pool_entries", "Entries waiting in pools, by mode.", entries)
        yield GaugeMetricFamily("matchmaker_sessions", "Live sessions.", value=sessions)


def _by_mode(name: str, documentation: str, tally: Tally[str]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=["mode"])
    for mode, value in sorted(tally.items()):
        family.add_metric([mode], value)
    return family
