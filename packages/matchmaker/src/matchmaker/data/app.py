"""The data-plane ASGI app: ``GET /ws`` (the WebSocket protocol), ``/healthz``, ``/readyz``
and the browser playground at ``GET /`` with the JavaScript client it runs (``/js/``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from matchmaker.asgi import Receive, Scope, Send
from matchmaker.config import ServerConfig
from matchmaker.data.connection import HARD_CAP_FACTOR
from matchmaker.data.plane import ClusterHooks, DataPlane
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
    ``GET /`` is the playground, and ``GET /js/<file>.js`` the JavaScript client it
    imports (clients/js, built), unless ``config.no_playground``.
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
    playground = [
        Route("/", _playground, methods=["GET"]),
        Route("/js/{name}", _client_script, methods=["GET"]),
    ]
    http = Starlette(
        routes=[
            *([] if config.no_playground else playground),
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


# The page loads nothing from elsewhere: styles are inline, scripts inline or the client
# module this port serves (``script-src 'self'``), the only connection is its own WebSocket
# (``connect-src 'self'``).
_PLAYGROUND_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; "
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


# The built JavaScript client, copied into the package by ``npm run sync`` in clients/js.
_CLIENT_FILES = resources.files("matchmaker.data").joinpath("js")


async def _client_script(request: Request) -> Response:
    """``GET /js/<name>.js``: a module of the JavaScript client the playground imports."""
    name = str(request.path_params["name"])
    script = _CLIENT_FILES.joinpath(name)
    if not name.endswith(".js") or name.startswith(".") or not script.is_file():
        raise HTTPException(404)
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
    return Response(script.read_bytes(), media_type="text/javascript", headers=headers)
