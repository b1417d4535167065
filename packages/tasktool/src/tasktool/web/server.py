"""Serving the dashboard with hypercorn: bind, banner, run until stopped.

``web.host``/``--host`` picks the address (``127.0.0.1`` by default). Any
bind that is not loopback prints a banner naming what it exposes: every task,
and editing unless read-only, to anyone who can reach the address, with no
authentication.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from hypercorn.asyncio import serve
from hypercorn.config import Config, Sockets
from hypercorn.typing import Framework

from tasktool.model.errors import TaskToolError
from tasktool.web.app import WebConfig, create_app
from tasktool.web.events import ChangeFeed
from tasktool.web.security import allowed_hosts, is_loopback, is_wildcard

__all__ = ["GRACE_S", "Bound", "exposure_banner", "listen", "run", "serve_until_signalled"]

GRACE_S = 2.0


@dataclass(frozen=True)
class Bound:
    """Where the dashboard listens."""

    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"


def exposure_banner(host: str, *, readonly: bool) -> str | None:
    """The warning a non-loopback bind prints, or ``None`` on loopback."""
    if is_loopback(host):
        return None
    what = "every task, read-only" if readonly else "every task, and editing them"
    advice = (
        ""
        if readonly
        else "\n  Remote viewing is safer read-only: --readonly (web.readonly: true)."
    )
    return (
        f"WARNING: the dashboard listens on {host or 'every interface'}, not loopback.\n"
        f"  It exposes {what}, to anyone who can reach this address: there is no\n"
        "  authentication. Restrict access at the host (firewall, VPN, an\n"
        f"  authenticating reverse proxy).{advice}"
    )


class _BoundConfig(Config):
    """A hypercorn Config serving one socket bound beforehand (so port 0 works)."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock
        self.graceful_timeout = GRACE_S
        self.accesslog = None
        self.errorlog = logging.getLogger("hypercorn.error")

    def create_sockets(self) -> Sockets:
        return Sockets(secure_sockets=[], insecure_sockets=[self._sock], quic_sockets=[])


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; ``web.bind_failed`` when that is impossible."""
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise TaskToolError(
            f"cannot listen on {host}:{port}: {exc}", code="web.bind_failed"
        ) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6 and is_wildcard(host):  # "::" takes IPv4 too
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise TaskToolError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}", code="web.bind_failed"
        ) from None
    return sock


async def run(
    config: WebConfig,
    sock: socket.socket,
    *,
    shutdown: asyncio.Event,
    ready: Callable[[Bound], None] | None = None,
    name: str | None = None,
) -> None:
    """Serve ``config`` on ``sock`` until ``shutdown`` is set.

    The ``Host`` rule (see :mod:`tasktool.web.security`) accepts the socket's address
    and ``name``, the host name it was asked to bind.
    """
    host, port = sock.getsockname()[:2]
    hosts = allowed_hosts(host, port)
    if hosts is not None and name:
        hosts |= allowed_hosts(name, port) or frozenset()
    feed = ChangeFeed(config.task_dir, config.ignore, config.siblings)
    bound_config = dataclasses.replace(config, hosts=hosts, feed=feed)
    app = create_app(bound_config)

    async def stop() -> None:
        await shutdown.wait()
        await feed.close()  # ends the event streams, so the shutdown does not wait on them

    await feed.start()
    try:
        if ready is not None:
            ready(Bound(host=host, port=port))
        await serve(cast(Framework, app), _BoundConfig(sock), shutdown_trigger=stop)
    finally:
        await feed.close()


def serve_until_signalled(
    config: WebConfig, sock: socket.socket, ready: Callable[[Bound], None], name: str
) -> None:
    """The ``web start`` process: serve until SIGINT or SIGTERM."""

    async def main() -> None:
        shutdown = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, shutdown.set)
        await run(config, sock, shutdown=shutdown, ready=ready, name=name)

    asyncio.run(main())
