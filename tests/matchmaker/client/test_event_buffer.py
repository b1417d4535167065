"""The cap on the events a client holds for its application (``max_buffered_events``), over
a real server on loopback: a client that does not read keeps the newest events up to the
cap and drops the oldest, as the JavaScript client's ``maxBufferedEvents``, on one
connection and across a resume (a dropped event counts as received: it is not replayed)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import matchmaker
from matchmaker.client import Client, Event, Reconnect
from matchmaker.config import Limits

# Bursts past the default cap are neither rate-limited nor closed as a slow consumer.
ROOMY = Limits(send_burst=4000, send_rate_per_s=4000.0, outbound_queue=4096)


@pytest.fixture
async def ws_url() -> AsyncIterator[str]:
    """A real matchmaker on a free loopback port."""
    async with matchmaker.serve(matchmaker.ServerConfig(port=0, limits=ROOMY)) as server:
        yield server.ws_url


async def room(host: Client, reader: Client) -> str:
    """A session ``host`` created and ``reader`` joined."""
    session_id: str = (await host.join("lobby", create=True))["session_id"]
    await reader.join("lobby")
    return session_id


async def send_and_settle(host: Client, reader: Client, session_id: str, numbers: range) -> None:
    """``host`` sends ``{"n": n}`` for each of ``numbers``; returns once ``reader`` has taken
    every one off its socket. The server handles a connection's frames in order and queues
    each relayed event on the reader's connection before it reads the next frame, so the
    host's ``ping`` reply means every message is queued for the reader, and the reader's
    own ``ping`` reply comes after them on its socket."""
    for n in numbers:
        await host.send(session_id, {"n": n})
    await host.request("ping")
    await reader.request("ping")


async def held_after_close(reader: Client) -> list[Event]:
    """Every event ``reader`` still holds: closed, its ``events()`` yields them and ends."""
    await reader.close()
    return [event async for event in reader.events()]


def numbers_of(events: list[Event]) -> list[int]:
    return [event.data["data"]["n"] for event in events if event.type == "session.message"]


async def test_a_reader_that_does_not_read_keeps_the_newest_events_up_to_the_cap(
    ws_url: str,
) -> None:
    """Three times the cap sent to a client that reads nothing: it holds exactly the cap,
    the newest ones in order, and has received (``last_seq``) every one."""
    cap, total = 16, 48
    async with await Client.connect(ws_url) as host:
        reader = await Client.connect(ws_url, max_buffered_events=cap)
        session_id = await room(host, reader)
        await send_and_settle(host, reader, session_id, range(total))
        held = await held_after_close(reader)
    assert len(held) == cap
    assert numbers_of(held) == list(range(total - cap, total))
    assert held[-1].seq == reader.last_seq


async def test_the_default_cap_is_1024(ws_url: str) -> None:
    """Without the option a client holds 1024 events, the newest."""
    total = 1024 + 40
    async with await Client.connect(ws_url) as host:
        reader = await Client.connect(ws_url)
        session_id = await room(host, reader)
        await send_and_settle(host, reader, session_id, range(total))
        held = await held_after_close(reader)
    assert numbers_of(held) == list(range(total - 1024, total))


async def test_a_resume_does_not_replay_what_a_full_buffer_dropped(ws_url: str) -> None:
    """A reconnecting client past its cap loses its connection while the host sends three
    more. The resume asks for the events after the last one received (dropped ones
    included), so only those three are replayed, once, after ``connection.back``; what is
    held is the newest of all, ``connection.closed`` (from ``close()``) last."""
    cap = 8
    fast = Reconnect(initial_delay_ms=10, max_delay_ms=80)
    async with await Client.connect(ws_url) as host:
        reader = await Client.connect(ws_url, reconnect=fast, max_buffered_events=cap)
        session_id = await room(host, reader)
        await send_and_settle(host, reader, session_id, range(20))
        received = reader.last_seq
        reader.abort()
        await send_and_settle(host, reader, session_id, range(20, 23))  # waits for the resume
        held = await held_after_close(reader)
    kinds = [event.type for event in held]
    assert kinds == ["session.message"] * 2 + [
        "connection.away",
        "connection.back",
        *["session.message"] * 3,
        "connection.closed",
    ]
    assert numbers_of(held) == [18, 19, 20, 21, 22]
    replayed = [event.seq for event in held[4:7]]
    assert replayed == [received + 1, received + 2, received + 3]
    assert reader.last_seq == received + 3


@pytest.mark.parametrize("cap", [0, -1, True])
async def test_a_cap_that_is_not_a_positive_int_is_refused_before_connecting(cap: int) -> None:
    """Refused as a ``ValueError`` before any socket opens (nothing listens at port 1: a
    cap checked after opening would fail as ``client.connect`` instead)."""
    with pytest.raises(ValueError, match="max_buffered_events must be a positive integer"):
        await Client.connect("ws://127.0.0.1:1/ws", max_buffered_events=cap)
