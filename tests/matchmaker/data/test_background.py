"""A task of the data plane that crashes is logged and surfaced, never swallowed.

The writer task exists on the ASGI path alone (picows writes to its socket at once, with
no task), so the crashed writer is served here as an ASGI server serves ``/ws``: the plane
called with a ``receive`` and a ``send``, and ``send`` breaking as a broken transport's
would. The timers run on both servers the same way; their crash stops the process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import MutableMapping
from typing import Any

import pytest

from matchmaker.config import ServerConfig
from matchmaker.data.plane import DataPlane
from matchmaker.directory import ProjectDirectory
from tests.matchmaker.polling import eventually

HELLO = '{"id":"h","type":"hello","data":{"v":1,"project":"crash"}}'
SCOPE = {
    "type": "websocket",
    "path": "/ws",
    "headers": [(b"sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZQ==")],
}


def _crashes(caplog: pytest.LogCaptureFixture, task: str) -> list[logging.LogRecord]:
    return [
        record
        for record in caplog.records
        if record.levelno == logging.ERROR
        and record.getMessage() == "background task crashed"
        and getattr(record, "fields", {}).get("task") == task
    ]


async def test_a_crashed_writer_is_logged_and_closes_its_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    plane = DataPlane(ServerConfig(), ProjectDirectory(), asyncio.Event())
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    sent: list[MutableMapping[str, Any]] = []

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "websocket.send":
            raise RuntimeError("the transport broke")

    inbox.put_nowait({"type": "websocket.connect"})
    inbox.put_nowait({"type": "websocket.receive", "text": HELLO})
    serving = asyncio.create_task(plane(SCOPE, inbox.get, send))
    try:
        # The welcome is the writer's first send: it raises, the writer crashes.
        await eventually(lambda: sent and sent[-1]["type"] == "websocket.close", what="a close")
        assert sent[-1] == {"type": "websocket.close", "code": 1001, "reason": ""}
        [record] = _crashes(caplog, "writer")
        assert record.exc_info is not None
        assert isinstance(record.exc_info[1], RuntimeError)
        assert not plane.open, "the crashed writer's connection is closed"
        assert not plane.clients
        assert sum(plane.observer.metrics.disconnects.values()) == 1
    finally:
        inbox.put_nowait({"type": "websocket.disconnect", "code": 1001})
        await serving
        await plane.stop()


async def test_a_crashed_timer_is_logged_and_stops_the_process(
    caplog: pytest.LogCaptureFixture,
) -> None:
    shutdown = asyncio.Event()
    plane = DataPlane(ServerConfig(), ProjectDirectory(), shutdown)

    def broken(now_ms: int) -> list[Any]:
        raise RuntimeError("the expiry broke")

    plane.core.expire = broken
    plane.start()
    try:
        await asyncio.wait_for(shutdown.wait(), 5)
        [record] = _crashes(caplog, "timer.expire")
        assert record.exc_info is not None
        assert isinstance(record.exc_info[1], RuntimeError)
    finally:
        await plane.stop()
