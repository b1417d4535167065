"""Fixtures shared by the end-to-end tests."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .redis_server import RedisServer


@pytest.fixture
def own_redis(request: pytest.FixtureRequest) -> Iterator[RedisServer]:
    """A redis-server of this test's own (it gets stopped and restarted): on TCP, or on a
    unix socket when the test parametrizes it indirectly with ``"unix"``."""
    # Not tmp_path: a unix socket's path must stay short.
    with tempfile.TemporaryDirectory(prefix="redis-") as directory:
        server = RedisServer(getattr(request, "param", "tcp"), Path(directory))
        try:
            yield server
        finally:
            server.stop()
