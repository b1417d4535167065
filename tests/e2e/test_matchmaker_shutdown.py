"""A stop with connections still open, as a whole process: no error in the log, and the
process gone within its shutdown grace and the short closing allowance after it."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from matchmaker.server import CLOSING_S
from tests.matchmaker.servers import SERVERS

from .matchmaker_process import MatchmakerProcess

KEY = "shutdown-management-key"
GRACE_S = 4.0


@pytest.fixture(params=SERVERS)
def mm(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[MatchmakerProcess]:
    args = ["--port", "0", "--management-port", "0", "--management-key", KEY]
    process = MatchmakerProcess(
        [*args, "--server", request.param, "--shutdown-grace", str(GRACE_S)], cwd=tmp_path
    )
    yield process
    if process.process.poll() is None:
        process.stop()


def silent_websocket(port: int) -> socket.socket:
    """A WebSocket whose client upgrades and then neither reads nor answers a close."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    assert sock.recv(4096).startswith(b"HTTP/1.1 101")
    return sock


def half_sent_admin_request(port: int) -> socket.socket:
    """An ``/admin`` request whose body never finishes arriving."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(
        b"POST /admin/projects HTTP/1.1\r\nHost: x\r\n"
        + f"Authorization: Bearer {KEY}\r\n".encode()
        + b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
    )
    return sock


def errors_in(log: str) -> list[str]:
    """Lines at error level or above, and any traceback, in a JSON-lines log."""
    found = [line for line in log.splitlines() if "Traceback" in line or "ERROR" in line]
    for line in log.splitlines():
        if line.startswith("{") and json.loads(line)["level"] in ("error", "critical"):
            found.append(line)
    return found


def test_a_stop_with_connections_open_logs_no_error_and_ends_within_the_grace(
    mm: MatchmakerProcess,
) -> None:
    """What a stop meets: a WebSocket client, idle keep-alive HTTP connections on both
    planes, a WebSocket that never answers the close and a request cut mid-body. Each
    is ended, none is reported as an error, and the stop takes the grace and
    ``CLOSING_S``, not the grace twice."""
    ws_url = mm.data_url.replace("http", "ws", 1) + "/ws"
    with (
        connect(ws_url, open_timeout=5) as ws,
        httpx.Client(base_url=mm.data_url, timeout=5) as data,
        httpx.Client(base_url=mm.control_url, timeout=5) as control,
        silent_websocket(mm.ports["data"]),
        half_sent_admin_request(mm.ports["control"]),
    ):
        ws.send(json.dumps({"id": "h", "type": "hello", "data": {"v": 1}}))
        assert json.loads(ws.recv(timeout=5))["ok"] is True
        assert data.get("/healthz").status_code == 200  # kept alive, then idle
        assert control.get("/healthz").status_code == 200
        began = time.monotonic()
        mm.process.send_signal(signal.SIGTERM)
        assert mm.process.wait(GRACE_S + CLOSING_S + 5) == 0
        took = time.monotonic() - began
    log = mm.log()
    assert errors_in(log) == [], log
    assert "stopped" in log
    assert GRACE_S <= took < GRACE_S + CLOSING_S + 1.5, log
    mm.stop()
