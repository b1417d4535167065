"""The data app's routes: ``/healthz`` and ``/ws`` only."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus


async def test_healthz_counts_connections_and_clients(server: Any) -> None:
    await server.connect()
    await server.connect(hello=False)
    async with httpx.AsyncClient() as http:
        response = await http.get(f"{server.base}/healthz")
    assert response.json() == {"status": "ok", "connections": 2, "clients": 1}


async def test_other_websocket_paths_are_refused(server: Any) -> None:
    with pytest.raises(InvalidStatus) as caught:
        async with connect(server.url.replace("/ws", "/other")):
            pass
    assert caught.value.response.status_code == 403


async def test_unknown_http_paths_are_404(server: Any) -> None:
    async with httpx.AsyncClient() as http:
        assert (await http.get(f"{server.base}/nope")).status_code == 404
