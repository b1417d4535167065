"""Exactly once, both ways (docs/protocol.md, "Exactly once"): numbered ``session.send``
frames, the server's cumulative ``ack`` on frames it sends anyway, and the rules a send
again after a drop meets (a duplicate dropped, a gap refused), over raw frames on a real
server of each kind."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

ADHOC = {"pool": "duo", "create": True, "mode": "auto", "groupSize": 2}


class Raw:
    """One WebSocket speaking the protocol frame by frame, as a test writes it."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.hello: dict[str, Any] = {}

    @classmethod
    async def open(cls, url: str, resume: dict[str, Any] | None = None) -> Raw:
        raw = cls(await connect(url))
        data: dict[str, Any] = {"v": 1} if resume is None else {"v": 1, "resume": resume}
        await raw.put({"id": "hello", "type": "hello", "data": data})
        raw.hello = await raw.get()
        assert raw.hello["ok"] is True, raw.hello
        return raw

    async def put(self, frame: dict[str, Any]) -> None:
        await self.socket.send(json.dumps(frame))

    async def get(self, wait_s: float = 5.0) -> dict[str, Any]:
        frame: dict[str, Any] = json.loads(await asyncio.wait_for(self.socket.recv(), wait_s))
        return frame

    async def event(self, kind: str) -> dict[str, Any]:
        """The next frame of type ``kind`` (others before it are skipped)."""
        while True:
            frame = await self.get()
            if frame.get("type") == kind:
                return frame

    async def send(self, session: str, n: int, seq: int | None, id: str | None = None) -> None:
        frame: dict[str, Any] = {"type": "session.send", "data": {"session_id": session}}
        frame["data"]["data"] = {"n": n}
        if seq is not None:
            frame["seq"] = seq
        if id is not None:
            frame["id"] = id
        await self.put(frame)

    async def message(self) -> int:
        """The ``n`` of the next relayed message."""
        n: int = (await self.event("session.message"))["data"]["data"]["n"]
        return n


async def paired(url: str) -> tuple[Raw, Raw, str]:
    a, b = await Raw.open(url), await Raw.open(url)
    await a.put({"id": "e", "type": "pool.enter", "data": ADHOC})
    await b.put({"id": "e", "type": "pool.enter", "data": {"pool": "duo"}})
    session: str = (await a.event("session.created"))["data"]["session_id"]
    await b.event("session.created")
    return a, b, session


async def test_a_duplicate_is_answered_not_relayed_and_a_gap_is_refused(
    start_server: Any,
) -> None:
    server = await start_server()
    a, b, session = await paired(server.url)
    await a.send(session, 1, seq=1, id="s1")
    assert await a.get() == {"type": "reply", "id": "s1", "ok": True, "data": {}, "ack": 1}
    assert await b.message() == 1
    await a.send(session, 1, seq=1, id="again")  # sent again: not relayed, ack unchanged
    assert await a.get() == {
        "type": "reply",
        "id": "again",
        "ok": True,
        "data": {"duplicate": True},
    }
    await a.send(session, 1, seq=1)  # without an id: dropped without a word
    await a.send(session, 4, seq=4, id="s4")  # 2 and 3 never came: refused, not taken
    refused = await a.get()
    assert refused["error"]["code"] == "protocol.bad_request"
    assert refused["error"]["details"] == {"field": "seq", "expected": 2, "seq": 4}
    assert "ack" not in refused
    await a.send(session, 2, seq=2, id="s2")
    assert (await a.get())["ack"] == 2
    assert await b.message() == 2  # the next message b gets: neither 1 again nor 4


async def test_the_ack_rides_on_events_pong_and_the_server_ping(start_server: Any) -> None:
    server = await start_server(heartbeat_interval_ms=200, heartbeat_timeout_ms=5_000)
    a, b, session = await paired(server.url)
    await a.send(session, 1, seq=1)  # no id: no reply to carry the ack
    assert await b.message() == 1
    await b.send(session, 10, seq=None)
    relayed = await a.event("session.message")
    assert relayed["ack"] == 1  # on the event a was sent anyway
    await b.send(session, 11, seq=None)
    assert "ack" not in await a.event("session.message")  # told once, not again
    await a.send(session, 2, seq=2)
    await a.put({"id": "p", "type": "ping"})
    assert await a.event("pong") == {"type": "pong", "id": "p", "ack": 2}
    await a.send(session, 3, seq=3)  # then a is silent: the server's ping says it
    assert await a.event("ping") == {"type": "ping", "ack": 3}


async def test_a_failed_send_spends_its_seq_and_a_rate_limited_one_does_not(
    start_server: Any,
) -> None:
    server = await start_server(send_rate_per_s=0.5, send_burst=1)
    a, _, session = await paired(server.url)
    await a.send("no-such-session", 1, seq=1, id="gone")
    failed = await a.get()
    assert failed["error"]["code"] == "session.not_found"
    assert failed["error"]["details"]["seq"] == 1
    assert failed["ack"] == 1  # processed (and failed): taken
    await a.send(session, 2, seq=2, id="limited")  # the burst of 1 is spent
    limited = await a.get()
    assert limited["error"]["code"] == "rate.limited"
    assert limited["error"]["details"]["seq"] == 2
    assert "ack" not in limited
    assert server.plane.core.clients[a.hello["data"]["client_id"]].ack == 1


async def test_a_resumed_hello_says_the_ack_and_a_send_again_is_taken_once(
    start_server: Any,
) -> None:
    server = await start_server(resume_grace_ms=10_000)
    a, b, session = await paired(server.url)
    for n in (1, 2, 3):
        await a.send(session, n, seq=n)
    assert [await b.message() for _ in range(3)] == [1, 2, 3]
    token = a.hello["data"]["resume_token"]
    a.socket.transport.abort()
    await b.event("session.member_status")  # a is away
    back = await Raw.open(server.url, {"token": token, "last_seq": 0})
    assert back.hello["data"]["resumed"] is True
    assert back.hello["ack"] == 3
    for n in (3, 4):  # 3 was not known to be taken: sent again with 4
        await back.send(session, n, seq=n)
    await back.put({"id": "p", "type": "ping"})
    assert (await back.event("pong"))["ack"] == 4
    assert await b.message() == 4  # 3 once, 4 once


async def test_a_client_that_sends_no_seq_never_sees_an_ack(start_server: Any) -> None:
    server = await start_server(resume_grace_ms=10_000)
    a, b, session = await paired(server.url)
    await a.send(session, 1, seq=None, id="s")
    assert await a.get() == {"type": "reply", "id": "s", "ok": True, "data": {}}
    await b.send(session, 2, seq=None)
    assert "ack" not in await a.event("session.message")
    token = a.hello["data"]["resume_token"]
    a.socket.transport.abort()
    back = await Raw.open(server.url, {"token": token, "last_seq": 0})
    assert back.hello["ack"] == 0  # a resumed hello says it, 0 for none
