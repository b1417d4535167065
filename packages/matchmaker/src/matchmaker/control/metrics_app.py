"""The app of ``--metrics-port``: ``GET /metrics`` without the management key, nothing else."""

from __future__ import annotations

from collections.abc import Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from matchmaker.control.live import metrics_response
from matchmaker.jsonhttp import EXCEPTION_HANDLERS

__all__ = ["create_metrics_app"]


def create_metrics_app(exposition: Callable[[], bytes]) -> Starlette:
    """Serve ``exposition`` at ``GET /metrics``; every other path is a coded 404."""

    async def metrics(request: Request) -> Response:
        return metrics_response(exposition)

    return Starlette(
        routes=[Route("/metrics", metrics, methods=["GET"])], exception_handlers=EXCEPTION_HANDLERS
    )
