"""Real matchmaker processes (``server.run`` on free loopback ports) for the observe tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from matchmaker.config import ServerConfig
from matchmaker.server import Bound
from tests.matchmaker.control.conftest import KEY, ServerThread

Serve = Callable[..., Bound]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Start servers (a control plane on a memory store unless the fields say otherwise);
    every one is stopped after the test."""
    servers: list[ServerThread] = []

    def start(**fields: Any) -> Bound:
        defaults: dict[str, Any] = {
            "port": 0,
            "management_port": 0,
            "management_key": KEY,
            "store_url": "memory://",
        }
        if fields.get("management_key", KEY) is None:
            defaults["store_url"] = None
        server = ServerThread(ServerConfig(**(defaults | fields)))
        bound = server.start()
        servers.append(server)
        return bound

    yield start
    for server in servers:
        server.stop()
