"""The WebSocket upgrade request, checked before it is accepted (RFC 6455, section 4.2.1).

hypercorn checks the method and headers itself. granian upgrades any request that
asks to (``POST /ws`` included) and only checks that a ``Sec-WebSocket-Key`` is
present, so the data plane checks what the ASGI scope shows before it accepts:
the key must be 16 bytes in base64, and an upgrade request carries no body.
granian's WebSocket scope has no ``method``; a ``POST`` without a body can only be
refused where the scope says it was one.
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping
from typing import Any

__all__ = ["upgrade_refusal"]

_KEY_BYTES = 16


def upgrade_refusal(scope: Mapping[str, Any]) -> str | None:
    """Why the upgrade request of ``scope`` must be refused, or ``None`` to accept it."""
    method = scope.get("method", "GET")
    if method != "GET":
        return f"a WebSocket upgrade must be a GET, not {method}"
    key: bytes | None = None
    for name, value in scope.get("headers", ()):
        if name in (b"content-length", b"transfer-encoding") and value not in (b"0", b""):
            return "a WebSocket upgrade request carries no body"
        if name == b"sec-websocket-key":
            key = value
    if key is None or not _is_key(key):
        return "Sec-WebSocket-Key must be 16 bytes in base64"
    return None


def _is_key(key: bytes) -> bool:
    try:
        return len(binascii.a2b_base64(key.strip(), strict_mode=True)) == _KEY_BYTES
    except binascii.Error:
        return False
