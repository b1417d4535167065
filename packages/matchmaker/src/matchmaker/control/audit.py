"""Every control-plane request counted by status; every write logged (who, what, result).

The line names the peer address, the method, the path and the status, never a
header or a body: the management key and client secrets travel in those.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from matchmaker.observe.logs import fields

__all__ = ["Audit"]

_log = logging.getLogger("matchmaker.control")
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


class Audit:
    """ASGI middleware, outermost, so it sees refusals (401, 413) too."""

    def __init__(self, app: ASGIApp, *, on_request: Callable[[str, int], None] | None) -> None:
        self._app = app
        self._on_request = on_request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        status = 500

        async def observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self._app(scope, receive, observed)
        finally:
            method: str = scope["method"]
            if self._on_request is not None:
                self._on_request(method, status)
            if method not in _READS or status in (401, 403):
                peer = scope.get("client")
                dry_run = _dry_run(scope)
                _log.info(
                    "control %s %s -> %d%s",
                    method,
                    scope["path"],
                    status,
                    " (dry run, nothing changed)" if dry_run else "",
                    extra=fields(
                        event="control",
                        peer=None if peer is None else f"{peer[0]}:{peer[1]}",
                        method=method,
                        path=scope["path"],
                        status=status,
                        dry_run=dry_run,
                    ),
                )


def _dry_run(scope: Scope) -> bool:
    """``?dryRun=true``: the line must not read as a change that was made."""
    query = urllib.parse.parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return query.get("dryRun") == ["true"]
