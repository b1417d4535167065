"""The data-plane ASGI app: ``GET /ws`` (the WebSocket protocol), ``/healthz``, ``/readyz``
and the browser playground at ``GET /``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from matchmaker.config import ServerConfig
from matchmaker.data.connection import HARD_CAP_FACTOR
from matchmaker.data.plane import ClusterHooks, DataPlane, Receive, Scope, Send
from matchmaker.directory import ProjectDirectory
from matchmaker.jsonhttp import EXCEPTION_HANDLERS, Readiness
from matchmaker.observe.metrics import Metrics

__all__ = ["DataApp", "create_data_app", "websocket_max_message_size"]


def websocket_max_message_size(config: ServerConfig) -> int:
    """The hard cap to give the server (hypercorn's ``websocket_max_message_size``).

    Frames up to this size are read and answered ``protocol.too_large`` when over
    ``max_frame_bytes``; larger ones make hypercorn close the socket with 1009
    before buffering them. A server without such an option (granian) hands them
    to the connection, which closes with 1009 too.
    """
    return HARD_CAP_FACTOR * config.limits.max_frame_bytes


class DataApp:
    """``/ws`` goes straight to the :class:`DataPlane`; everything else to a Starlette app.

    The WebSocket skips Starlette's middleware stack on purpose: it wraps every
    ``send``, and a relay sends one frame per message.
    """

    def __init__(self, plane: DataPlane, http: Starlette) -> None:
        self.plane = plane
        self.http = http

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope["path"] == "/ws":
            await self.plane(scope, receive, send)
        else:
            await self.http(scope, receive, send)


def create_data_app(
    config: ServerConfig,
    directory: ProjectDirectory,
    *,
    shutdown: asyncio.Event,
    store_probe: Callable[[], Awaitable[None]] | None = None,
    cluster: ClusterHooks | None = None,
    metrics: Metrics | None = None,
) -> DataApp:
    """The app served on ``config.port``.

    ``shutdown`` is set when the process begins a graceful stop: the data plane
    then closes every WebSocket with code 1001 so the server can finish, and
    ``/readyz`` answers 503 ``server.shutting_down`` until the server stops listening. The
    lifespan (run by hypercorn) starts and stops the plane's timers.
    ``store_probe`` (the store's ``ping``) makes ``GET /readyz`` answer 503
    while the Project store cannot answer; it also does during shutdown.
    ``metrics`` receives the data plane's counters (a private set without it).
    ``GET /`` is the playground unless ``config.no_playground``.
    """
    plane = DataPlane(config, directory, shutdown, metrics, cluster)

    async def healthz(request: Request) -> JSONResponse:
        """Liveness: ``{"status": "ok", "connections": n, "clients": n}``, plus ``cluster``
        (this member, the live members, whether Redis answers) with ``--cluster``."""
        body: dict[str, object] = {
            "status": "ok",
            "connections": len(plane.open),
            "clients": len(plane.clients),
        }
        if cluster is not None:
            body["cluster"] = cluster.describe()
        return JSONResponse(body)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        plane.start()
        try:
            yield
        finally:
            await plane.stop()

    # Any other path (``/admin`` included: it is never served here) is a coded JSON 404.
    playground = [] if config.no_playground else [Route("/", _playground, methods=["GET"])]
    http = Starlette(
        routes=[
            *playground,
            Route("/healthz", healthz, methods=["GET"]),
            Route(
                "/readyz",
                Readiness(
                    store_probe,
                    stopping=shutdown.is_set,
                    cluster_available=None if cluster is None else lambda: cluster.available,
                ).respond,
                methods=["GET"],
            ),
        ],
        lifespan=lifespan,
        exception_handlers=EXCEPTION_HANDLERS,
    )
    return DataApp(plane, http)


# The page loads nothing from elsewhere: scripts and styles are inline, the only connection
# is its own WebSocket (``connect-src 'self'``).
_PLAYGROUND_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


async def _playground(request: Request) -> HTMLResponse:
    """``GET /``: the one-page playground (``--no-playground`` turns it off)."""
    page = resources.files("matchmaker.data").joinpath("playground.html").read_text("utf-8")
    return HTMLResponse(page, headers=_PLAYGROUND_HEADERS)
