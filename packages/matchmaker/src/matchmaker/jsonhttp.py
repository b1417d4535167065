"""JSON over HTTP for both ports: responses, and coded errors as ``{"error": {...}}``.

The control plane raises :class:`~matchmaker.errors.MatchmakerError`; routing's
404 and 405 and unexpected failures become the same body, on the data port too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from matchmaker.errors import STATUS_BY_CODE, MatchmakerError, internal_error
from mtcommon import render_json

__all__ = [
    "EXCEPTION_HANDLERS",
    "JSON",
    "READY",
    "error_response",
    "json_response",
    "on_coded_error",
    "on_http_error",
    "on_unexpected",
]

JSON = "application/json"
READY = {"status": "ready"}

# Codes whose message may carry internals (driver exceptions, DSNs): the log gets the
# message, the client this one.
_PUBLIC_MESSAGES = {"store.unavailable": "the Project store is unavailable; retry later"}

log = logging.getLogger("matchmaker.http")
_CODE_BY_HTTP_STATUS = {404: "route.not_found", 405: "method.not_allowed"}


def json_response(
    value: Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """``value`` (Structs, dicts, lists) encoded by msgspec."""
    return Response(msgspec.json.encode(value), status_code, headers, media_type=JSON)


def error_response(error: MatchmakerError, headers: dict[str, str] | None = None) -> Response:
    """``{"error": {"code", "message", "details"?}}`` with the status the code maps to."""
    status = STATUS_BY_CODE.get(error.code, 500)
    headers = dict(headers or {})
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="admin"'
    return json_response(render_json(error), status, headers)


async def on_coded_error(request: Request, exc: Exception) -> Response:
    """Exception handler: a ``MatchmakerError`` raised by an endpoint."""
    assert isinstance(exc, MatchmakerError)
    public = _PUBLIC_MESSAGES.get(exc.code)
    if public is not None:
        log.warning("%s %s: %s [%s]", request.method, request.url.path, exc.message, exc.code)
        exc = MatchmakerError(public, code=exc.code)
    return error_response(exc)


async def on_http_error(request: Request, exc: Exception) -> Response:
    """Exception handler: routing's 404 and 405 (with its ``Allow`` header) as JSON."""
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        message = f"{request.method} is not allowed here; allowed: {headers.get('Allow')}"
    else:
        message = f"nothing at {request.url.path}"
    code = _CODE_BY_HTTP_STATUS.get(exc.status_code, "request.invalid")
    return error_response(MatchmakerError(message, code=code), headers)


async def on_unexpected(request: Request, exc: Exception) -> Response:
    """Exception handler of last resort: a bug is a 500 with a JSON body, never a traceback."""
    return error_response(internal_error())


class Readiness:
    """``GET /readyz`` on either port: 200 while ``probe`` passes (and, with
    ``cluster_available``, the cluster's Redis answers), else 503 without internals.

    ``probe`` raises a ``MatchmakerError`` (or times out) when a dependency
    cannot answer; the reason goes to the log once per change of state.
    """

    def __init__(
        self,
        probe: Callable[[], Awaitable[None]] | None,
        *,
        timeout_s: float = 2.0,
        stopping: Callable[[], bool] = lambda: False,
        cluster_available: Callable[[], bool] | None = None,
    ) -> None:
        self._probe = probe
        self._timeout_s = timeout_s
        self._stopping = stopping
        self._cluster_available = cluster_available
        self._ready = True

    async def respond(self, request: Request) -> Response:
        """The endpoint: the probe runs now (unless stopping or the cluster is down)."""
        if self._elsewhere() is None:
            await self.check()
        error = self.verdict()
        return json_response(READY) if error is None else error_response(error)

    async def check(self) -> None:
        """Run the probe and remember its result for :meth:`verdict`."""
        if self._probe is None:
            return
        try:
            async with asyncio.timeout(self._timeout_s):
                await self._probe()
        except (MatchmakerError, TimeoutError) as exc:
            if self._ready:
                log.warning("not ready: %s", _reason(exc))
                self._ready = False
            return
        if not self._ready:
            log.info("ready again: the Project store answers")
            self._ready = True

    def verdict(self) -> MatchmakerError | None:
        """Why the server is not ready by the last :meth:`check` (``None``: it is ready)."""
        error = self._elsewhere()
        if error is None and not self._ready:
            return MatchmakerError("the Project store is unreachable", code="store.unavailable")
        return error

    def _elsewhere(self) -> MatchmakerError | None:
        """Not ready for a reason other than the store: stopping, or the cluster down."""
        if self._stopping():
            return MatchmakerError("the server is shutting down", code="server.shutting_down")
        if self._cluster_available is not None and not self._cluster_available():
            # The cluster member logs the outage and the recovery itself.
            return MatchmakerError(
                "the cluster's Redis cannot be reached", code="cluster.unavailable"
            )
        return None


def _reason(exc: Exception) -> str:
    if isinstance(exc, MatchmakerError):
        return f"{exc.message} [{exc.code}]"
    return "the Project store did not answer in time"


EXCEPTION_HANDLERS = {
    MatchmakerError: on_coded_error,
    HTTPException: on_http_error,
    Exception: on_unexpected,
}
