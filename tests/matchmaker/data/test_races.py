"""Lifecycle races over real sockets: clients vanish while being matched; nothing leaks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from typing import Any

import pytest
from websockets.asyncio.client import connect

from matchmaker.errors import MatchmakerError

from .conftest import DataServer

GROUP = 3
ROUNDS = 15
PER_ROUND = 10
ENTER = json.dumps(
    {
        "type": "pool.enter",
        "id": "e",
        "data": {"pool": "churn", "create": True, "mode": "auto", "groupSize": GROUP},
    }
)

# A room joined by some churners as well, so that rooms are created and emptied in the race.
JOIN = json.dumps({"type": "session.join", "id": "j", "data": {"session": "lobby", "create": True}})


async def churner(server: DataServer, fate: float, created: list[dict[str, Any]]) -> None:
    """Enter a pool, then vanish at a point of the match chosen by ``fate``."""
    async with connect(server.url) as ws:
        await ws.send('{"type":"hello","id":"h","data":{"v":1}}')
        await ws.recv()
        await ws.send(ENTER)
        if fate > 0.85:
            await ws.send(JOIN)
        if fate < 0.2:
            return  # a clean close right after entering, the reply unread
        if fate < 0.4:
            ws.transport.abort()  # the TCP connection is cut, no closing handshake
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.3):
                async for raw in ws:
                    frame = json.loads(raw)
                    if frame.get("type") == "session.created" and frame["data"].get("pool"):
                        created.append(frame["data"])
                        if fate < 0.7:
                            return  # matched, then gone at once


def assert_core_consistent(server: DataServer) -> None:
    """Every entry and member the core holds belongs to a connected client, or to one that
    dropped and is away (resumable) for its grace period."""
    core = server.plane.core
    away = {cid for cid, client in core.clients.items() if client.away}
    assert set(core.clients) == set(server.plane.clients) | away
    assert away <= set(core.resumption.outboxes)
    for pool in core.pools.values():
        assert pool.size + pool.paused > 0  # waiting entries, or paused ones of away clients
    for session in core.sessions.values():
        assert session.members
        for client_id in session.members:
            assert client_id in core.clients
    for client in core.clients.values():
        for name, entry in client.entries.items():
            assert entry.live
            assert entry.pool.name == name
            assert entry.paused == client.away
            if not entry.paused:
                assert core.pools.get(entry.pool.key) is entry.pool


async def test_clients_vanishing_mid_match_leak_nothing(
    start_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    server: DataServer = await start_server(resume_grace_ms=300)
    rng = random.Random(1234)
    created: list[dict[str, Any]] = []
    for _ in range(ROUNDS):
        fates = [rng.random() for _ in range(PER_ROUND)]
        await asyncio.gather(*(churner(server, fate, created) for fate in fates))
        assert_core_consistent(server)
    await server.until(lambda: not server.plane.open)
    core = server.plane.core
    assert not server.plane.clients
    await server.until(lambda: not core.clients)  # the dropped ones once their grace ran out
    assert not core.pools
    assert not core.sessions
    assert not core.rooms
    assert created, "no match happened: the race was not exercised"
    for data in created:
        assert len(data["members"]) == GROUP
        assert len({m["client_id"] for m in data["members"]}) == GROUP
        assert data["you"] in {m["client_id"] for m in data["members"]}
    faults = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not faults, [r.getMessage() for r in faults]


async def test_session_requests_after_the_peer_vanished(server: DataServer) -> None:
    alice = await server.connect()
    bob = await server.connect()
    for client in (alice, bob):
        await client.enter(pool="pair", create=True, mode="auto", group_size=2)
    session_id = (await alice.next_event("session.created")).data["session_id"]
    await bob.next_event("session.created")
    bob_id = bob.client_id
    await bob.close()
    left = await alice.next_event("session.member_left")
    assert left.data == {"session_id": session_id, "client_id": bob_id, "reason": "disconnected"}
    # Broadcast to nobody is fine; addressing the vanished peer is not.
    assert await alice.request("session.send", {"session_id": session_id, "data": 1}) == {}
    with pytest.raises(MatchmakerError) as caught:
        await alice.request("session.send", {"session_id": session_id, "data": 2, "to": [bob_id]})
    assert caught.value.code == "session.not_member"
    await alice.leave_session(session_id)
    assert not server.plane.core.sessions
    for request in (
        ("session.leave", {"session_id": session_id}),
        ("session.send", {"session_id": session_id, "data": 3}),
    ):
        with pytest.raises(MatchmakerError) as caught:
            await alice.request(*request)
        assert caught.value.code == "session.not_found"
    with pytest.raises(MatchmakerError) as caught:
        await alice.leave("never-entered")
    assert caught.value.code == "pool.not_found"
    assert await alice.request("ping") is None


async def test_requests_racing_a_close_get_no_reply_and_leak_nothing(server: DataServer) -> None:
    """Frames already in flight behind a ``bye`` are dropped, not half-applied."""
    async with connect(server.url) as ws:
        await ws.send('{"type":"hello","id":"h","data":{"v":1}}')
        await ws.recv()
        await ws.send('{"type":"bye"}')
        await ws.send(ENTER)
        await ws.send('{"type":"session.join","id":"j","data":{"session":"r","create":true}}')
        async with asyncio.timeout(5):
            await ws.wait_closed()
        assert ws.close_code == 4000
    await server.until(lambda: not server.plane.open)
    assert not server.plane.core.clients
    assert not server.plane.core.pools
    assert not server.plane.core.rooms
