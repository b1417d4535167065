"""The dashboard has no authentication, so it guards the loopback user against web pages.

A page on another site, open in the user's own browser, can make requests to
``http://127.0.0.1:8080``. Three rules keep it out:

- **Host** (DNS rebinding): a request whose ``Host`` header is not a name of
  the bound address is refused (``web.host_forbidden``, 403). A loopback bind
  accepts ``127.0.0.1``, ``localhost`` and ``[::1]`` with the port; a specific
  address accepts that address; a wildcard bind (``0.0.0.0``, ``::``) serves
  every name, which is what it asks for (the start banner says so).
- **Origin** on writes: a state-changing request (anything but GET, HEAD)
  with an ``Origin`` other than the dashboard's own, or sent by the browser as
  ``Sec-Fetch-Site: cross-site``, is refused (``web.origin_forbidden``, 403).
- **Content type** on writes: only ``application/json`` is accepted
  (``web.unsupported_media_type``, 415): a cross-origin page cannot send it
  without a CORS preflight, and the dashboard answers no preflight (no
  ``Access-Control-Allow-*`` header is ever sent).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mtcommon import render_json
from tasktool.model.errors import TaskToolError

__all__ = [
    "LOOPBACK_NAMES",
    "PAGE_POLICY",
    "SAFE_METHODS",
    "SECURITY_HEADERS",
    "ASGIApp",
    "Message",
    "Receive",
    "RequestGuard",
    "Scope",
    "Send",
    "allowed_hosts",
    "is_loopback",
    "is_wildcard",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SAFE_METHODS = frozenset({"GET", "HEAD"})
#: The policy an exported page carries in a ``<meta>`` element (which cannot say
#: ``frame-ancestors``): only the site's own script and style run.
PAGE_POLICY = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'"
#: Sent with every response: only our own script and style run, no framing, no sniffing.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", f"{PAGE_POLICY}; frame-ancestors 'none'".encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """``127.0.0.0/8``, ``::1`` or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """``0.0.0.0``, ``::`` or empty: every interface."""
    try:
        return host == "" or ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The ``Host`` header values a server bound to ``host:port`` accepts (``None``: any)."""
    if is_wildcard(host):
        return None
    bracketed = f"[{host}]" if ":" in host and not host.startswith("[") else host
    names: tuple[str, ...] = (*LOOPBACK_NAMES, bracketed) if is_loopback(host) else (bracketed,)
    values = {f"{name}:{port}" for name in names}
    if port == 80:
        values.update(names)
    return frozenset(value.lower() for value in values)


class RequestGuard:
    """ASGI middleware applying the Host, Origin and content-type rules above."""

    def __init__(self, app: ASGIApp, *, hosts: frozenset[str] | None) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            key.decode("latin-1").lower(): value.decode("latin-1")
            for key, value in scope.get("headers", ())
        }
        error = self.check(str(scope["method"]), headers, str(scope.get("scheme", "http")))
        if error is None:

            async def send_with_headers(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = [*message.get("headers", ()), *SECURITY_HEADERS]
                await send(message)

            await self.app(scope, receive, send_with_headers)
            return
        status, problem = error
        await _send_json(send, status, render_json(problem))

    def check(
        self, method: str, headers: dict[str, str], scheme: str
    ) -> tuple[int, TaskToolError] | None:
        """The refusal of a request, or ``None`` to serve it."""
        host = headers.get("host", "").lower()
        if self.hosts is not None and host not in self.hosts:
            return 403, TaskToolError(
                f"Host {host or '(none)'!r} is not this dashboard's address",
                code="web.host_forbidden",
            )
        if method in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        cross_site = headers.get("sec-fetch-site") == "cross-site"
        if cross_site or (origin is not None and origin.lower() != f"{scheme}://{host}"):
            return 403, TaskToolError(
                f"a write from another origin ({origin or 'cross-site'}) is refused",
                code="web.origin_forbidden",
            )
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            return 415, TaskToolError(
                "a write must be sent as Content-Type: application/json",
                code="web.unsupported_media_type",
            )
        return None


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    from tasktool.present.render import to_json

    data = to_json(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            # The refused request's body is never read: close the connection rather than
            # leave its unread bytes where the client's next request would follow them.
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                (b"connection", b"close"),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
