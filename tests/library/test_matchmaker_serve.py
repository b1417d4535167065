"""``matchmaker.serve``: both planes on free ports for an ``async with`` block, then stopped."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from typing import Any

import httpx
import pytest

import matchmaker
from matchmaker import Client, MatchmakerError, ServerConfig, serve

KEY = "library-test-key"


def config(**fields: Any) -> ServerConfig:
    base = ServerConfig(
        port=0, management_port=0, management_key=KEY, store_url="memory://", server="hypercorn"
    )
    return dataclasses.replace(base, **fields)


def refused(url: str) -> bool:
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    with socket.socket() as sock:
        return sock.connect_ex((host, int(port))) != 0


async def test_serve_runs_both_planes_and_stops_them() -> None:
    auth = {"Authorization": f"Bearer {KEY}"}
    async with serve(config()) as server, httpx.AsyncClient(timeout=10) as http:
        assert server.management_url is not None
        assert (await http.get(f"{server.url}/healthz")).status_code == 200
        created = await http.post(
            f"{server.management_url}/admin/projects", json={"id": "demo"}, headers=auth
        )
        assert created.status_code == 201
        assert server.directory.get("demo") is not None  # what the data plane sees
        async with await Client.connect(server.ws_url, project="demo") as client:
            assert client.client_id
        data_url, management_url = server.url, server.management_url
    assert refused(data_url)
    assert refused(management_url)


async def test_without_a_key_there_is_no_control_plane() -> None:
    async with serve(config(management_key=None, store_url=None)) as server:
        assert server.management_url is None
        async with await Client.connect(server.ws_url) as client:
            assert client.client_id


async def test_stop_ends_wait_inside_the_block() -> None:
    async with serve(config()) as server:
        server.stop()
        async with asyncio.timeout(10):
            await server.wait()
        assert refused(server.url)


async def test_a_bad_store_url_is_raised_from_async_with() -> None:
    with pytest.raises(MatchmakerError) as caught:
        async with serve(config(store_url="redis://x")):
            pytest.fail("the server must not start")
    assert caught.value.code == "store.bad_url"


async def test_a_port_in_use_is_raised_and_nothing_keeps_listening() -> None:
    async with serve(config()) as first:
        port = first.bound.data[1]
        with pytest.raises(MatchmakerError) as caught:
            async with serve(config(port=port)):
                pytest.fail("the second server must not start")
        assert caught.value.code == "server.bind_failed"
    assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]


def test_the_package_names_serve_lazily() -> None:
    assert matchmaker.serve is serve
    assert "serve" in dir(matchmaker)
