"""Fixtures shared by the end-to-end tests."""

from __future__ import annotations

import shutil
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


@pytest.fixture
def backlog_cli() -> str:
    """Backlog.md's ``backlog`` CLI (1.52.0, as ``.ci/run`` installs it); skips, a failure
    in CI, where it is not on PATH (``npm install -g backlog.md@1.52.0``)."""
    executable = shutil.which("backlog")
    if executable is None:
        pytest.skip(
            "Backlog.md's CLI is not installed (npm install -g backlog.md@1.52.0; .ci/run "
            "installs it, and in CI this skip is a failure)"
        )
    return executable
