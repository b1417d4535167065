"""The dashboard's ASGI application: ``create_app(config)``.

::

    app = create_app(WebConfig(load=loader(overrides), task_dir=Path("tasks")))

Every request loads the tasks afresh through ``config.load`` (the scan cache
keeps that cheap), so the answers follow the files on disk, except that a
large repository is kept between requests until the change feed reports a
change (:mod:`tasktool.web.snapshot`); blocking file work runs in a worker
thread. Errors are ``{"error": {"code", "message"}}``
with the status the error catalogue
(``tasktool.model.errors``) gives its code; no traceback reaches a client.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from mtcommon import CodedError
from tasktool.model.errors import TaskToolError, http_status
from tasktool.planning.repository import Loader, Repository
from tasktool.web import api, routes
from tasktool.web.events import ChangeFeed
from tasktool.web.security import RequestGuard
from tasktool.web.snapshot import KEEP_FROM, Snapshot

__all__ = ["STATIC_DIR", "WebConfig", "create_app", "log"]

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).parent / "static"


@dataclass(frozen=True)
class WebConfig:
    """What one dashboard serves and how."""

    load: Loader
    task_dir: Path
    ignore: tuple[str, ...] = ()
    readonly: bool = False
    #: ``Host`` values accepted (``None``: any; see :mod:`tasktool.web.security`).
    hosts: frozenset[str] | None = frozenset()
    #: The change feed, when the server runs it; else the app's lifespan runs its own.
    feed: ChangeFeed | None = None
    #: Sibling worktrees' task directories (with their ignore lists) the feed watches too.
    siblings: tuple[tuple[Path, tuple[str, ...]], ...] = ()
    #: Task files from which a load is kept between requests (:mod:`tasktool.web.snapshot`).
    keep_from: int = KEEP_FROM

    @classmethod
    def serving(cls, load: Loader, repo: Repository, *, readonly: bool = False) -> WebConfig:
        """The dashboard of ``repo`` (a first load of ``load``): its task directory and,
        with the worktree overlay, its siblings' watched for live reload."""
        own, *siblings = repo.watched
        return cls(
            load=load, task_dir=own[0], ignore=own[1], readonly=readonly, siblings=tuple(siblings)
        )


def create_app(config: WebConfig) -> RequestGuard:
    """The dashboard: JSON API under ``/api``, pages, ``/static``, behind the request guard."""
    owned = config.feed is None
    feed = config.feed or ChangeFeed(config.task_dir, config.ignore, config.siblings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if owned:
            await feed.start()
        try:
            yield
        finally:
            if owned:
                await feed.close()

    app = Starlette(
        routes=[
            *api.ROUTES,
            *routes.ROUTES,
            Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
        ],
        lifespan=lifespan,
        exception_handlers={
            CodedError: _coded_error,
            404: _not_found,
            405: _method_not_allowed,  # Starlette's own answer is plain text
            Exception: _internal_error,
        },
    )
    app.state.config = config
    app.state.feed = feed
    app.state.snapshot = Snapshot(config.load, feed, config.keep_from)
    return RequestGuard(app, hosts=config.hosts)


def _wants_html(request: Request) -> bool:
    return not request.url.path.startswith("/api/")


async def _coded_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, CodedError)
    status = http_status(exc.code)
    if status >= 500:
        log.warning("%s %s: %s [%s]", request.method, request.url.path, exc.message, exc.code)
    if _wants_html(request):
        return routes.error_response(request, exc, status)
    return api.error_response(exc, status)


async def _not_found(request: Request, exc: Exception) -> Response:
    error = TaskToolError(f"no page at {request.url.path}", code="web.not_found")
    return await _coded_error(request, error)


async def _method_not_allowed(request: Request, exc: Exception) -> Response:
    allowed = getattr(exc, "headers", None) or {}
    error = TaskToolError(
        f"{request.method} is not allowed on {request.url.path}"
        + (f" (allowed: {allowed['Allow']})" if "Allow" in allowed else ""),
        code="web.method_not_allowed",
    )
    response = await _coded_error(request, error)
    response.headers.update(allowed)  # ``Allow``, as a 405 must say
    return response


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.exception("%s %s failed", request.method, request.url.path)
    error = TaskToolError(f"internal error: {type(exc).__name__}", code="tasktool.internal")
    if _wants_html(request):
        return routes.error_response(request, error, 500)
    return api.error_response(error, 500)
