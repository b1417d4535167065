"""JSON over HTTP for both ports: responses, and coded errors as ``{"error": {...}}``.

The control plane raises :class:`~matchmaker.errors.MatchmakerError`; routing's
404 and 405 and unexpected failures become the same body, on the data port too.
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from matchmaker.errors import STATUS_BY_CODE, MatchmakerError
from mtcommon import render_json

__all__ = [
    "EXCEPTION_HANDLERS",
    "JSON",
    "error_response",
    "json_response",
    "on_coded_error",
    "on_http_error",
    "on_unexpected",
]

JSON = "application/json"

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
    return error_response(MatchmakerError("internal error", code="server.internal"))


EXCEPTION_HANDLERS = {
    MatchmakerError: on_coded_error,
    HTTPException: on_http_error,
    Exception: on_unexpected,
}
