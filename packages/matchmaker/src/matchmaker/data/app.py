"""The data-plane ASGI app: ``GET /ws`` (the WebSocket protocol) and ``GET /healthz``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute

from matchmaker.config import ServerConfig
from matchmaker.data.plane import DataPlane
from matchmaker.directory import ProjectDirectory

__all__ = ["create_data_app"]


def create_data_app(
    config: ServerConfig, directory: ProjectDirectory, *, shutdown: asyncio.Event
) -> Starlette:
    """The app served on ``config.port``.

    ``shutdown`` is set when the process begins a graceful stop: the data plane
    then closes every WebSocket with code 1001 so hypercorn can finish. The
    :class:`DataPlane` is reachable as ``app.state.plane``.
    """
    plane = DataPlane(config, directory, shutdown)

    async def healthz(request: Request) -> JSONResponse:
        """Liveness: ``{"status": "ok", "connections": n, "clients": n}``."""
        return JSONResponse(
            {"status": "ok", "connections": len(plane.open), "clients": len(plane.clients)}
        )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        plane.start()
        try:
            yield
        finally:
            await plane.stop()

    app = Starlette(
        routes=[Route("/healthz", healthz), WebSocketRoute("/ws", plane)], lifespan=lifespan
    )
    app.state.plane = plane
    return app
