"""A redis-server of a test's own (for tests that stop and restart it): on a free port of
127.0.0.1, or only on a unix socket (``--cluster unix://...``, members on Redis's machine)."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path
from typing import Literal

import pytest

from tests.matchmaker.polling import wait_until

from .matchmaker_process import free_port

Transport = Literal["tcp", "unix"]


class RedisServer:
    """One redis-server (nothing saved) that can be stopped and started again at the same
    address; ``url`` is what ``--cluster`` takes (db 0)."""

    def __init__(self, transport: Transport, directory: Path) -> None:
        """Start it; a unix socket goes in ``directory``, which must be short (a socket's
        path has at most 107 bytes)."""
        self._directory = directory
        self._address: str | tuple[str, int]
        if transport == "unix":
            path = str(directory / "redis.sock")
            self._family = socket.AF_UNIX
            self._address = path
            self._listen = ["--port", "0", "--unixsocket", path, "--unixsocketperm", "700"]
            self.url = f"unix://{path}?db=0"
        else:
            port = free_port()
            self._family = socket.AF_INET
            self._address = ("127.0.0.1", port)
            self._listen = ["--port", str(port), "--bind", "127.0.0.1"]
            self.url = f"redis://127.0.0.1:{port}/0"
        self._process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        """Start the server (empty) and wait until it answers ``PING``."""
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip(
                "redis-server is not installed (apt-get install redis-server); in CI, where "
                "every test marked redis must run, this skip is a failure"
            )
        self._process = subprocess.Popen(
            [binary, *self._listen, "--save", "", "--appendonly", "no", "--dir", self._directory],
            stdout=subprocess.DEVNULL,
        )
        wait_until(self._answers, within_s=5, what="redis-server up")

    def stop(self, *, kill: bool = False) -> None:
        """Stop the server (``kill``: with SIGKILL, as a crash would) and wait for its end."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        if kill:
            process.kill()
        else:
            process.terminate()
        process.wait(5)

    def calls(self, command: str) -> int:
        """How many times this server has run ``command`` (``INFO commandstats``) since it
        started: proof that traffic came here and not to another Redis."""
        import redis

        with redis.Redis.from_url(self.url, socket_timeout=2) as client:
            stats = client.info("commandstats").get(f"cmdstat_{command.lower()}", {})
        calls: int = stats.get("calls", 0)
        return calls

    def _answers(self) -> bool:
        try:
            with socket.socket(self._family) as sock:
                sock.settimeout(0.5)
                sock.connect(self._address)
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False
