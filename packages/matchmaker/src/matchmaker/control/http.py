"""HTTP plumbing of the control plane: bounded JSON request bodies.

JSON responses and coded errors are shared with the data port
(:mod:`matchmaker.jsonhttp`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from matchmaker.errors import MatchmakerError
from matchmaker.jsonhttp import JSON

MAX_BODY_BYTES = 1024 * 1024


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
