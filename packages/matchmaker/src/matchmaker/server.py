"""The process shell: one asyncio loop, hypercorn serving the data and control apps.

``run`` is what the CLI calls and what tests start in-process: it opens the
store, loads the directory, binds both ports (``0`` picks a free one), reports
the bound addresses, serves until ``shutdown`` is set and then closes the store.
Each hypercorn ``serve()`` gets ``shutdown.wait`` as its trigger so neither
installs signal handlers; ``serve_until_signalled`` installs the one pair.

``serve_until_signalled`` is the process entry point and the only caller that
changes the whole process: it raises the open-file limit and, once the apps
are built, has ``run`` call :func:`~matchmaker.data.runtime.tune_gc` (without it full
collections over thousands of connections stall the loop for 100 ms and more).
``run`` alone leaves the process as it found it, because tests and embedding
programs call it many times in one interpreter and ``gc.freeze`` would pin
whatever they hold.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from hypercorn.asyncio import serve
from hypercorn.config import Config, Sockets
from hypercorn.typing import Framework
from starlette.types import ASGIApp

from matchmaker.config import ServerConfig
from matchmaker.control import create_control_app
from matchmaker.data.app import create_data_app, websocket_max_message_size
from matchmaker.data.runtime import raise_open_file_limit, tune_gc
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.refresh import DirectoryRefresher
from matchmaker.store import DEFAULT_STORE_URL, ProjectStore, open_store

log = logging.getLogger("matchmaker")


@dataclass(frozen=True, slots=True)
class Bound:
    """Where the process listens; ``management`` is ``None`` without a control plane."""

    data: tuple[str, int]
    management: tuple[str, int] | None


class _BoundConfig(Config):
    """A hypercorn Config serving one socket we bound ourselves (so port 0 works)."""

    def __init__(self, sock: socket.socket, grace_s: float) -> None:
        super().__init__()
        self._sock = sock
        self.graceful_timeout = grace_s
        self.accesslog = None
        self.errorlog = logging.getLogger("hypercorn.error")

    def create_sockets(self) -> Sockets:
        return Sockets(secure_sockets=[], insecure_sockets=[self._sock], quic_sockets=[])


async def run(
    config: ServerConfig,
    *,
    shutdown: asyncio.Event,
    ready: Callable[[Bound], None] | None = None,
    directory: ProjectDirectory | None = None,
    tune_runtime: bool = False,
) -> None:
    """Serve until ``shutdown`` is set; ``ready`` gets the bound addresses once listening.

    ``directory`` (empty, filled from the store here) lets an embedding program
    or a test see what the data plane sees. ``tune_runtime`` calls
    :func:`~matchmaker.data.runtime.tune_gc` once everything is built, just before
    serving; only a process that is nothing but this server should ask for it.
    """
    directory = ProjectDirectory() if directory is None else directory
    store: ProjectStore | None = None
    if config.management_key is not None:
        store = await open_store(config.store_url or DEFAULT_STORE_URL)
    else:
        if config.store_url is not None:
            log.warning("--store is ignored: without a management key there is no control plane")
        if config.require_declared_projects:
            log.warning(
                "--require-declared-projects without a management key: no Project can be "
                "declared, only the default Project is admitted"
            )
    sockets: list[socket.socket] = []
    refresher = None if store is None else DirectoryRefresher(store, directory)
    try:
        if refresher is not None:
            await refresher.start()
        apps: list[tuple[ASGIApp, socket.socket, int | None]] = []
        data_sock = _listen(config.host, config.port)
        sockets.append(data_sock)
        apps.append(
            (
                create_data_app(config, directory, shutdown=shutdown),
                data_sock,
                websocket_max_message_size(config),
            )
        )
        data = _address(data_sock)
        management = None
        if store is not None and config.management_key is not None:
            mgmt_sock = _listen(config.management_host or config.host, config.management_port)
            sockets.append(mgmt_sock)
            control = create_control_app(config.limits, config.management_key, store, directory)
            apps.append((control, mgmt_sock, None))
            management = _address(mgmt_sock)
        if tune_runtime:
            tune_gc()
            log.info("garbage collector tuned for many connections (startup objects frozen)")
        # The "listening" lines come last: whoever waits for them finds the rest logged.
        if store is None:
            log.info("no management key: control plane disabled, every Project is implicit")
        log.info("data plane listening on http://%s:%d", *data)
        if store is not None and management is not None:
            log.info(
                "control plane listening on http://%s:%d/admin, store %s, %d Projects",
                *management,
                store.description,
                len(directory),
            )
        if ready is not None:
            ready(Bound(data=data, management=management))
        await asyncio.gather(
            *(_serve(app, sock, config, shutdown, max_message) for app, sock, max_message in apps)
        )
    finally:
        for sock in sockets:
            sock.close()
        if refresher is not None:
            await refresher.close()
        if store is not None:
            await store.close()
    log.info("stopped")


async def serve_until_signalled(config: ServerConfig) -> None:
    """The process entry point: ``run`` tuned for many connections, stopped by a signal.

    SIGINT and SIGTERM start a graceful shutdown. The soft open-file limit is
    raised to the hard one (every connection is a descriptor).
    """
    files = raise_open_file_limit()
    log.info("open-file limit %d", files)
    shutdown = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, _on_signal, signum, shutdown)
    await run(config, shutdown=shutdown, tune_runtime=True)


def _on_signal(signum: int, shutdown: asyncio.Event) -> None:
    log.info("%s received, shutting down", signal.Signals(signum).name)
    shutdown.set()


async def _serve(
    app: ASGIApp,
    sock: socket.socket,
    config: ServerConfig,
    shutdown: asyncio.Event,
    max_message: int | None,
) -> None:
    try:
        # Starlette's ASGI types are looser than hypercorn's; the apps are plain ASGI 3.
        framework = cast(Framework, app)
        hyper_config = _BoundConfig(sock, config.shutdown_grace_s)
        if max_message is not None:
            # Frames over this are closed with 1009 by hypercorn before they are buffered.
            hyper_config.websocket_max_message_size = max_message
        await serve(framework, hyper_config, shutdown_trigger=shutdown.wait)
    finally:
        shutdown.set()  # one server stopping (or failing) stops the other


def _listen(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise _bind_error(host, port, exc) from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(1024)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise _bind_error(host, port, exc) from exc
    return sock


def _address(sock: socket.socket) -> tuple[str, int]:
    host, port = sock.getsockname()[:2]
    return str(host), int(port)


def _bind_error(host: str, port: int, exc: OSError) -> MatchmakerError:
    return MatchmakerError(f"cannot listen on {host}:{port}: {exc}", code="server.bind_failed")
