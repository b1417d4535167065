"""The ASGI callables' types, as the data plane, its connections and the cluster's
tunnels pass them around (one definition, not one per module)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["Receive", "Scope", "Send"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
