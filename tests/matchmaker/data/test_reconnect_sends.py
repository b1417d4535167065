"""Exactly-once sends of the Python client (``reconnect=``) over real sockets behind a TCP
proxy: both ways through repeated cuts, what a resume sends again and what it does not,
the cap on unacknowledged bytes, and the ping that fetches an ``ack``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from matchmaker.client import Client
from matchmaker.errors import MatchmakerError
from tests.matchmaker.data.cutproxy import CutProxy, cut_proxy
from tests.matchmaker.data.test_reconnect import reconnecting


@pytest.fixture
async def proxy(start_server: Any) -> AsyncIterator[tuple[Any, CutProxy]]:
    """``(server, proxy)``: a server with a long grace (and heartbeat, so that only the
    client's own pings fetch acks), and a proxy in front of it."""
    server = await start_server(
        resume_grace_ms=10_000, heartbeat_interval_ms=60_000, heartbeat_timeout_ms=120_000
    )
    async with cut_proxy(server.url) as cutting:
        yield server, cutting


async def messages(client: Client, count: int) -> list[Any]:
    """The data of the next ``count`` relayed messages, in arrival order."""
    return [(await client.next_event("session.message")).data["data"] for _ in range(count)]


async def fill(client: Client, room: str) -> tuple[int, MatchmakerError]:
    """Send until a send is refused: how many were held, and the refusal."""
    held = 0
    while True:
        try:
            await client.send(room, {"n": held, "pad": "x" * 200})
        except MatchmakerError as refused:
            return held, refused
        held += 1


async def test_two_players_sending_every_5_ms_through_cuts_get_everything_once_in_order(
    proxy: tuple[Any, CutProxy],
) -> None:
    """Both players behind the proxy, each sending every 5 ms, the proxy cutting both
    connections four times: each receives all the other sent, once, in order."""
    server, cutting = proxy
    alice = await reconnecting(server, cutting.url)
    bob = await reconnecting(server, cutting.url)
    room = (await alice.join("r", create=True))["session_id"]
    await bob.join("r")
    await alice.next_event("session.member_joined")
    total, cuts_at = 400, (50, 150, 250, 350)

    async def play(me: Client) -> None:
        for n in range(total):
            await me.send(room, n)
            await asyncio.sleep(0.005)  # the pace of a game, not a synchronisation

    async def receive(me: Client, cutter: bool) -> list[int]:
        seen: list[int] = []
        while len(seen) < total:
            event = await me.next_event(wait_s=20)
            if event.type == "session.message":
                seen.append(event.data["data"])
                if cutter and len(seen) in cuts_at:
                    cutting.cut()
        return seen

    async with asyncio.timeout(60):
        plays = [asyncio.create_task(play(me)) for me in (alice, bob)]
        received = await asyncio.gather(receive(alice, True), receive(bob, False))
        await asyncio.gather(*plays)
    assert list(received) == [list(range(total)), list(range(total))]
    for me in (alice, bob):
        await me.request("ping")  # its pong carries the ack of the last sends
        assert me.unacked_bytes == 0


async def test_a_resume_sends_again_only_what_the_server_did_not_take(
    proxy: tuple[Any, CutProxy],
) -> None:
    """Five sends reach the server but not their ``ack`` (the way back is stalled), five
    more are lost on the way out; after the cut the server's ``ack`` of 5 keeps the first
    five from being sent again, and the last five are sent again, once each."""
    server, cutting = proxy
    peer = await server.connect()
    room = (await peer.join("r", create=True))["session_id"]
    client = await reconnecting(server, cutting.url)
    await client.join("r")
    cutting.stall("down")
    for n in range(5):
        await client.send(room, n)
    assert await messages(peer, 5) == [0, 1, 2, 3, 4]
    cutting.stall("up")
    for n in range(5, 10):
        await client.send(room, n)
    assert client.unacked_bytes > 0  # no ack came back for any of the ten
    cutting.cut()
    back = await client.next_event("connection.back")
    assert back.data["resent"] == 5
    await client.send(room, "end")
    assert await messages(peer, 6) == [5, 6, 7, 8, 9, "end"]
    await client.request("ping")  # its pong carries the ack of the last sends
    assert client.unacked_bytes == 0


async def test_past_the_cap_a_send_raises_and_what_was_held_arrives_once(
    proxy: tuple[Any, CutProxy],
) -> None:
    server, cutting = proxy
    peer = await server.connect()
    room = (await peer.join("r", create=True))["session_id"]
    client = await reconnecting(server, cutting.url, max_unacked_bytes=2000)
    await client.join("r")
    cutting.refusing = True
    cutting.cut()
    await client.next_event("connection.away")
    held, refused = await fill(client, room)
    assert refused.code == "client.backpressure"
    assert refused.details == {"limit": 2000}
    assert 1500 < client.unacked_bytes <= 2000
    cutting.refusing = False
    await client.next_event("connection.back")
    await client.send(room, {"n": "end"})
    got = [m["n"] for m in await messages(peer, held + 1)]
    assert got == [*range(held), "end"]
    await client.request("ping")  # its pong carries the ack of the last sends
    assert client.unacked_bytes == 0


async def test_a_client_that_only_sends_pings_for_its_ack_past_half_the_cap(
    proxy: tuple[Any, CutProxy],
) -> None:
    """Nothing comes back to a client that only sends (the server's heartbeat is a
    minute away): past half its cap it pings, and the ``pong``'s ``ack`` frees it."""
    server, cutting = proxy
    peer = await server.connect()
    room = (await peer.join("r", create=True))["session_id"]
    client = await reconnecting(server, cutting.url, max_unacked_bytes=4000)
    await client.join("r")
    sent = 0
    while client.unacked_bytes * 2 <= 4000:
        await client.send(room, {"n": sent, "pad": "x" * 200})
        sent += 1
    await server.until(lambda: client.unacked_bytes == 0)
    assert [m["n"] for m in await messages(peer, sent)] == list(range(sent))


async def test_a_burst_past_the_servers_bucket_is_paced_not_refused(
    start_server: Any,
) -> None:
    """Thirty sends at once against a bucket of five: the client writes them at the rate
    the ``hello`` reply states, so the server refuses next to none (unpaced, it refuses
    25); a send too large for any frame is refused at once, unnumbered."""
    server = await start_server(send_rate_per_s=200, send_burst=5)
    peer = await server.connect()
    room = (await peer.join("r", create=True))["session_id"]
    client = await reconnecting(server, server.url)
    await client.join("r")
    for n in range(30):
        await client.send(room, n)
    with pytest.raises(MatchmakerError) as caught:
        await client.send(room, "x" * 70_000)
    assert caught.value.code == "protocol.too_large"
    await client.send(room, "end")
    assert await messages(peer, 31) == [*range(30), "end"]
    await peer.send(room, "over")
    await client.next_event("session.created")  # the join's
    refused = 0
    while (event := await client.next_event()).type == "error":
        refused += 1  # a frame the server read late, after one it read early
    assert (event.type, event.data["data"]) == ("session.message", "over")
    assert refused < 5


async def test_sends_refused_as_rate_limited_are_sent_again_once_in_order(
    start_server: Any,
) -> None:
    """Unnumbered frames (``send_raw``) spend the server's tokens behind the client's
    pacing: the numbered sends after them are refused (``rate.limited``, reported) with
    the gaps after them (not reported), and written again until taken, once each."""
    server = await start_server(send_rate_per_s=100, send_burst=5)
    peer = await server.connect()
    room = (await peer.join("r", create=True))["session_id"]
    client = await reconnecting(server, server.url)
    await client.join("r")
    await client.next_event("session.created")
    for n in range(5):
        raw = {"type": "session.send", "data": {"session_id": room, "data": f"raw{n}"}}
        await client.send_raw(json.dumps(raw))
    for n in range(4):
        await client.send(room, n)
    await client.send(room, "end")
    expected = [f"raw{n}" for n in range(5)] + [0, 1, 2, 3, "end"]
    assert await messages(peer, 10) == expected
    await peer.send(room, "over")
    reported = []
    while (event := await client.next_event()).type == "error":
        reported.append(event.data["code"])
    assert (event.type, event.data["data"]) == ("session.message", "over")
    assert reported
    assert set(reported) == {"rate.limited"}  # not the gaps, which are not worth a word
