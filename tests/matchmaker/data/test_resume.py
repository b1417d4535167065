"""Reconnect and resume over real sockets: a dropped TCP connection, the grace period,
replay, token rotation and its limits, paused entries, heartbeat drops, replaced sockets."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from websockets.asyncio.client import connect

from matchmaker.client import Client
from matchmaker.config import Limits
from matchmaker.errors import MatchmakerError
from matchmaker.model import Project

ADHOC = {"pool": "duo", "create": True, "mode": "auto", "groupSize": 2}


async def paired(server: Any) -> tuple[Client, Client, str]:
    a, b = await server.connect(), await server.connect()
    await a.request("pool.enter", ADHOC)
    await b.request("pool.enter", {"pool": "duo"})
    session_id = (await a.next_event("session.created")).data["session_id"]
    await b.next_event("session.created")
    return a, b, session_id


async def resume(server: Any, client: Client, **hello: Any) -> Client:
    assert client.resume_token is not None
    back: Client = await server.connect(resume=(client.resume_token, client.last_seq), **hello)
    assert back.hello_reply["resumed"] is True
    return back


async def test_a_dropped_connection_resumes_without_losing_a_relayed_message(
    start_server: Any,
) -> None:
    server = await start_server(resume_grace_ms=10_000)
    a, b, session_id = await paired(server)
    await a.send(session_id, {"n": 0})
    assert (await b.next_event("session.message")).data["data"] == {"n": 0}
    b.abort()  # the TCP connection is cut, no closing handshake
    away = (await a.next_event("session.member_status")).data
    assert away == {"session_id": session_id, "client_id": b.client_id, "status": "away"}
    for n in (1, 2):
        await a.send(session_id, {"n": n})  # relayed while b is away: kept for it
    back = await resume(server, b)
    assert back.client_id == b.client_id
    assert back.resume_token != b.resume_token  # rotated
    replayed = [await back.next_event("session.message") for _ in range(2)]
    assert [e.data["data"] for e in replayed] == [{"n": 1}, {"n": 2}]
    assert [e.seq for e in replayed] == [b.last_seq + 1, b.last_seq + 2]  # no gap
    status = (await a.next_event("session.member_status")).data
    assert status["status"] == "back"
    await back.send(session_id, {"from": "b again"})
    assert (await a.next_event("session.message")).data["data"] == {"from": "b again"}


async def test_a_token_works_once_and_only_for_its_project(start_server: Any) -> None:
    server = await start_server(Project(id="other"), resume_grace_ms=10_000)
    _, b, _ = await paired(server)
    token, last = b.resume_token, b.last_seq
    assert token is not None
    b.abort()
    with pytest.raises(MatchmakerError) as caught:
        await Client.connect(server.url, project="other", resume=(token, last))
    assert caught.value.code == "resume.expired"
    back = await server.connect(resume=(token, last))  # not burned by the wrong Project
    assert back.client_id == b.client_id
    back.abort()
    raw = await connect(server.url)
    await raw.send(
        json.dumps(
            {
                "id": "h",
                "type": "hello",
                "data": {"v": 1, "resume": {"token": token, "last_seq": 0}},
            }
        )
    )
    reply = json.loads(await raw.recv())
    assert reply["error"]["code"] == "resume.expired"  # used once already
    await raw.wait_closed()
    assert raw.close_code == 4004


async def test_the_grace_ends_with_member_left_and_withdrawn_entries(start_server: Any) -> None:
    server = await start_server(resume_grace_ms=300)
    a, b, session_id = await paired(server)
    await b.request("pool.enter", {**ADHOC, "pool": "solo-wait"})
    b.abort()
    assert (await a.next_event("session.member_status")).data["status"] == "away"
    left = (await a.next_event("session.member_left", wait_s=5)).data
    assert left == {"session_id": session_id, "client_id": b.client_id, "reason": "disconnected"}
    assert b.client_id not in server.plane.core.clients
    assert server.plane.core.pools == {}
    with pytest.raises(MatchmakerError) as caught:
        await resume(server, b)
    assert caught.value.code == "resume.expired"


async def test_entries_are_paused_while_away_and_match_on_resume(start_server: Any) -> None:
    server = await start_server(resume_grace_ms=10_000)
    b = await server.connect()
    await b.request("pool.enter", ADHOC)
    b.abort()
    await server.until(lambda: server.plane.core.clients[b.client_id].away)
    c = await server.connect()
    await c.request("pool.enter", {"pool": "duo"})  # the pool is live, b's entry is paused
    d = await server.connect()
    await d.request("pool.enter", {"pool": "duo"})
    members = {m["client_id"] for m in (await c.next_event("session.created")).data["members"]}
    assert members == {c.client_id, d.client_id}  # not b: paused entries are not matchable
    e = await server.connect()
    await e.request("pool.enter", {"pool": "duo"})
    back = await resume(server, b)
    created = (await back.next_event("session.created")).data
    assert {m["client_id"] for m in created["members"]} == {b.client_id, e.client_id}


async def test_an_overflowed_buffer_resumes_partially(start_server: Any) -> None:
    """The buffer is bounded in bytes: five messages of about 1.2 KB each, and room for
    two (``FRAME_OVERHEAD_BYTES`` each included), whatever the ids' lengths."""
    server = await start_server(resume_grace_ms=10_000, resume_buffer_bytes=2900)
    a, b, session_id = await paired(server)
    b.abort()
    await a.next_event("session.member_status")
    for n in range(5):
        await a.send(session_id, {"n": n, "pad": "x" * 1000})
    await a.request("ping")  # the sends were handled: all five are numbered for b
    first = b.last_seq + 1
    back = await resume(server, b)
    partial = await back.next_event()
    assert (partial.type, partial.data) == (
        "resume.partial",
        {"from_seq": first, "to_seq": first + 2},
    )
    kept = [await back.next_event("session.message") for _ in range(2)]
    assert [e.data["data"]["n"] for e in kept] == [3, 4]


@pytest.mark.parametrize("offset", [-5, 1, 10**9], ids=["negative", "one-past", "far-past"])
async def test_a_last_seq_never_sent_is_refused_and_the_token_still_works(
    start_server: Any, offset: int
) -> None:
    """``last_seq`` -5 was answered ``resume.partial {from_seq: -4}`` and 10^9 replayed
    nothing: both are seqs this client was never sent."""
    server = await start_server(resume_grace_ms=10_000)
    a, b, session_id = await paired(server)
    b.abort()
    await a.next_event("session.member_status")
    await a.send(session_id, {"n": 1})
    await a.request("ping")  # handled: b was sent (and keeps) one more event
    token, sent = b.resume_token, b.last_seq + 1
    assert token is not None
    bad = sent + offset if offset > 0 else offset
    with pytest.raises(MatchmakerError) as caught:
        await Client.connect(server.url, resume=(token, bad))
    assert caught.value.code == "protocol.bad_request"
    assert caught.value.details == {"field": "last_seq", "limit": sent}
    back = await server.connect(resume=(token, b.last_seq))
    assert back.client_id == b.client_id
    assert (await back.next_event("session.message")).data["data"] == {"n": 1}


async def test_a_heartbeat_timeout_is_resumable_and_a_half_open_socket_is_replaced(
    start_server: Any,
) -> None:
    server = await start_server(
        resume_grace_ms=10_000, heartbeat_interval_ms=100, heartbeat_timeout_ms=300
    )
    a = await server.connect()
    room = await a.join("r", create=True)
    silent = await connect(server.url)  # never answers pings
    await silent.send('{"id":"h","type":"hello","data":{"v":1}}')
    hello = json.loads(await silent.recv())["data"]
    await silent.send('{"id":"j","type":"session.join","data":{"session":"r"}}')
    await a.next_event("session.member_joined")
    await silent.wait_closed()
    assert silent.close_code == 3002
    away = (await a.next_event("session.member_status")).data
    assert (away["client_id"], away["status"]) == (hello["client_id"], "away")
    back = await server.connect(resume=(hello["resume_token"], 0))
    assert back.client_id == hello["client_id"]
    # resuming again while this socket is still open replaces it (3009)
    again = await server.connect(resume=(back.resume_token, back.last_seq))
    assert await back.wait_closed() == 3009
    assert again.client_id == hello["client_id"]
    assert room["session_id"] in server.plane.core.clients[again.client_id].sessions


async def test_a_half_open_peer_is_noticed_well_inside_the_grace_with_the_default_ratios(
    start_server: Any,
) -> None:
    """The default heartbeat and grace, scaled down 50 times: a peer that stops answering
    (its socket open, nothing read) is seen away by its session within the heartbeat
    timeout, well before a grace's worth of silence, and can still resume after that."""
    defaults = Limits()
    scaled = {
        name: getattr(defaults, name) // 50
        for name in ("heartbeat_interval_ms", "heartbeat_timeout_ms", "resume_grace_ms")
    }
    server = await start_server(**scaled)
    a = await server.connect()
    room = await a.join("r", create=True)
    mute = await connect(server.url)  # answers no ping: the server hears nothing more
    await mute.send('{"id":"h","type":"hello","data":{"v":1}}')
    hello = json.loads(await mute.recv())["data"]
    silent_since = time.monotonic()  # its last frame:
    await mute.send('{"id":"j","type":"session.join","data":{"session":"r"}}')
    await a.next_event("session.member_joined")
    away = (await a.next_event("session.member_status")).data
    noticed_ms = (time.monotonic() - silent_since) * 1000
    assert (away["client_id"], away["status"]) == (hello["client_id"], "away")
    assert noticed_ms < scaled["resume_grace_ms"] * 0.75
    back = await server.connect(resume=(hello["resume_token"], 0))
    assert back.client_id == hello["client_id"]
    assert room["session_id"] in server.plane.core.clients[back.client_id].sessions
    await mute.close()


async def test_bye_leaves_at_once_with_nothing_to_resume(server: Any) -> None:
    a, b, _ = await paired(server)
    token = b.resume_token
    await b.close()  # the client library says bye
    left = (await a.next_event("session.member_left")).data
    assert left["reason"] == "disconnected"
    with pytest.raises(MatchmakerError) as caught:
        await Client.connect(server.url, resume=(token or "", 0))
    assert caught.value.code == "resume.expired"
