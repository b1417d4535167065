"""Delivery: the core's events queued on their recipients' connections, once encoded."""

from __future__ import annotations

from collections.abc import Sequence

from matchmaker.core import Delivery, Event, Matchmaker
from matchmaker.core.effects import Effect
from matchmaker.core.events import EntryClosed, MessageRelayed, SessionFormed
from matchmaker.data.connection import Connection
from matchmaker.data.jobs.hooks import ClusterHooks
from matchmaker.data.jobs.waits import MatchWaits
from matchmaker.data.observer import DataObserver
from matchmaker.data.translate import event_head

__all__ = ["Deliveries"]


class Deliveries:
    """Numbers each event per recipient (kept for replay) and queues it on the recipient's
    connection; in a cluster, routes it to the recipients connected elsewhere.

    Connections call :meth:`deliver_one` and :meth:`relay_local` as the plane's own
    methods (the plane holds these bound methods, so the hot path pays no extra call).
    """

    def __init__(
        self,
        core: Matchmaker,
        clients: dict[str, Connection],
        observer: DataObserver,
        cluster: ClusterHooks | None,
    ) -> None:
        self.clients = clients
        self.observer = observer
        self.cluster = cluster
        self.waits = MatchWaits(observer, clients, core.sessions)
        self._metrics = observer.metrics  # relay_local counts without a call
        self._outboxes = core.resumption.outboxes  # read on every delivery

    def deliver(self, deliveries: list[Delivery], now_ms: int) -> None:
        """Queue the core's outputs (of an operation at ``now_ms``) on their recipients'
        connections."""
        for recipients, event in deliveries:
            self.deliver_one(recipients, event, now_ms)

    def deliver_one(
        self, recipients: Sequence[str], event: Event, now_ms: int, *, remote: bool = True
    ) -> None:
        """Encode ``event`` once, number it per recipient (kept for replay, stamped at
        ``now_ms``: the time its caller already read, for the replay buffer's age bound) and
        queue it for each recipient that is connected; an away recipient gets it on resume.

        Only the ``seq`` differs between recipients: the frame up to its closing
        brace is encoded to text here, once, not once per recipient. In a cluster,
        recipients not connected here are routed to their process (unless the event
        came from another process: ``remote=False``). An event for no one is a note
        of the core for the cluster's router (a backfill's, :mod:`matchmaker.core.backfill`).
        """
        if not recipients:
            if self.cluster is not None:
                self.cluster.observe(recipients, event, now_ms)
            return
        head = event_head(event)
        clients, outboxes = self.clients, self._outboxes
        kind = type(event)
        if not remote:
            pass  # counted by the process whose core produced it (a cluster sums once)
        elif kind is MessageRelayed:
            self.observer.relayed(len(head), len(recipients))
        elif kind is SessionFormed or isinstance(event, EntryClosed):
            self.waits.observe(recipients, event)
        cluster = self.cluster
        elsewhere: list[str] | None = None if cluster is None else []
        for client_id in recipients:
            outbox = outboxes.get(client_id)
            if outbox is None:
                if elsewhere is not None:
                    elsewhere.append(client_id)
                continue
            frame = outbox.stamp(head, now_ms)
            connection = clients.get(client_id)
            if connection is not None:
                connection.push(frame)
        if cluster is not None:
            cluster.observe(recipients, event, now_ms)
            if elsewhere and remote:
                cluster.deliver_remote(elsewhere, event, now_ms)

    def relay_local(self, recipients: list[str], event: MessageRelayed, now_ms: int) -> None:
        """:meth:`deliver_one` for a relayed message of a process outside a cluster (the one
        delivery of almost every ``session.send``): no cluster to route to or tell, no
        dispatch on the event's type; the same frame, seqs, replay buffer and counters.
        ``now_ms`` (epoch milliseconds) is the time the message arrived, for the replay
        buffer's age bound: the connection read it already, so no clock is read here."""
        head = event_head(event)
        metrics = self._metrics
        metrics.relayed_messages += 1
        metrics.relayed_bytes += len(head) * len(recipients)
        clients, outboxes = self.clients, self._outboxes
        for client_id in recipients:
            outbox = outboxes.get(client_id)
            if outbox is not None:
                frame = outbox.stamp(head, now_ms)
                connection = clients.get(client_id)
                if connection is not None:
                    connection.push(frame)

    def perform_for(self, client_id: str, effects: list[Effect], now_ms: int) -> None:
        """Carry out ``effects`` (an answer from another process, at ``now_ms``) on a
        client's connection."""
        connection = self.clients.get(client_id)
        if connection is not None:
            connection.perform(effects, now_ms)
