"""A redis-server of a test's own, on a free port (for tests that stop and restart it)."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.matchmaker.polling import wait_until


def redis_server(port: int, directory: Path) -> subprocess.Popen[bytes]:
    """Start a redis-server on ``port`` (nothing saved) and wait until it answers."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip(
            "redis-server is not installed (apt-get install redis-server); in CI, where "
            "every test marked redis must run, this skip is a failure"
        )
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
        ],
        stdout=subprocess.DEVNULL,
    )
    wait_until(lambda: _answers(port), within_s=5, what="redis-server up")
    return process


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False
