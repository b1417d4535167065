"""The MCP server's stdin: every line capped before the SDK reads it (``mcp/stdin.py``)."""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mcp.types import LATEST_PROTOCOL_VERSION

from tasktool.mcp.stdin import LINE_MAX, copy_lines
from tests.tasktool.conftest import Project
from tests.tasktool.web.conftest import seed_tasks


class Trickle(io.RawIOBase):
    """``data`` three bytes per read, as a pipe hands over what has arrived."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        size = min(3, len(buffer), len(self._data))
        buffer[:size] = self._data[:size]
        self._data = self._data[size:]
        return size


def _copied(data: bytes, limit: int) -> tuple[bytes, list[str]]:
    warnings: list[str] = []
    read_end, write_end = os.pipe()
    source = io.BufferedReader(Trickle(data))
    copy_lines(source, os.fdopen(write_end, "wb"), warnings.append, limit)
    with os.fdopen(read_end, "rb") as pipe:
        return pipe.read(), warnings


@pytest.mark.parametrize(
    ("data", "copied", "warned"),
    [
        (b"0123456789\nabc\n", b"0123456789\nabc\n", []),  # at the limit: whole
        (b"0123456789A\nabc\n", b"0123456789\nabc\n", ["11"]),  # past it: cut
        (b"x" * 40 + b"\n" + b"y" * 3, b"x" * 10 + b"\n" + b"y" * 3, ["40"]),
        (b"ok\n" + b"z" * 25, b"ok\n" + b"z" * 10, ["25"]),  # the wire ends inside it
        (b"\n\n", b"\n\n", []),
    ],
)
def test_lines_are_cut_at_the_limit(data: bytes, copied: bytes, warned: list[str]) -> None:
    out, warnings = _copied(data, limit=10)
    assert out == copied
    assert [w.split("of ")[1].split(" bytes")[0] for w in warnings] == warned
    assert all(w.endswith("[mcp.too_large]") for w in warnings)


def _rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


def test_an_endless_line_is_skipped_unheld_and_the_next_request_answered(
    project: Project,
) -> None:
    """64 MiB in one line (16 times the cap) costs the server well under the line's
    size; the request after it is answered; stderr says what was skipped."""
    seed_tasks(project)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TASKTOOL_")}, **project.env}
    server = subprocess.Popen(
        [sys.executable, "-m", "tasktool", "mcp"],
        cwd=project.root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None
    assert server.stdout is not None
    assert server.stderr is not None
    answers: queue.Queue[dict[str, object]] = queue.Queue()
    stdout = server.stdout

    def read_answers() -> None:
        for line in stdout:
            answers.put(json.loads(line))

    threading.Thread(target=read_answers, daemon=True).start()

    def send(message: dict[str, object]) -> None:
        assert server.stdin is not None
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()

    def answer(request_id: int) -> dict[str, object]:
        deadline = time.monotonic() + 60
        while True:
            message = answers.get(timeout=max(0.0, deadline - time.monotonic()))
            if message.get("id") == request_id:
                return message

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": LATEST_PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            }
        )
        assert "result" in answer(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        before = _rss_kib(server.pid, "VmRSS")
        head = b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"x": "'
        server.stdin.write(head)
        block = b"a" * (1 << 20)
        for _ in range(64):
            server.stdin.write(block)
        server.stdin.write(b'"}}\n')
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        listed = answer(3)
        peak = _rss_kib(server.pid, "VmHWM")
        result = listed["result"]
        assert isinstance(result, dict)
        assert {tool["name"] for tool in result["tools"]} >= {"list", "get", "set"}
        assert peak - before < 3 * (LINE_MAX >> 10), (before, peak)
        assert answers.empty()  # no answer to the skipped request
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    stderr = server.stderr.read().decode()
    assert f"an MCP message of {len(head) + 64 * len(block) + 3:,} bytes was skipped" in stderr
    assert "[mcp.too_large]" in stderr
