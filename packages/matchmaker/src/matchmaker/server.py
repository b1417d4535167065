"""The process shell: one event loop serving the data and control apps.

``run`` is what :func:`matchmaker.running.serve` (the library's and the CLI's way
to start a server) and some tests start in-process: it opens the
store, loads the directory, takes the clients a process stopped on the same
store and port handed over (:mod:`matchmaker.data.handover`), binds both ports
(``0`` picks a free one), reports the bound addresses, serves until
``shutdown`` is set, hands its own clients over and then closes the store.
The data plane runs on the server ``config.server`` names (picows or
hypercorn, see :mod:`matchmaker.servers`); the control plane always runs on
hypercorn: it is low-traffic HTTP, so one server for it keeps its behaviour
(errors, body and header limits) the same whatever serves the data plane.
Both servers run in this loop and stop on ``shutdown``; neither installs
signal handlers, :func:`matchmaker.running.serve_until_signalled` installs the
one pair.

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
import contextlib
import functools
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from matchmaker.config import LOOPBACK, ServerConfig
from matchmaker.control import Observers, create_control_app, create_metrics_app
from matchmaker.data.app import create_data_app, websocket_max_message_size
from matchmaker.data.handover import handover_name
from matchmaker.data.live import live_snapshot
from matchmaker.data.runtime import tune_gc
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.observe import logs as observe_logs
from matchmaker.observe.metrics import Metrics
from matchmaker.refresh import DirectoryRefresher
from matchmaker.servers import Listener, Serve, resolve_server, serve_function
from matchmaker.servers.streams import cancelled_connections_unlogged
from matchmaker.store import DEFAULT_STORE_URL, ProjectStore, StoreKey, open_store

if TYPE_CHECKING:
    from matchmaker.cluster import ClusterNode
    from matchmaker.data.plane import DataPlane

log = logging.getLogger("matchmaker")

CLOSING_S = 1.0
"""Once a process that kept its ports open for the shutdown grace stops listening, what a
socket still open gets to finish closing (a close handshake, a response being
written): it already had the whole grace, so the stop takes the grace and this, not
the grace twice."""


@dataclass(frozen=True, slots=True)
class Bound:
    """Where the process listens; ``management`` is ``None`` without a control plane,
    ``metrics`` without ``--metrics-port``."""

    data: tuple[str, int]
    management: tuple[str, int] | None
    metrics: tuple[str, int] | None = None


async def run(
    config: ServerConfig,
    *,
    shutdown: asyncio.Event,
    ready: Callable[[Bound], None] | None = None,
    directory: ProjectDirectory | None = None,
    tune_runtime: bool = False,
    hurry: asyncio.Event | None = None,
) -> None:
    """Serve until ``shutdown`` is set; ``ready`` gets the bound addresses once listening.

    ``directory`` (empty, filled from the store here) lets an embedding program
    or a test see what the data plane sees. ``tune_runtime`` calls
    :func:`~matchmaker.data.runtime.tune_gc` once everything is built, just before
    serving; only a process that is nothing but this server should ask for it. Such a
    process also keeps its ports answering for the whole shutdown grace once a stop
    began (``/readyz`` 503, new WebSockets 1001), so a load balancer's probes see it
    leave, and then gives a socket still open :data:`CLOSING_S` more; embedded, the
    servers are told to stop at once and open sockets get the grace. Setting
    ``hurry`` during that grace ends it at once (a second Ctrl-C).
    """
    directory = ProjectDirectory() if directory is None else directory
    server_name = resolve_server(config.server)
    store = await _open_store(config)
    sockets: list[socket.socket] = []
    refresher = _refresher(config, store, directory)
    cluster = None
    try:
        cluster = await _join_cluster(config)
        if refresher is not None:
            await refresher.start()
        linger = config.shutdown_grace_s if tune_runtime else 0.0
        grace = config.shutdown_grace_s if linger == 0 else min(linger, CLOSING_S)
        data_sock = _listen(config.host, config.port)
        sockets.append(data_sock)
        metrics = Metrics()
        data_app = create_data_app(
            config,
            directory,
            shutdown=shutdown,
            store_probe=None if store is None else store.ping,
            metrics=metrics,
            cluster=cluster,
            restartable=_hands_over(store, cluster),
        )
        await _take_over(data_app.plane, store, config.port)
        snapshot = functools.partial(live_snapshot, data_app.plane)
        metrics.watch(snapshot, lambda: len(data_app.plane.clients))
        listeners: list[tuple[Serve, Listener]] = [
            (
                serve_function(server_name),
                Listener(data_app, data_sock, grace, websocket_max_message_size(config)),
            )
        ]
        data = _address(data_sock)
        management = None
        if store is not None and config.management_key is not None:
            mgmt_sock = _listen(management_host(config), config.management_port)
            sockets.append(mgmt_sock)
            control_app = create_control_app(
                config.limits,
                config.control,
                config.management_key,
                store,
                directory,
                observers=Observers(
                    live=snapshot,
                    connected=lambda: len(data_app.plane.clients),
                    metrics=metrics.exposition,
                    on_request=metrics.record_control_request,
                ),
            )
            listeners.append((serve_function("hypercorn"), Listener(control_app, mgmt_sock, grace)))
            management = _address(mgmt_sock)
        metrics_address = None
        if config.metrics_port is not None:
            metrics_sock = _listen(management_host(config), config.metrics_port)
            sockets.append(metrics_sock)
            metrics_app = create_metrics_app(metrics.exposition)
            listeners.append(
                (serve_function("hypercorn"), Listener(metrics_app, metrics_sock, grace))
            )
            metrics_address = _address(metrics_sock)
        if tune_runtime:
            tune_gc()
            log.info("garbage collector tuned for many connections (startup objects frozen)")
        # The "listening" lines come last: whoever waits for them finds the rest logged.
        bound = Bound(data=data, management=management, metrics=metrics_address)
        _log_listening(config, server_name, bound, store, len(directory))
        if ready is not None:
            ready(bound)
        with cancelled_connections_unlogged():
            await _serve_all(listeners, shutdown, linger, hurry)
        await _hand_over(data_app.plane, store, config.port)
    finally:
        await _release(sockets, cluster, refresher, store)
    log.info("stopped")


def _hands_over(store: ProjectStore | None, cluster: ClusterNode | None) -> bool:
    """Whether a stop hands the clients over to the next process: through a store that
    keeps anything at rest (``memory://`` does not: the next process would not find it),
    one process at a time (a cluster's members hand clients over to each other instead)."""
    return store is not None and store.sealed is not None and cluster is None


def _refresher(
    config: ServerConfig, store: ProjectStore | None, directory: ProjectDirectory
) -> DirectoryRefresher | None:
    """What keeps ``directory`` in step with the store's Projects: only with a control plane
    (without one every Project is implicit, and a store keeps the restart hand-over only)."""
    if store is None or config.management_key is None:
        return None
    return DirectoryRefresher(store, directory)


async def _take_over(plane: DataPlane, store: ProjectStore | None, port: int) -> None:
    """Before listening: take the clients a process stopped on ``store`` handed over."""
    if store is None or not plane.restartable:
        return
    body = await store.take_handover(handover_name(port))
    if body is not None:
        plane.take_over(body, _wall_clock_ms())


async def _hand_over(plane: DataPlane, store: ProjectStore | None, port: int) -> None:
    """After a graceful stop: leave the parked clients to the next process on ``store``."""
    if store is None or not plane.restartable:
        return
    body = plane.hand_over(_wall_clock_ms())
    if body is None:
        return
    try:
        await store.keep_handover(handover_name(port), body)
    except MatchmakerError as error:
        # The stop itself succeeded: the clients' resumes will be resume.expired.
        log.error("the restart hand-over could not be written, no client is kept: %s", error)
        return
    log.info(
        "handed %d clients over to the next process (%s); they resume there within the grace",
        len(plane.core.resumption.outboxes),
        store.description,
    )


async def _open_store(config: ServerConfig) -> ProjectStore | None:
    """The store: the Projects' when there is a control plane, else (``--store`` given) only
    the restart hand-over's; warn about options it makes moot."""
    if config.management_key is None and config.require_declared_projects:
        log.warning(
            "--require-declared-projects without a management key: no Project can be "
            "declared, only the default Project is admitted"
        )
    if config.management_key is None and config.store_url is None:
        if config.store_key_file is not None:
            log.warning("--store-key-file is ignored: without a management key nothing is stored")
        return None
    key = None if config.store_key_file is None else StoreKey.from_file(config.store_key_file)
    store = await open_store(config.store_url or DEFAULT_STORE_URL, key)
    if store.sealed is False and config.management_key is not None:
        log.warning(
            "no --store-key-file: client secrets are stored in clear in %s; anyone with "
            "a copy of it (a backup) holds every credential",
            store.description,
        )
    return store


def management_host(config: ServerConfig) -> str:
    """Where the control plane (and the metrics port) listen: ``--management-host``, else
    loopback, never ``--host``: ``--host 0.0.0.0`` opens the data plane to every
    interface, and must not open ``/admin`` with it."""
    return config.management_host or LOOPBACK


def _log_listening(
    config: ServerConfig, server_name: str, bound: Bound, store: ProjectStore | None, projects: int
) -> None:
    """One line per plane: its URL, whether the control plane is on, the store."""
    data, management, metrics = bound.data, bound.management, bound.metrics
    if store is None:
        planes = (
            "control plane off (no management key: every Project is implicit, nothing is stored)"
        )
    elif management is None:
        planes = (
            "control plane off (no management key: every Project is implicit), "
            f"store {store.description} (the restart hand-over)"
        )
    else:
        planes = f"control plane on, store {store.description}"
    log.info(
        "data plane listening on %s (WebSocket %s/ws, server %s), %s",
        url("http", *data),
        url("ws", *data),
        server_name,
        planes,
    )
    if store is not None and management is not None:
        log.info(
            "control plane listening on %s/admin, store %s, %d Projects%s",
            url("http", *management),
            store.description,
            projects,
            "" if config.management_host else " (loopback by default: --management-host to change)",
        )
    if metrics is not None:
        log.info("metrics listening on %s/metrics (no key)", url("http", *metrics))


async def _release(
    sockets: list[socket.socket],
    cluster: ClusterNode | None,
    refresher: DirectoryRefresher | None,
    store: ProjectStore | None,
) -> None:
    """Close what :func:`run` opened, in reverse order of need."""
    for sock in sockets:
        sock.close()
    if cluster is not None:
        await cluster.close()
    if refresher is not None:
        await refresher.close()
    if store is not None:
        await store.close()


async def _join_cluster(config: ServerConfig) -> ClusterNode | None:
    """With ``--cluster``: join it (imports redis); else ``None`` and nothing touches Redis."""
    if config.cluster_url is None:
        return None
    from matchmaker.cluster import open_cluster

    cluster = await open_cluster(config.cluster_url, config.cluster_name)
    log.info("joined cluster %r as member %s", config.cluster_name, cluster.node)
    return cluster


def configure_logging(config: ServerConfig) -> None:
    """Log lines to stderr from ``config.log_level`` up in ``config.log_format``.

    The process entry point's choice; tests and embedding programs keep their own.
    """
    observe_logs.configure_logging(config.log_level, config.log_format)


async def _serve_all(
    listeners: list[tuple[Serve, Listener]],
    shutdown: asyncio.Event,
    linger_s: float,
    hurry: asyncio.Event | None,
) -> None:
    """Serve every listener until ``shutdown``, and ``linger_s`` longer (:func:`_linger`)."""
    stop = asyncio.Event()
    lingering = asyncio.create_task(_linger(shutdown, stop, linger_s, hurry or asyncio.Event()))
    try:
        await asyncio.gather(*(_serve(serve, lst, shutdown, stop) for serve, lst in listeners))
    finally:
        lingering.cancel()


async def _serve(
    serve: Serve, listener: Listener, shutdown: asyncio.Event, stop: asyncio.Event
) -> None:
    try:
        await serve(listener, stop)
    finally:
        # One server stopping (or failing) stops the others at once.
        shutdown.set()
        stop.set()


async def _linger(
    shutdown: asyncio.Event, stop: asyncio.Event, linger_s: float, hurry: asyncio.Event
) -> None:
    """Once a stop begins, keep every port listening ``linger_s`` more (or until ``hurry``
    is set), then stop the servers.

    Meanwhile WebSockets are closed with 1001 (new ones at once) and ``/readyz`` answers
    503 ``server.shutting_down``: a load balancer probing it sees the node leave instead
    of a refused connection (hypercorn stops accepting as soon as it is told to stop).
    """
    await shutdown.wait()
    if linger_s > 0:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(hurry.wait(), linger_s)
    stop.set()


def _listen(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise _bind_error(host, port, exc) from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted sockets inherit it: small frames go out at once, not after a delayed ACK
        # (asyncio sets it on each socket hypercorn accepts, picows on each it accepts too).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
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


def url(scheme: str, host: str, port: int) -> str:
    """``scheme://host:port``, the host bracketed when it is an IPv6 address."""
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def _wall_clock_ms() -> int:
    """Epoch milliseconds: the core's clock, read where the hand-over is taken and written."""
    return int(time.time() * 1000)


def _bind_error(host: str, port: int, exc: OSError) -> MatchmakerError:
    return MatchmakerError(f"cannot listen on {host}:{port}: {exc}", code="server.bind_failed")
