"""How a stop ends the clients of one process: handed over (3001) or closed (1001)."""

from __future__ import annotations

import asyncio

from matchmaker.core import closecodes
from matchmaker.data.connection import Connection
from matchmaker.data.jobs.clock import wall_clock_ms
from matchmaker.data.jobs.hooks import ClusterHooks

__all__ = ["Stopping"]


class Stopping:
    """Waits for ``shutdown``, then drains the clients to the cluster (``--cluster``) and
    closes every open connection, 3001 ``resume`` when the clients are handed over."""

    def __init__(
        self,
        shutdown: asyncio.Event,
        open_connections: set[Connection],
        cluster: ClusterHooks | None,
        *,
        restartable: bool,
    ) -> None:
        self.shutdown = shutdown
        self.open = open_connections
        self.cluster = cluster
        # A stop hands the clients over to the next process (3001, :mod:`..handover`).
        self.restartable = restartable
        # Under --cluster, set when a stop handed the clients to the surviving members.
        self.drained = False

    async def watch(self) -> None:
        """The timer that waits for the stop (run from the plane's start)."""
        await self.shutdown.wait()
        # Under --cluster the clients go to the surviving members first (they resume there).
        if self.cluster is not None:
            self.drained = self.cluster.drain(wall_clock_ms())
        code, reason = self.close_code()
        for connection in list(self.open):
            connection.close(code, reason)

    def close_code(self) -> tuple[int, str]:
        """How a stop closes a WebSocket: 3001 ``resume`` when the clients are handed over
        (to the next process through the store, or drained to the surviving members of
        the cluster: they resume there), else 1001."""
        if self.restartable or self.drained:
            return closecodes.RESTARTING, "resume"
        return closecodes.GOING_AWAY, "server shutting down"

    def refuses(self) -> bool:
        """Whether a socket opened now is refused (stopping without handing clients over)."""
        return self.shutdown.is_set() and not (self.restartable or self.drained)
