"""The plane's timers: entry expiry and the end of resume graces, heartbeats, the stop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from matchmaker.core import Delivery, Matchmaker
from matchmaker.data.connection import Connection
from matchmaker.data.jobs.clock import wall_clock_ms
from matchmaker.data.jobs.hooks import ClusterHooks
from matchmaker.data.jobs.tasks import Background, Crash, cancel

__all__ = ["EXPIRY_TICK_S", "Timers"]

# How often entry TTLs are checked; an entry expires at most this late.
EXPIRY_TICK_S = 0.25


class Timers:
    """Runs the loops that act without a frame, from :meth:`start` to :meth:`stop`.

    A loop that crashes is logged and ``on_crash`` is called (the plane stops the
    process: without its timers no entry would expire and no silent client be pinged).
    """

    def __init__(
        self,
        core: Matchmaker,
        clients: dict[str, Connection],
        deliver: Callable[[list[Delivery], int], None],
        *,
        cluster: ClusterHooks | None,
        heartbeat_interval_ms: int,
        background: Background,
        on_crash: Crash,
        watch_stop: Callable[[], Coroutine[Any, Any, None]],
    ) -> None:
        self.core = core
        self.clients = clients
        self.deliver = deliver
        self.cluster = cluster
        self._interval_s = heartbeat_interval_ms / 1000
        self._background = background
        self._on_crash = on_crash
        self._watch_stop = watch_stop
        self.running: list[asyncio.Task[None]] = []

    def start(self) -> bool:
        """Start the loops (idempotent; ``True``: they were not running)."""
        if self.running:
            return False
        spawn, crashed = self._background.spawn, self._on_crash
        self.running = [
            spawn(self._expire_loop(), "timer.expire", crashed),
            spawn(self._heartbeat_loop(), "timer.heartbeat", crashed),
            spawn(self._watch_stop(), "timer.stop", crashed),
        ]
        return True

    async def stop(self) -> None:
        """Cancel the loops and wait until they ended."""
        tasks, self.running = self.running, []
        await cancel(tasks)

    async def _expire_loop(self) -> None:
        while True:
            await asyncio.sleep(EXPIRY_TICK_S)
            now_ms = wall_clock_ms()
            self.deliver(self.core.expire(now_ms), now_ms)
            gone, deliveries = self.core.end_grace(now_ms)
            self.deliver(deliveries, now_ms)
            if self.cluster is not None:
                for client_id in gone:
                    self.cluster.client_gone(client_id, now_ms)

    async def _heartbeat_loop(self) -> None:
        # Only silent clients are pinged, a few at a time as they fall silent: a busy
        # client needs no ping, and pinging everyone at once would stall live traffic.
        interval = self._interval_s
        while True:
            await asyncio.sleep(interval / 4)
            now_ms = wall_clock_ms()
            for connection in list(self.clients.values()):
                effect = connection.conversation.heartbeat(now_ms)
                if effect is not None:
                    connection.perform([effect], now_ms)
