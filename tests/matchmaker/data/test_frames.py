"""Bad frames get coded error replies and the connection keeps working."""

from __future__ import annotations

import json
from typing import Any

import pytest
from websockets.asyncio.client import connect

from matchmaker.errors import MatchmakerError


async def reply_to(client: Any, frame: str) -> dict[str, Any]:
    """Send a raw frame and read the raw reply frame."""
    await client.send_raw(frame)
    event = await client.next_event("error")
    return event.data  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("{not json", "protocol.bad_request"),
        ("[1, 2]", "protocol.bad_request"),
        ('{"type": "pool.dance"}', "protocol.unknown_type"),
        ('{"type": "pool.enter", "data": {"groupSize": "two"}}', "protocol.bad_request"),
        ('{"type": "pool.enter", "data": {}, "surprise": 1}', "protocol.bad_request"),
        ('{"type": "pool.enter", "data": {"pool": "x", "mode": "random"}}', "protocol.bad_request"),
        ('{"type": "session.send"}', "protocol.bad_request"),
        ('{"type": 7}', "protocol.bad_request"),
        ('{"data": {}}', "protocol.bad_request"),
    ],
)
async def test_bad_frame_gets_a_coded_reply(server: Any, frame: str, code: str) -> None:
    client = await server.connect()
    error = await reply_to(client, frame)
    assert error["code"] == code
    assert "Traceback" not in error["message"]
    assert await client.request("ping") is None


async def test_a_binary_frame_that_is_not_utf8_gets_a_coded_reply(server: Any) -> None:
    client = await server.connect()
    await client.send_raw(b'{"type": "ping", "id": "\xff"}')
    error = (await client.next_event("error")).data
    assert error["code"] == "protocol.bad_request"
    assert await client.request("ping") is None


async def test_relayed_data_that_is_not_utf8_is_refused_not_sent_on(server: Any) -> None:
    a, b = await server.connect(), await server.connect()
    room = await a.join("r", create=True)
    await b.join("r")
    frame = {"type": "session.send", "data": {"session_id": room["session_id"], "data": "@"}}
    await a.send_raw(json.dumps(frame).encode().replace(b"@", b"\xff"))
    assert (await a.next_event("error")).data["code"] == "protocol.bad_request"
    await a.send(room["session_id"], "after")
    assert (await b.next_event("session.message")).data["data"] == "after"
    assert a.close_code is None
    assert b.close_code is None


async def test_error_reply_echoes_the_request_id(server: Any) -> None:
    async with connect(server.url) as websocket:
        await websocket.send('{"id": "r9", "type": "pool.nope"}')
        assert json.loads(await websocket.recv()) == {
            "id": "r9",
            "type": "reply",
            "ok": False,
            "error": {
                "code": "protocol.unknown_type",
                "message": "unknown message type 'pool.nope'",
                "details": {"type": "pool.nope"},
            },
        }


async def test_an_id_over_64_characters_is_echoed_cut_to_64(server: Any) -> None:
    """The error used to carry ``"id": null``: the client could not tell which request
    it answered."""
    long_id = "r" + "x" * 99
    async with connect(server.url) as websocket:
        await websocket.send(json.dumps({"id": long_id, "type": "ping"}))
        reply = json.loads(await websocket.recv())
    assert reply["id"] == long_id[:64]
    assert reply["error"]["code"] == "protocol.bad_request"
    assert "$.id" in reply["error"]["message"]


async def test_oversized_frame_is_refused(start_server: Any) -> None:
    server = await start_server(max_frame_bytes=1024)
    client = await server.connect()
    error = await reply_to(client, json.dumps({"type": "ping", "pad": "é" * 600}))
    assert error["code"] == "protocol.too_large"
    assert error["details"] == {"limit": 1024}
    assert await client.request("ping") is None


async def test_oversized_session_send_is_refused(start_server: Any) -> None:
    server = await start_server(max_send_bytes=100)
    client = await server.connect()
    room = await client.join("r", create=True)
    with pytest.raises(MatchmakerError) as caught:
        await client.request("session.send", {"session_id": room["session_id"], "data": "x" * 200})
    assert caught.value.code == "protocol.too_large"


async def test_oversized_public_is_refused_on_entry_and_join(start_server: Any) -> None:
    """``public`` goes to every member, so it is bounded like a message."""
    server = await start_server(max_send_bytes=100)
    client = await server.connect()
    big = {"name": "x" * 200}
    for operation in (
        client.enter(pool="p", create=True, mode="auto", group_size=2, public=big),
        client.join("r", create=True, public=big),
    ):
        with pytest.raises(MatchmakerError) as caught:
            await operation
        assert caught.value.code == "protocol.too_large"
        assert caught.value.details == {"limit": 100}
    assert (await client.join("r", create=True, public={"name": "ok"}))["created"] is True


async def test_binary_frames_are_decoded_too(server: Any) -> None:
    async with connect(server.url) as websocket:
        await websocket.send(b'{"id":"1","type":"hello","data":{"v":1}}')
        frame = json.loads(await websocket.recv())
    assert frame["ok"] is True
    assert frame["data"]["project"] == "default"


async def test_ping_gets_pong_with_the_id(server: Any) -> None:
    async with connect(server.url) as websocket:
        await websocket.send('{"type":"ping","id":"p1"}')
        assert json.loads(await websocket.recv()) == {"type": "pong", "id": "p1"}


async def test_an_internal_fault_costs_one_reply_not_the_connection(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await server.connect()

    def broken(*args: Any) -> str:
        raise RuntimeError("injected fault")

    monkeypatch.setattr(server.plane.core, "leave_pool", broken)
    with pytest.raises(MatchmakerError) as caught:
        await client.leave("x")
    assert caught.value.code == "server.internal"
    assert "injected" not in caught.value.message
    assert await client.request("ping") is None


async def test_frames_over_the_hard_cap_close_1009(start_server: Any) -> None:
    server = await start_server(max_frame_bytes=1024)
    client = await server.connect()
    await client.send_raw(json.dumps({"type": "ping", "pad": "x" * 5000}))
    assert await client.wait_closed() == 1009
