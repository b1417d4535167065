"""The data-plane ASGI app (placeholder: ``/healthz`` only until the WebSocket plane lands)."""

from __future__ import annotations

import asyncio

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from matchmaker.config import ServerConfig
from matchmaker.directory import ProjectDirectory


async def _healthz(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


def create_data_app(
    config: ServerConfig, directory: ProjectDirectory, *, shutdown: asyncio.Event
) -> Starlette:
    """The app served on ``config.port``.

    ``shutdown`` is set when the process begins a graceful stop: the data plane
    then closes every WebSocket with code 1001 so hypercorn can finish.
    """
    return Starlette(routes=[Route("/healthz", _healthz)])
