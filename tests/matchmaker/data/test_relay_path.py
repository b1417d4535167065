"""The shell's shortest path for ``session.send`` (the plane's ``relay_local``): a relayed
message outside a cluster skips ``deliver_one``'s routing, and must still be numbered,
kept for replay and counted exactly as ``deliver_one`` would."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.matchmaker.data.rawws import TEXT, RawSocket, frame
from tests.matchmaker.data.test_coalesced import pair, until_type


def _send(session_id: str, data: str, *, extra: str = "", to: str = "") -> bytes:
    """A ``session.send`` frame; ``extra`` (an id) and ``to`` are inserted as written."""
    body = f'{{"session_id":"{session_id}","data":{data}{to}}}'
    return frame(TEXT, f'{{{extra}"type":"session.send","data":{body}}}'.encode())


async def _raw_message(sock: RawSocket) -> str:
    """The next ``session.message`` frame as sent (its text)."""
    while True:
        async with asyncio.timeout(10):
            opcode, payload = await sock.read_frame()
        assert opcode == TEXT
        if json.loads(payload).get("type") == "session.message":
            return payload.decode()


async def test_relayed_messages_are_numbered_kept_and_counted(start_server: Any) -> None:
    """Messages without an id (the short path), with ``to``, and with an id (a reply
    beside the delivery: ``deliver_one``'s path) reach the other member in order with
    consecutive seqs; the replay buffer keeps exactly those frames, and the counters
    grow by one message and the frame's bytes (without its seq) per message."""
    server = await start_server()
    a, b, _, b_id, session_id = await pair(server)
    metrics = server.plane.observer.metrics
    messages0, bytes0 = metrics.relayed_messages, metrics.relayed_bytes
    to_b = f',"to":["{b_id}"]'
    sends = [
        _send(session_id, "1"),
        _send(session_id, '{"n":2}', to=to_b),
        _send(session_id, '"three"', extra='"id":"r3",'),
        _send(session_id, "[4]"),
    ]
    for send in sends:
        await a.send(send)
    frames = [await _raw_message(b) for _ in sends]
    decoded = [json.loads(text) for text in frames]
    assert [m["data"]["data"] for m in decoded] == [1, {"n": 2}, "three", [4]]
    seqs = [m["seq"] for m in decoded]
    assert seqs == list(range(seqs[0], seqs[0] + 4))
    reply = await until_type(a, "reply")
    assert reply["id"] == "r3"
    assert reply["ok"] is True
    assert list(server.plane.core.resumption.outboxes[b_id].frames)[-4:] == frames
    heads = [text[: text.rindex(',"seq":')] for text in frames]
    assert metrics.relayed_messages - messages0 == 4
    assert metrics.relayed_bytes - bytes0 == sum(len(head) for head in heads)
    for sock in (a, b):
        await sock.aclose()
