"""The cluster's hand-off as the plane serves it: clients that resume across members."""

from __future__ import annotations

from matchmaker.asgi import Send
from matchmaker.core.effects import ResumeElsewhere
from matchmaker.data.connection import Connection
from matchmaker.data.jobs.hooks import ClusterHooks
from matchmaker.data.jobs.writers import Writers
from matchmaker.data.writer import WriterConnection

__all__ = ["RemoteResumes"]


class RemoteResumes:
    """Sends a resume of another member's token there, and opens the connections whose
    sockets are on another member (a client here resumed there with this one's token)."""

    def __init__(self, cluster: ClusterHooks | None, writers: Writers) -> None:
        self.cluster = cluster
        self._writers = writers

    def resume_elsewhere(
        self, connection: Connection, effect: ResumeElsewhere, now_ms: int
    ) -> None:
        """A resume token of another member: that member serves the client through here."""
        assert self.cluster is not None, "only a cluster member's tokens name another issuer"
        self.cluster.resume_elsewhere(connection, effect, now_ms)

    def open_remote(self, send: Send) -> WriterConnection:
        """A connection whose socket is on another process (a client that resumed there
        with this process's token): ``send`` carries its frames and its close there."""
        connection, _ = self._writers.open(send)
        return connection
