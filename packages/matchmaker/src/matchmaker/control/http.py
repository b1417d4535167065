"""HTTP plumbing of the control plane: JSON responses, coded errors, bounded bodies."""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from matchmaker.errors import MatchmakerError

MAX_BODY_BYTES = 1024 * 1024
JSON = "application/json"

STATUS_BY_CODE = {
    "auth.unauthorized": 401,
    "request.malformed_json": 400,
    "request.invalid": 400,
    "request.unsupported_media_type": 415,
    "request.too_large": 413,
    "project.reserved_id": 400,
    "project.exists": 409,
    "project.secret_in_use": 409,
    "project.not_found": 404,
    "route.not_found": 404,
    "method.not_allowed": 405,
    "store.unavailable": 503,
}
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
    return json_response({"error": error.to_payload()}, status, headers)


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


async def read_json_body(request: Request, media_types: tuple[str, ...] = (JSON,)) -> bytes:
    """The request body, after checking its media type and without ever holding >1 MiB.

    A declared ``Content-Length`` over the limit is refused before reading a
    byte; a body without one is read until it passes the limit, no further.
    """
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type not in media_types:
        raise MatchmakerError(
            f"the body must be {' or '.join(media_types)}, not {media_type or 'absent'!r}",
            code="request.unsupported_media_type",
        )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _too_large()
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large() -> MatchmakerError:
    return MatchmakerError(
        f"the body is larger than {MAX_BODY_BYTES} bytes", code="request.too_large"
    )


class CloseUnreadBodies:
    """ASGI middleware: answer ``Connection: close`` when the request body was not read.

    Error responses (401, 405, 413, 415, 404) and body-less endpoints answer
    without reading what the client sent. hypercorn then drops the connection
    silently if the body is still arriving, and a client reusing it sees a
    reset; saying so in the response makes the client open a new connection.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_body(scope):
            await self._app(scope, receive, send)
            return
        finished = False

        async def tracking_receive() -> Message:
            nonlocal finished
            message = await receive()
            finished = finished or not message.get("more_body", False)
            return message

        async def closing_send(message: Message) -> None:
            if message["type"] == "http.response.start" and not finished:
                headers = [*message.get("headers", []), (b"connection", b"close")]
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, tracking_receive, closing_send)


def _has_body(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"transfer-encoding" or (name == b"content-length" and value != b"0"):
            return True
    return False
