"""The data-plane app: ``GET /ws`` (the WebSocket protocol), ``/healthz``, ``/readyz``
and the browser playground at ``GET /`` with the JavaScript client it runs (``/js/``).

It is an ASGI app (hypercorn) and a frame app
(:class:`~matchmaker.servers.base.FrameApp`, picows): both answer every GET from the
same functions below, so bodies and headers are the same whichever server runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources
from urllib.parse import unquote

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from matchmaker.asgi import Receive, Scope, Send
from matchmaker.config import ServerConfig
from matchmaker.data.connection import HARD_CAP_FACTOR
from matchmaker.data.direct import DirectConnection, Peer
from matchmaker.data.plane import ClusterHooks, DataPlane
from matchmaker.data.upgrade import upgrade_refusal
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import STATUS_BY_CODE, MatchmakerError
from matchmaker.jsonhttp import EXCEPTION_HANDLERS, JSON, READY, Readiness
from matchmaker.observe.metrics import Metrics
from mtcommon import render_json

_log = logging.getLogger("matchmaker.http")

# (status, headers, body): a whole response, computed without awaiting.
Answer = tuple[int, dict[str, str], bytes]

# How often a frame server's ``/readyz`` answer is refreshed (the store probed).
READINESS_REFRESH_S = 1.0

__all__ = ["DataApp", "create_data_app", "websocket_max_message_size"]


def websocket_max_message_size(config: ServerConfig) -> int:
    """The hard cap to give the server (hypercorn's ``websocket_max_message_size``,
    picows's ``max_frame_size``).

    Frames up to this size are read and answered ``protocol.too_large`` when over
    ``max_frame_bytes``; larger ones make hypercorn and picows close the socket
    with 1009 before buffering them. A WebRTC data channel has no such option and hands
    them to the connection, which closes with 1009 too.
    """
    return HARD_CAP_FACTOR * config.limits.max_frame_bytes


class DataApp:
    """``/ws`` goes straight to the :class:`DataPlane`; everything else to a Starlette app.

    The WebSocket skips Starlette's middleware stack on purpose: it wraps every
    ``send``, and a relay sends one frame per message. A frame server (picows) calls
    :meth:`open_socket`, :meth:`answer_get`, :meth:`startup` and :meth:`shutdown`
    instead: its ``/readyz`` is the last background check's answer, since a GET is
    answered without awaiting.
    """

    def __init__(
        self,
        plane: DataPlane,
        http: Starlette,
        routes: dict[str, Callable[[], Answer]],
        readiness: Readiness,
    ) -> None:
        self.plane = plane
        self.http = http
        self._routes = routes
        self._readiness = readiness
        self._refresh: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope["path"] == "/ws":
            await self.plane(scope, receive, send)
        else:
            await self.http(scope, receive, send)

    def open_socket(self, peer: Peer) -> DirectConnection | None:
        """A WebSocket upgraded by a frame server (``None`` while shutting down)."""
        return self.plane.open_direct(peer)

    def answer_get(self, target: str, headers: list[tuple[bytes, bytes]]) -> Answer | None:
        """The response to ``GET target`` (a path, maybe with a query); ``None`` for an
        upgrade to ``/ws`` that is well formed (:func:`upgrade_refusal`)."""
        path = unquote(target.partition("?")[0])
        if (b"upgrade", b"websocket") in ((name, value.lower()) for name, value in headers):
            refusal = upgrade_refusal({"headers": headers}) if path == "/ws" else "elsewhere"
            if refusal is None:
                return None
            if path == "/ws":
                return _error(MatchmakerError(refusal, code="request.invalid"))
            # A WebSocket anywhere else is denied, as ASGI servers deny it (403).
            return 403, *_error(_nothing_at(path))[1:]
        route = self._routes.get(path)
        if route is not None:
            return route()
        if path.startswith("/js/") and "/" in self._routes:
            return _client_script(path.removeprefix("/js/"))
        return _error(_nothing_at(path))

    async def startup(self) -> None:
        """A frame server's lifespan start: the plane's timers and the readiness checks."""
        self.plane.start()
        self._refresh = asyncio.create_task(self._refresh_readiness())

    async def shutdown(self) -> None:
        """A frame server's lifespan end."""
        if self._refresh is not None:
            self._refresh.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresh
        await self.plane.stop()

    def _ready(self) -> Answer:
        """``/readyz`` for a frame server: the last check's verdict."""
        error = self._readiness.verdict()
        return _json(READY) if error is None else _error(error)

    async def _refresh_readiness(self) -> None:
        while True:
            try:
                await self._readiness.check()
            except Exception:
                # A probe that fails otherwise than coded must not end the checks.
                _log.exception("the readiness check failed")
            await asyncio.sleep(READINESS_REFRESH_S)


def create_data_app(
    config: ServerConfig,
    directory: ProjectDirectory,
    *,
    shutdown: asyncio.Event,
    store_probe: Callable[[], Awaitable[None]] | None = None,
    cluster: ClusterHooks | None = None,
    metrics: Metrics | None = None,
    restartable: bool = False,
) -> DataApp:
    """The app served on ``config.port``.

    ``shutdown`` is set when the process begins a graceful stop: the data plane
    then closes every WebSocket with code 1001 so the server can finish (3001 when
    ``restartable``: the clients are handed over to the next process), and
    ``/readyz`` answers 503 ``server.shutting_down`` until the server stops listening. The
    lifespan (run by hypercorn) starts and stops the plane's timers.
    ``store_probe`` (the store's ``ping``) makes ``GET /readyz`` answer 503
    while the Project store cannot answer; it also does during shutdown.
    ``metrics`` receives the data plane's counters (a private set without it).
    ``GET /`` is the playground, and ``GET /js/<file>.js`` the JavaScript client it
    imports (clients/js, built), unless ``config.no_playground``.
    """
    plane = DataPlane(config, directory, shutdown, metrics, cluster, restartable=restartable)

    def health() -> Answer:
        """Liveness: ``{"status": "ok", "connections": n, "clients": n}``, plus ``cluster``
        (this member, the live members, whether Redis answers) with ``--cluster``."""
        body: dict[str, object] = {
            "status": "ok",
            "connections": len(plane.open),
            "clients": len(plane.clients),
        }
        if cluster is not None:
            body["cluster"] = cluster.describe()
        return _json(body)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        plane.start()
        try:
            yield
        finally:
            await plane.stop()

    readiness = Readiness(
        store_probe,
        stopping=shutdown.is_set,
        cluster_available=None if cluster is None else lambda: cluster.available,
    )
    routes: dict[str, Callable[[], Answer]] = {"/healthz": health}
    if not config.no_playground:
        routes["/"] = _playground
    # Any other path (``/admin`` included: it is never served here) is a coded JSON 404.
    http = Starlette(
        routes=[
            *(Route(path, _endpoint(answer), methods=["GET"]) for path, answer in routes.items()),
            *([] if config.no_playground else [Route("/js/{name}", _script, methods=["GET"])]),
            Route("/readyz", readiness.respond, methods=["GET"]),
        ],
        lifespan=lifespan,
        exception_handlers=EXCEPTION_HANDLERS,
    )
    app = DataApp(plane, http, routes, readiness)
    routes["/readyz"] = app._ready
    return app


def _endpoint(answer: Callable[[], Answer]) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette endpoint for a GET answered without awaiting."""

    async def endpoint(request: Request) -> Response:
        return _response(answer())

    return endpoint


async def _script(request: Request) -> Response:
    return _response(_client_script(str(request.path_params["name"])))


def _response(answer: Answer) -> Response:
    status, headers, body = answer
    return Response(body, status, headers)


def _json(value: object, status: int = 200) -> Answer:
    return status, {"Content-Type": JSON}, msgspec.json.encode(value)


def _nothing_at(path: str) -> MatchmakerError:
    return MatchmakerError(f"nothing at {path}", code="route.not_found")


def _error(error: MatchmakerError) -> Answer:
    """A coded error as the JSON body every port answers (:mod:`matchmaker.jsonhttp`)."""
    return _json(render_json(error), STATUS_BY_CODE.get(error.code, 500))


# The page loads nothing from elsewhere: styles are inline, scripts inline or the client
# module this port serves (``script-src 'self'``), the only connection is its own WebSocket
# (``connect-src 'self'``).
_PLAYGROUND_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _playground() -> Answer:
    """``GET /``: the one-page playground (``--no-playground`` turns it off)."""
    page = resources.files("matchmaker.data").joinpath("playground.html").read_bytes()
    return 200, _PLAYGROUND_HEADERS, page


# The built JavaScript client, copied into the package by ``npm run sync`` in clients/js.
_CLIENT_FILES = resources.files("matchmaker.data").joinpath("js")
_SCRIPT_HEADERS = {
    "Content-Type": "text/javascript",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}


def _client_script(name: str) -> Answer:
    """``GET /js/<name>.js``: a module of the JavaScript client the playground imports."""
    script = _CLIENT_FILES.joinpath(name)
    if "/" in name or not name.endswith(".js") or name.startswith(".") or not script.is_file():
        return _error(_nothing_at(f"/js/{name}"))
    return 200, _SCRIPT_HEADERS, script.read_bytes()
