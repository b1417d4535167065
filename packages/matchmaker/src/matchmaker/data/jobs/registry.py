"""The registry of one process's connections: which are open, which client is on which."""

from __future__ import annotations

import logging
from collections.abc import Callable

from matchmaker.core import Delivery, Matchmaker, closecodes
from matchmaker.data.connection import Connection
from matchmaker.data.jobs.clock import wall_clock_ms
from matchmaker.data.jobs.stopping import Stopping
from matchmaker.data.observer import DataObserver
from matchmaker.observe.logs import fields

__all__ = ["Registry"]

_log = logging.getLogger("matchmaker.data")


class Registry:
    """Attaches a connection to its client on ``hello`` and lets the client go (or park it
    for the resume grace) when the connection closes.

    ``clients`` and ``open`` are the plane's own tables, shared with the delivery, the
    timers and the endpoints that read them.
    """

    def __init__(
        self,
        core: Matchmaker,
        observer: DataObserver,
        stopping: Stopping,
        *,
        deliver: Callable[[list[Delivery], int], None],
        clients: dict[str, Connection],
        open_connections: set[Connection],
    ) -> None:
        self.core = core
        self.observer = observer
        self.stopping = stopping
        self.deliver = deliver
        self.clients = clients
        self.open = open_connections
        self.cluster = stopping.cluster

    def attach(self, connection: Connection, now_ms: int) -> None:
        """A connection completed ``hello``. A resume that took the client from a connection
        still open (half-open TCP, say) closes that one with 3009, leaving the client be."""
        client_id = connection.client_id
        assert client_id is not None
        old = self.clients.get(client_id)
        self.clients[client_id] = connection
        if old is not None and old is not connection:
            old.conversation.replaced()
            old.close(closecodes.REPLACED, "replaced by a resumed connection")
        client = connection.conversation.client
        assert client is not None
        if self.cluster is not None:
            self.cluster.client_attached(client_id, now_ms)
        _log.info(
            "client connected",
            extra=fields(event="hello", client=client_id, project=client.project_id),
        )

    def detach(self, connection: Connection) -> None:
        """A connection is closing. After a clean close (the client's 1000, or a 4xxx) its
        client leaves pools and sessions now; after any other it is away for the resume
        grace."""
        self.open.discard(connection)
        client_id = connection.client_id
        if client_id is not None and self.clients.get(client_id) is connection:
            del self.clients[client_id]
        if connection.relay is None:  # a relay's close is counted where its client lives
            self.observer.closed(connection.close_code or closecodes.GOING_AWAY)
        _log.info(
            "connection closed",
            extra=fields(
                event="close",
                client=client_id,
                code=connection.close_code,
                reason=connection.close_reason,
            ),
        )
        code = connection.close_code
        resumable = code is not None and code != closecodes.NORMAL and code < closecodes.BYE
        # Nothing survives a shutdown, unless it hands the clients over.
        stopping = self.stopping
        resumable = resumable and (stopping.restartable or not stopping.shutdown.is_set())
        now_ms = wall_clock_ms()
        self.deliver(connection.conversation.disconnect(now_ms, resumable=resumable), now_ms)
        cluster = self.cluster
        if cluster is not None and client_id is not None:
            # Parked (its outbox kept) or gone: the other members holding its state follow.
            if client_id in self.core.resumption.outboxes:
                cluster.client_away(client_id, now_ms)
            else:
                cluster.client_gone(client_id, now_ms)
