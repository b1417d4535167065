"""Management-key authentication, applied before routing.

Every request except ``GET /healthz`` and ``GET /readyz`` needs ``Authorization: Bearer <key>``;
without it the answer is 401 whatever the path or method, so an unauthenticated
caller learns nothing about which ids or routes exist.
"""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from matchmaker.errors import MatchmakerError
from matchmaker.jsonhttp import error_response

PUBLIC_PATHS = frozenset({"/healthz", "/readyz"})


class BearerAuth:
    """ASGI middleware admitting only requests that present the management key."""

    def __init__(self, app: ASGIApp, *, key: str) -> None:
        self._app = app
        self._expected = b"bearer " + key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in PUBLIC_PATHS or self._admits(scope):
            await self._app(scope, receive, send)
            return
        error = MatchmakerError(
            "missing or invalid management key (Authorization: Bearer <key>)",
            code="auth.unauthorized",
        )
        await error_response(error)(scope, receive, send)

    def _admits(self, scope: Scope) -> bool:
        presented = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                presented = value
                break
        # The scheme is case-insensitive; the key is compared in constant time.
        scheme, _, credential = presented.partition(b" ")
        return hmac.compare_digest(scheme.lower() + b" " + credential, self._expected)
