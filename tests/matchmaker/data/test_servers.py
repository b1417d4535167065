"""What the server seam must give the data app under every server (``--server``)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from matchmaker.client import Client

MANY = 300
# granian's embedded default serves ``backlog`` (128) TCP connections at once per worker
# (until their HTTP request is done or upgraded); the seam lifts that cap.
SILENT = 200


async def test_many_clients_are_served_at_once(server: Any) -> None:
    clients = await asyncio.gather(*(server.connect() for _ in range(MANY)))
    async with httpx.AsyncClient() as http:
        health = (await http.get(f"{server.base}/healthz")).json()
    assert health["clients"] == MANY
    # The last one to arrive is served, not parked behind the others.
    room = await clients[-1].join("last", create=True)
    assert room["session_id"] in server.plane.core.sessions


async def test_silent_tcp_connections_do_not_hold_back_a_real_client(server: Any) -> None:
    port = int(server.base.rsplit(":", 1)[1])
    silent = [await asyncio.open_connection("127.0.0.1", port) for _ in range(SILENT)]
    try:
        async with asyncio.timeout(5):
            client = await server.connect()
        room = await client.join("after-the-silent-ones", create=True)
        assert room["session_id"] in server.plane.core.sessions
    finally:
        for _, writer in silent:
            writer.close()


async def test_the_lifespan_starts_the_timers_and_shutdown_closes_a_silent_client(
    server: Any,
) -> None:
    """Timers run before any client (lifespan); a client that never sends is still closed."""
    assert server.plane.timers.running, "the lifespan did not start the plane"
    silent = await Client.connect(server.url)
    server.shutdown.set()
    assert await silent.wait_closed(wait_s=5) == 1001
