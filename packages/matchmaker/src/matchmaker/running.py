"""``serve(config)``: a running matchmaker as an async context manager.

::

    async with serve(ServerConfig(port=0, management_port=0, management_key=key)) as server:
        async with await Client.connect(server.ws_url, project="demo") as client:
            ...

It starts :func:`matchmaker.server.run` as a task of the current event loop,
returns once both planes listen (``port=0`` picks free ports) and on exit
stops them gracefully and closes the store. A failure to start (a port in
use, a bad store URL) is raised from ``async with``. The ``matchmaker``
command serves through it too (:func:`serve_until_signalled`), so a program
embedding the server runs exactly what the command runs.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from matchmaker.config import ServerConfig
from matchmaker.data.runtime import raise_open_file_limit
from matchmaker.directory import ProjectDirectory
from matchmaker.server import Bound, run, url

__all__ = ["RunningServer", "serve", "serve_until_signalled"]

log = logging.getLogger("matchmaker")


@dataclass(frozen=True, slots=True)
class RunningServer:
    """A server started by :func:`serve`: where it listens, and how to stop it."""

    bound: Bound
    config: ServerConfig
    directory: ProjectDirectory
    """The Projects the data plane sees (kept in sync with the store)."""
    _shutdown: asyncio.Event = field(repr=False)
    _task: asyncio.Task[None] = field(repr=False)

    @property
    def url(self) -> str:
        """The data plane's HTTP base URL (``/healthz``)."""
        return url("http", *self.bound.data)

    @property
    def ws_url(self) -> str:
        """The data plane's WebSocket URL, what :meth:`Client.connect` takes."""
        return url("ws", *self.bound.data) + "/ws"

    @property
    def management_url(self) -> str | None:
        """The control plane's base URL (``/admin``), ``None`` without a management key."""
        if self.bound.management is None:
            return None
        return url("http", *self.bound.management)

    @property
    def metrics_url(self) -> str | None:
        """The metrics listener's base URL (``/metrics``), ``None`` when it is off."""
        if self.bound.metrics is None:
            return None
        return url("http", *self.bound.metrics)

    def stop(self) -> None:
        """Start a graceful shutdown (safe to call more than once, or from a signal handler)."""
        self._shutdown.set()

    async def wait(self) -> None:
        """Until the server has stopped; raises what stopped it, if it failed."""
        await asyncio.shield(self._task)


@asynccontextmanager
async def serve(
    config: ServerConfig,
    *,
    directory: ProjectDirectory | None = None,
    shutdown: asyncio.Event | None = None,
    tune_runtime: bool = False,
    hurry: asyncio.Event | None = None,
) -> AsyncIterator[RunningServer]:
    """Serve ``config`` in this event loop for the duration of the ``async with`` block.

    ``shutdown`` (optional) stops the server early when set, as :meth:`RunningServer.stop`
    does; ``directory``, ``tune_runtime`` and ``hurry`` are :func:`~matchmaker.server.run`'s.
    """
    directory = ProjectDirectory() if directory is None else directory
    shutdown = asyncio.Event() if shutdown is None else shutdown
    ready: asyncio.Future[Bound] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        run(
            config,
            shutdown=shutdown,
            ready=ready.set_result,
            directory=directory,
            tune_runtime=tune_runtime,
            hurry=hurry,
        )
    )
    try:
        await asyncio.wait((ready, task), return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        shutdown.set()
        await asyncio.gather(task, return_exceptions=True)
        raise
    if not ready.done():
        await task  # raises why it could not start
        raise RuntimeError("the server stopped before it was listening")
    running = RunningServer(ready.result(), config, directory, shutdown, task)
    try:
        yield running
    finally:
        shutdown.set()
        await task


async def serve_until_signalled(config: ServerConfig) -> None:
    """The process entry point: :func:`serve` tuned for many connections, stopped by a signal.

    SIGINT and SIGTERM start a graceful shutdown, which keeps the ports answering for
    the shutdown grace. A second SIGINT (a developer's second Ctrl-C) ends that grace at
    once; a repeated SIGTERM does not, since supervisors repeat it while a load balancer
    is still meant to see the node leave. The soft open-file limit is raised to the hard
    one (every connection is a descriptor).
    """
    files = raise_open_file_limit()
    log.info("open-file limit %d", files)
    shutdown = asyncio.Event()
    hurry = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, _on_signal, signum, shutdown, hurry)
    async with serve(config, shutdown=shutdown, tune_runtime=True, hurry=hurry) as server:
        await server.wait()


def _on_signal(signum: int, shutdown: asyncio.Event, hurry: asyncio.Event) -> None:
    if not shutdown.is_set():
        log.info("%s received, shutting down", signal.Signals(signum).name)
        shutdown.set()
    elif signum == signal.SIGINT and not hurry.is_set():
        log.info("SIGINT received during the shutdown grace, stopping at once")
        hurry.set()
