"""Limits and lifecycle: rate limits, slow consumers, idle sockets, heartbeat, shutdown."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from matchmaker.client import Client
from matchmaker.core.conversation import ABUSE_LIMIT
from matchmaker.errors import MatchmakerError

HELLO = '{"id":"h","type":"hello","data":{"v":1}}'


async def raw_hello(websocket: ClientConnection) -> dict[str, Any]:
    await websocket.send(HELLO)
    reply: dict[str, Any] = json.loads(await websocket.recv())
    return reply


async def close_code_of(websocket: ClientConnection) -> int:
    """Read until the server closes; its close code."""
    async with asyncio.timeout(30):
        try:
            while True:
                await websocket.recv()
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd is not None else -1


async def test_control_rate_limit_then_close_3029(start_server: Any) -> None:
    server = await start_server(control_rate_per_s=0.1, control_burst=3)
    client = await server.connect()  # hello spent one token
    await client.request("ping")
    await client.request("ping")
    with pytest.raises(MatchmakerError) as caught:
        await client.request("ping")
    assert caught.value.code == "rate.limited"
    assert 0 < caught.value.details["retry_after_ms"] <= 10_000  # type: ignore[index]
    for _ in range(ABUSE_LIMIT):
        await client.send_raw('{"type":"ping"}')
    assert await client.wait_closed() == 3029


async def test_malformed_frames_are_rate_limited_too(start_server: Any) -> None:
    server = await start_server(control_rate_per_s=0.1, control_burst=2)
    client = await server.connect(hello=False)
    await client.send_raw("{garbage")
    assert (await client.next_event("error")).data["code"] == "protocol.bad_request"
    await client.send_raw("{garbage")
    assert (await client.next_event("error")).data["code"] == "protocol.bad_request"
    await client.send_raw("{garbage")
    assert (await client.next_event("error")).data["code"] == "rate.limited"
    for _ in range(ABUSE_LIMIT):
        await client.send_raw("{garbage")
    assert await client.wait_closed() == 3029


async def test_send_rate_is_separate_from_control_rate(start_server: Any) -> None:
    server = await start_server(send_rate_per_s=0.1, send_burst=2)
    client = await server.connect()
    room = await client.join("r", create=True)
    for _ in range(2):
        await client.request("session.send", {"session_id": room["session_id"], "data": 1})
    with pytest.raises(MatchmakerError) as caught:
        await client.request("session.send", {"session_id": room["session_id"], "data": 1})
    assert caught.value.code == "rate.limited"
    assert await client.request("ping") is None


#: Enough 15 kB messages to fill any loopback socket buffers plus the outbound queue; the
#: slow consumer's own receive buffer is made small, so far fewer are needed in practice.
SLOW_CONSUMER_BOUND = 5_000


def small_receive_buffer_socket(url: str) -> socket.socket:
    """A connected TCP socket whose receive buffer is as small as the kernel allows."""
    port = int(url.split(":")[2].split("/", maxsplit=1)[0])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: the window
    sock.connect(("127.0.0.1", port))
    return sock


async def test_slow_consumer_is_closed_3008_and_peers_are_not_held(start_server: Any) -> None:
    """Deterministic: the reader is held in lockstep (message n+1 is sent only once it has
    message n), so it can never fall behind; the slow consumer never reads at all, so its
    queue grows by one per message until the server drops it."""
    server = await start_server(outbound_queue=64, send_rate_per_s=1e6, send_burst=10**6)
    fast, reader = await server.connect(), await server.connect()
    room = await fast.join("r", create=True)
    await reader.join("r")
    await fast.next_event("session.member_joined")
    sock = small_receive_buffer_socket(server.url)
    # No keepalive pings: the slow client must not close the socket itself.
    async with connect(
        server.url, sock=sock, max_queue=1, compression=None, ping_interval=None
    ) as slow:
        slow_id = (await raw_hello(slow))["data"]["client_id"]
        await slow.send(json.dumps({"id": "j", "type": "session.join", "data": {"session": "r"}}))
        await slow.recv()  # reply
        await slow.recv()  # session.created
        await fast.next_event("session.member_joined")
        await reader.next_event("session.member_joined")
        left: list[Any] = []
        for sent in range(SLOW_CONSUMER_BOUND):
            payload = f"{sent:05d}" + "x" * 15_000
            await fast.send(room["session_id"], payload)
            # The reader has this message before the next is sent; a departure may come first.
            event = await reader.next_event()
            # 3008 may resume: the slow member is away first (member_left after the grace)
            while event.type == "session.member_status":
                left.append(event)
                event = await reader.next_event()
            assert (event.type, event.data["data"]) == ("session.message", payload)
            if left:
                break
        assert left, f"the slow consumer was never dropped in {SLOW_CONSUMER_BOUND} messages"
        assert [event.data["client_id"] for event in left] == [slow_id]
        assert left[0].data["status"] == "away"
        # The fast peer was never blocked: it still gets answers at once.
        assert await fast.request("ping") is None
        assert await close_code_of(slow) == 3008
    assert reader.close_code is None


async def test_idle_sockets_without_hello_do_not_stop_a_real_client(server: Any) -> None:
    idle_ws = await asyncio.gather(*(connect(server.url) for _ in range(400)))
    idle_tcp = []
    port = int(server.base.rsplit(":", 1)[1])
    for _ in range(100):
        sock = socket.create_connection(("127.0.0.1", port))
        idle_tcp.append(sock)
    try:
        started = time.monotonic()
        a = await server.connect()
        b = await server.connect()
        room = await a.join("r", create=True)
        await b.join("r")
        await a.send(room["session_id"], "hi")
        assert (await b.next_event("session.message")).data["data"] == "hi"
        assert time.monotonic() - started < 5.0
        assert len(server.plane.open) >= 402
    finally:
        for sock in idle_tcp:
            sock.close()
        await asyncio.gather(*(w.close() for w in idle_ws))


async def test_heartbeat_pings_and_closes_silent_clients_3002(start_server: Any) -> None:
    server = await start_server(heartbeat_interval_ms=100, heartbeat_timeout_ms=1000)
    lively = await server.connect()  # the client library answers pings
    async with connect(server.url) as silent:
        await raw_hello(silent)
        assert json.loads(await silent.recv()) == {"type": "ping"}
        assert await close_code_of(silent) == 3002
    assert lively.close_code is None
    assert await lively.request("ping") is None


async def test_shutdown_closes_every_socket_with_1001(server: Any) -> None:
    a, b = await server.connect(), await server.connect()
    room = await a.join("r", create=True)
    await b.join("r")
    early = await server.connect(hello=False)
    server.shutdown.set()
    codes = await asyncio.gather(*(c.wait_closed(wait_s=5) for c in (a, b, early)))
    assert codes == [1001, 1001, 1001]
    assert room["session_id"] not in server.plane.core.sessions
    late = await Client.connect(server.url, hello=False)
    assert await late.wait_closed(wait_s=5) == 1001


async def test_a_busy_client_is_not_pinged(start_server: Any) -> None:
    server = await start_server(heartbeat_interval_ms=200, heartbeat_timeout_ms=1000)
    async with connect(server.url) as busy:
        await raw_hello(busy)
        started = time.monotonic()
        frames = []
        while time.monotonic() - started < 1.0:  # five heartbeat intervals of steady traffic
            await busy.send('{"type":"ping","id":"b"}')
            frames.append(json.loads(await busy.recv()))
            await asyncio.sleep(0.01)
        assert frames
        assert all(frame == {"type": "pong", "id": "b"} for frame in frames)
