"""The data app's routes: ``/healthz``, ``/readyz`` and ``/ws`` only."""

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


async def test_readyz_is_200_without_a_store_and_503_once_shutting_down(server: Any) -> None:
    async with httpx.AsyncClient() as http:
        assert (await http.get(f"{server.base}/readyz")).json() == {"status": "ready"}
        server.shutdown.set()  # a load balancer stops sending new clients
        response = await http.get(f"{server.base}/readyz")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "server.shutting_down"


async def test_other_websocket_paths_are_refused(server: Any) -> None:
    with pytest.raises(InvalidStatus) as caught:
        async with connect(server.url.replace("/ws", "/other")):
            pass
    assert caught.value.response.status_code == 403


@pytest.mark.parametrize("path", ["/nope", "/admin/projects", "/admin/openapi.json", "/ws"])
async def test_unknown_http_paths_are_a_coded_json_404(server: Any, path: str) -> None:
    """``/admin`` never exists on the data port; every miss has the control plane's body."""
    async with httpx.AsyncClient() as http:
        response = await http.get(f"{server.base}{path}", headers={"Authorization": "Bearer k"})
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == "route.not_found"
    assert path in response.json()["error"]["message"]


async def test_wrong_method_on_healthz_is_a_coded_json_405(server: Any, server_name: str) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.post(f"{server.base}/healthz")
    if server_name == "picows":
        # picows answers only GET: any other method is its own 400, the reason in plain
        # text, before the app sees the request (docs/operations.md).
        assert response.status_code == 400
        assert "Unsupported HTTP method" in response.text
        return
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method.not_allowed"
    assert "GET" in response.headers["allow"]
