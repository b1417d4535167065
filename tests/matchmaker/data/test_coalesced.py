"""Frames that leave together: picows writes the frames one read produced for a socket in
one write, and what is pending when a socket closes goes out before its close frame.

Every burst here is one TCP write of many frames, so a server reads it at once; the
order, the closes and the limits must hold as if each frame had been written alone.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from msgspec import Raw

from matchmaker.core import closecodes
from matchmaker.core.events import MessageRelayed
from tests.matchmaker.data.rawws import CLOSE, CONTINUATION, TEXT, RawSocket, frame, open_raw

HELLO = b'{"id":"h","type":"hello","data":{"v":1}}'


async def read_json(sock: RawSocket) -> dict[str, Any]:
    """The next text frame, decoded (a close frame fails the test)."""
    async with asyncio.timeout(10):
        opcode, payload = await sock.read_frame()
    assert opcode == TEXT, (opcode, payload[:80])
    message: dict[str, Any] = json.loads(payload)
    return message


async def until_type(sock: RawSocket, kind: str) -> dict[str, Any]:
    while True:
        message = await read_json(sock)
        if message.get("type") == kind:
            return message


async def pair(server: Any) -> tuple[RawSocket, RawSocket, str, str, str]:
    """Two raw sockets past ``hello`` in one session: (a, b, a's id, b's id, session id)."""
    socks, ids = [], []
    for _ in range(2):
        sock = await open_raw(server.base)
        assert sock.status == 101
        await sock.send(frame(TEXT, HELLO))
        ids.append((await read_json(sock))["data"]["client_id"])
        socks.append(sock)
    a, b = socks
    join = b'{"id":"j","type":"session.join","data":{"session":"burst","create":true}}'
    await a.send(frame(TEXT, join))
    session_id = (await until_type(a, "session.created"))["data"]["session_id"]
    await b.send(frame(TEXT, join))
    await until_type(b, "session.created")
    await until_type(a, "session.member_joined")
    return a, b, ids[0], ids[1], session_id


def send_frame(session_id: str, data: str) -> bytes:
    text = f'{{"type":"session.send","data":{{"session_id":"{session_id}","data":{data}}}}}'
    return frame(TEXT, text.encode())


async def test_a_burst_in_one_write_arrives_in_order(start_server: Any) -> None:
    """60 relayed messages of ~600 bytes (past the early-flush threshold, and each with a
    two-byte length) with pings between them, all in one write: the recipient gets every
    message in order with consecutive seqs, the sender its pongs in order."""
    server = await start_server()
    a, b, _, _, session_id = await pair(server)
    pad = "x" * 600
    burst = []
    for i in range(60):
        burst.append(send_frame(session_id, f'{{"n":{i},"pad":"{pad}"}}'))
        if i % 10 == 9:
            burst.append(frame(TEXT, f'{{"id":"p{i}","type":"ping"}}'.encode()))
    await a.send(b"".join(burst))
    received = [await until_type(b, "session.message") for _ in range(60)]
    assert [m["data"]["data"]["n"] for m in received] == list(range(60))
    seqs = [m["seq"] for m in received]
    assert seqs == list(range(seqs[0], seqs[0] + 60))
    pongs = [await until_type(a, "pong") for _ in range(6)]
    assert [p["id"] for p in pongs] == [f"p{i}" for i in range(9, 60, 10)]
    for sock in (a, b):
        await sock.aclose()


async def test_a_frame_past_64_kib_keeps_its_length(start_server: Any) -> None:
    """A relayed message over 65,535 bytes goes out with the eight-byte length."""
    server = await start_server(max_frame_bytes=200_000, max_send_bytes=150_000)
    a, b, _, _, session_id = await pair(server)
    pad = "y" * 70_000
    await a.send(send_frame(session_id, f'"{pad}"') + send_frame(session_id, '"after"'))
    assert (await until_type(b, "session.message"))["data"]["data"] == pad
    assert (await until_type(b, "session.message"))["data"]["data"] == "after"
    for sock in (a, b):
        await sock.aclose()


async def test_the_close_follows_every_frame_answered_before_it(start_server: Any) -> None:
    """Pings then ``bye`` in one write: every pong arrives, then the close (4000)."""
    server = await start_server()
    a, b, _, _, _ = await pair(server)
    pings = [frame(TEXT, f'{{"id":"p{i}","type":"ping"}}'.encode()) for i in range(20)]
    await a.send(b"".join([*pings, frame(TEXT, b'{"type":"bye"}')]))
    pongs = [await until_type(a, "pong") for _ in range(20)]
    assert [p["id"] for p in pongs] == [f"p{i}" for i in range(20)]
    assert await a.close_code() == closecodes.BYE
    await b.aclose()


@pytest.mark.parametrize("server_name", ["picows"], indirect=True)
async def test_a_message_past_the_hard_cap_closes_1009_after_the_answers_before_it(
    start_server: Any,
) -> None:
    """Pings, then a fragmented message that grows past the hard cap, in one write: the
    pongs go out first, then the 1009 (the fragments are never held whole)."""
    server = await start_server(max_frame_bytes=256)  # the hard cap: 1,024 bytes
    a, b, _, _, _ = await pair(server)
    pings = [frame(TEXT, f'{{"id":"p{i}","type":"ping"}}'.encode()) for i in range(10)]
    # Small enough to arrive in the same read as the pings (picows's first buffer is 4 KiB).
    fragments = [frame(TEXT, b"x" * 400, fin=False)]
    fragments += [frame(CONTINUATION, b"x" * 400, fin=False) for _ in range(3)]
    await a.send(b"".join([*pings, *fragments]))
    pongs = [await until_type(a, "pong") for _ in range(10)]
    assert [p["id"] for p in pongs] == [f"p{i}" for i in range(10)]
    assert await a.close_code() == 1009
    await b.aclose()


@pytest.mark.parametrize("server_name", ["picows"], indirect=True)
async def test_frames_pending_when_the_server_shuts_down_go_out_before_1001(
    start_server: Any,
) -> None:
    """Events handed to a socket in the same turn as its 1001 (what shutdown does) are
    written before the close frame: on picows they already left the connection's queue."""
    server = await start_server()
    a, b, a_id, b_id, session_id = await pair(server)
    connection = server.plane.clients[b_id]
    now_ms = time.time_ns() // 1_000_000
    for i in range(5):
        event = MessageRelayed(session_id, a_id, Raw(b"%d" % i))
        server.plane.deliver_one([b_id], event, now_ms)
    connection.close(closecodes.GOING_AWAY, "server shutting down")
    received = [await until_type(b, "session.message") for _ in range(5)]
    assert [m["data"]["data"] for m in received] == list(range(5))
    assert await b.close_code() == 1001
    await a.aclose()


@pytest.mark.parametrize("server_name", ["picows"], indirect=True)
async def test_the_frames_of_one_read_leave_in_one_write(start_server: Any) -> None:
    """30 messages for one peer in one read are written to it in one call, not 30."""
    server = await start_server()
    a, b, _, b_id, session_id = await pair(server)
    sock = server.plane.clients[b_id]._peer
    writes: list[int] = []
    write = sock._writelines

    def counted(chunks: list[bytes]) -> object:
        writes.append(len(chunks))
        return write(chunks)

    sock._writelines = counted
    await a.send(b"".join(send_frame(session_id, str(i)) for i in range(30)))
    received = [await until_type(b, "session.message") for _ in range(30)]
    assert [m["data"]["data"] for m in received] == list(range(30))
    # One read carries the burst (one small loopback write): one write, two chunks a frame.
    assert len(writes) <= 2, writes
    assert sum(writes) == 60
    for raw in (a, b):
        await raw.aclose()


@pytest.mark.parametrize("server_name", ["picows"], indirect=True)
async def test_a_close_frame_from_the_client_is_answered_after_pending_frames(
    start_server: Any,
) -> None:
    """Pings then the client's close in one write: the pongs, then the close's echo."""
    server = await start_server()
    a, b, _, _, _ = await pair(server)
    pings = [frame(TEXT, f'{{"id":"p{i}","type":"ping"}}'.encode()) for i in range(5)]
    await a.send(b"".join([*pings, frame(CLOSE, (1000).to_bytes(2, "big"))]))
    pongs = [await until_type(a, "pong") for _ in range(5)]
    assert [p["id"] for p in pongs] == [f"p{i}" for i in range(5)]
    assert await a.close_code() == 1000
    await b.aclose()


@pytest.mark.parametrize("server_name", ["picows"], indirect=True)
async def test_pending_frames_are_written_once_they_pass_16_kib(start_server: Any) -> None:
    """Ten 5 KB events handed over in one go are not held whole until the loop turns: the
    socket writes each time its pending frames pass 16 KiB (the transport's high-water
    mark then pauses it as if each frame had been written alone), in order."""
    server = await start_server()
    a, b, a_id, b_id, session_id = await pair(server)
    sock = server.plane.clients[b_id]._peer
    writes: list[int] = []
    write = sock._writelines

    def counted(chunks: list[bytes]) -> object:
        writes.append(sum(len(chunk) for chunk in chunks))
        return write(chunks)

    sock._writelines = counted
    pad = b'"' + b"z" * 5000 + b'"'
    now_ms = time.time_ns() // 1_000_000
    for _ in range(10):
        server.plane.deliver_one([b_id], MessageRelayed(session_id, a_id, Raw(pad)), now_ms)
    assert len(writes) == 2  # after the 4th and the 8th frame; the last two wait for the turn
    assert all(16_384 < size < 16_384 + 5_300 for size in writes)
    received = [await until_type(b, "session.message") for _ in range(10)]
    seqs = [m["seq"] for m in received]
    assert seqs == list(range(seqs[0], seqs[0] + 10))
    assert len(writes) == 3
    for raw in (a, b):
        await raw.aclose()
