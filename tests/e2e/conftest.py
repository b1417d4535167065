"""Fixtures shared by the end-to-end tests."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .matchmaker_process import free_port
from .redis_server import redis_server


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[int, list[subprocess.Popen[bytes]]]]:
    """A redis-server of this test's own (it gets stopped and restarted)."""
    port = free_port()
    started = [redis_server(port, tmp_path)]
    yield port, started
    for process in started:
        if process.poll() is None:
            process.terminate()
            process.wait(5)
