"""HTTP plumbing of the control plane: bounded JSON request bodies, and answers for
requests the shutdown grace cuts off.

JSON responses and coded errors are shared with the data port
(:mod:`matchmaker.jsonhttp`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from starlette.requests import ClientDisconnect, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from matchmaker.config import ControlLimits
from matchmaker.errors import MatchmakerError
from matchmaker.jsonhttp import JSON, error_response

log = logging.getLogger("matchmaker.control")


DRAIN_BYTES = 64 * 1024 * 1024
"""The most of a too-large body that is read (and thrown away) before the ``413``, so that
a client still sending it reads the answer instead of a reset; past it, or past
``body_timeout_s``, the answer goes out at once with ``Connection: close``."""


async def read_json_body(
    request: Request, limits: ControlLimits, media_types: tuple[str, ...] = (JSON,)
) -> bytes:
    """The request body, after checking its media type, never holding more than the limit.

    A body over ``max_body_bytes`` is ``request.too_large`` (413). Its rest is read
    and dropped first, up to :data:`DRAIN_BYTES`: a client writing its whole body
    before it reads (most do) would otherwise see its connection reset mid-write
    and never read the answer. A declared ``Content-Length`` over ``DRAIN_BYTES`` is
    answered after the headers, without reading a byte. A body that has not fully
    arrived after ``body_timeout_s`` is ``request.timeout`` (408), or the 413 if it
    was already too large, so a slow or stalled client cannot hold a request open.
    A client that goes away mid-body is logged at debug: it is the client's doing,
    not a server fault.
    """
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type not in media_types:
        raise MatchmakerError(
            f"the body must be {' or '.join(media_types)}, not {media_type or 'absent'!r}",
            code="request.unsupported_media_type",
        )
    reading = _Reading(limits.max_body_bytes, max(DRAIN_BYTES, limits.max_body_bytes))
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > reading.drain:
        raise _too_large(limits)
    try:
        async with asyncio.timeout(limits.body_timeout_s):
            await reading.read(request)
    except TimeoutError:
        if reading.size > limits.max_body_bytes:
            raise _too_large(limits) from None
        raise MatchmakerError(
            f"the body did not arrive within {limits.body_timeout_s:g} s (--body-timeout-s)",
            code="request.timeout",
            details={"limit": "body_timeout_s"},
        ) from None
    except ClientDisconnect:
        log.debug("client disconnected before sending the whole body of %s", request.url.path)
        raise MatchmakerError("the client went away", code="request.aborted") from None
    if reading.size > limits.max_body_bytes:
        raise _too_large(limits)
    return b"".join(reading.chunks)


class _Reading:
    """A body as it arrives: its chunks while within ``limit``, then only its size (the
    rest is dropped), until it ends or passes ``drain`` bytes."""

    def __init__(self, limit: int, drain: int) -> None:
        self.limit = limit
        self.drain = drain
        self.size = 0
        self.chunks: list[bytes] = []

    async def read(self, request: Request) -> None:
        async for chunk in request.stream():
            self.size += len(chunk)
            if self.size <= self.limit:
                self.chunks.append(chunk)
                continue
            self.chunks.clear()
            if self.size > self.drain:
                return


def _too_large(limits: ControlLimits) -> MatchmakerError:
    return MatchmakerError(
        f"the body is larger than {limits.max_body_bytes} bytes (--max-body-bytes)",
        code="request.too_large",
        details={"limit": "max_body_bytes"},
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


class AnswerWhenCutOff:
    """ASGI middleware: a request still running when the shutdown grace ends gets the
    documented error body, ``503 server.shutting_down``, instead of hypercorn's bare 500.

    At the end of ``--shutdown-grace`` hypercorn cancels the request's task and,
    when no response was started, writes a ``500`` with no body of its own. The
    cancellation is caught here only to send the answer first; it is re-raised.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._app(scope, receive, tracking_send)
        except asyncio.CancelledError:
            if not started:
                error = MatchmakerError(
                    "the server stopped before the request finished (--shutdown-grace); "
                    "it may or may not have been applied: read the Project back, or retry",
                    code="server.shutting_down",
                )
                response = error_response(error, {"Connection": "close"})
                with contextlib.suppress(Exception):
                    await response(scope, receive, send)
            raise
