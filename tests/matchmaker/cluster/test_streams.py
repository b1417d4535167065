"""The members' inboxes against the real Redis (db 13, or ``MATCHMAKER_TEST_REDIS_URL``):
order, a reader that loses its connection, a failed append, an append Redis never
answers, both reply protocols."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Callable
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from matchmaker.cluster.streams import Inbox, Outbound, connection

REDIS_URL = os.environ.get("MATCHMAKER_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")

pytestmark = pytest.mark.redis

Links = Callable[..., tuple[Outbound, Callable[[str], Inbox]]]


@pytest.fixture
async def admin() -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        await client.ping()
    except OSError as exc:
        pytest.skip(
            f"Redis is not reachable at {REDIS_URL}: {exc} (.ci/run starts it; in CI this "
            "skip is a failure)"
        )
    yield client
    await client.aclose()


@pytest.fixture
async def prefix(admin: aioredis.Redis) -> AsyncIterator[str]:
    """A key prefix of this test's own; its keys are deleted afterwards."""
    name = f"test-streams-{uuid.uuid4().hex[:8]}"
    yield name
    keys = [key async for key in admin.scan_iter(f"{name}:*")]
    if keys:
        await admin.delete(*keys)


@pytest.fixture
async def links() -> AsyncIterator[Links]:
    """``links(query)``: an Outbound and an Inbox factory on connections of their own."""
    opened: list[Outbound | Inbox] = []

    def make(query: str = "", block_ms: int = 1000) -> tuple[Outbound, Callable[[str], Inbox]]:
        url = REDIS_URL + query
        outbound = Outbound(connection(url, 1.0), 1.0)
        opened.append(outbound)

        def inbox(stream: str) -> Inbox:
            reader = Inbox(connection(url, 1.0), stream, block_ms=block_ms, count=100)
            opened.append(reader)
            return reader

        return outbound, inbox

    yield make
    for link in opened:
        await link.close()


async def read_all(inbox: Inbox, count: int) -> list[bytes]:
    """Reads until ``count`` payloads came (each ``next`` blocks until one is there)."""
    payloads: list[bytes] = []
    while len(payloads) < count:
        payloads += await asyncio.wait_for(inbox.next(), 5)
    return payloads


@pytest.mark.parametrize("query", ["?protocol=2", "?protocol=3"])
async def test_entries_arrive_in_the_order_appended_per_inbox(
    links: Links, prefix: str, query: str
) -> None:
    outbound, inbox = links(query)
    first, second = f"{prefix}:a", f"{prefix}:b"
    await outbound.append([(first, b"1"), (second, b"x"), (first, b"2")])
    await outbound.append([(first, b"3")])
    assert await read_all(inbox(first), 3) == [b"1", b"2", b"3"]
    assert await read_all(inbox(second), 1) == [b"x"]


async def test_an_idle_inbox_returns_nothing_once_its_block_ends(links: Links, prefix: str) -> None:
    _, inbox = links(block_ms=50)
    assert await asyncio.wait_for(inbox(f"{prefix}:idle").next(), 5) == []


async def test_a_reader_that_lost_its_connection_misses_and_repeats_nothing(
    links: Links, prefix: str, admin: aioredis.Redis
) -> None:
    outbound, _ = links()
    stream = f"{prefix}:inbox"
    conn = connection(REDIS_URL, 1.0)
    await conn.send_command("CLIENT", "SETNAME", prefix)  # to find it in CLIENT LIST
    await conn.read_response()
    reader = Inbox(conn, stream, block_ms=5000, count=100)
    try:
        await outbound.append([(stream, b"before")])
        assert await read_all(reader, 1) == [b"before"]
        blocked = asyncio.ensure_future(reader.next())
        # Redis drops the reader while it waits (as a restart or a proxy would).
        await _kill_when_blocked(admin, prefix)
        with pytest.raises((RedisConnectionError, OSError)):
            await asyncio.wait_for(blocked, 5)
        await outbound.append([(stream, b"while away 1"), (stream, b"while away 2")])
        assert await read_all(reader, 2) == [b"while away 1", b"while away 2"]
    finally:
        await reader.close()


async def _kill_when_blocked(admin: aioredis.Redis, name: str) -> None:
    """Kills the connection named ``name`` once it waits in ``XREAD``."""
    deadline = asyncio.get_running_loop().time() + 5
    while True:
        found = [c for c in await admin.client_list() if c.get("name") == name]
        if found and found[0].get("cmd") == "xread" and "b" in found[0].get("flags", ""):
            await admin.client_kill_filter(_id=found[0]["id"])
            return
        assert asyncio.get_running_loop().time() < deadline, "the reader never blocked"
        await asyncio.sleep(0.01)


async def test_a_failed_append_raises_and_the_next_one_is_in_step(
    links: Links, prefix: str, admin: aioredis.Redis
) -> None:
    outbound, inbox = links()
    stream, wrong = f"{prefix}:inbox", f"{prefix}:not-a-stream"
    await admin.set(wrong, "a string")
    with pytest.raises(ResponseError):
        await outbound.append([(stream, b"1"), (wrong, b"lost"), (stream, b"2")])
    # Each call reads its own replies: an error is the failing call's, not the next one's.
    with pytest.raises(ResponseError):
        await outbound.append([(wrong, b"lost again")])
    await outbound.append([(stream, b"3")])
    # Redis ran every command of a failed write; the caller refuses the whole batch.
    assert await read_all(inbox(stream), 3) == [b"1", b"2", b"3"]


async def test_after_an_outage_the_first_append_is_not_lost_to_a_dead_socket(
    prefix: str, admin: aioredis.Redis
) -> None:
    """Redis closed the appending connection while nothing was being written (a restart):
    an append on it fails, unless the member said the outage is over (``after_outage``)."""
    stream = f"{prefix}:inbox"
    conn = connection(REDIS_URL, 1.0)
    await conn.send_command("CLIENT", "SETNAME", prefix)
    await conn.read_response()
    outbound = Outbound(conn, 1.0)
    reader = Inbox(connection(REDIS_URL, 1.0), stream, block_ms=1000, count=100)
    try:
        await outbound.append([(stream, b"before")])
        await _kill(admin, prefix)
        with pytest.raises((RedisConnectionError, OSError)):
            await outbound.append([(stream, b"lost to the dead socket")])
        await conn.send_command("CLIENT", "SETNAME", prefix)
        await conn.read_response()
        await _kill(admin, prefix)
        outbound.after_outage()
        await outbound.append([(stream, b"after")])
        assert await read_all(reader, 2) == [b"before", b"after"]
    finally:
        await outbound.close()
        await reader.close()


async def _kill(admin: aioredis.Redis, name: str) -> None:
    """Closes the connection named ``name`` from Redis's side."""
    found = [c for c in await admin.client_list() if c.get("name") == name]
    assert len(found) == 1, found
    await admin.client_kill_filter(_id=found[0]["id"])


@pytest.fixture
async def stalling_proxy() -> AsyncIterator[tuple[str, asyncio.Event]]:
    """``(url, stalled)``: Redis behind a TCP proxy that, while ``stalled`` is set, drops
    what clients write (a network that loses a connection's traffic without closing it)."""
    upstream = urlsplit(REDIS_URL)
    stalled = asyncio.Event()
    pipes: set[asyncio.Task[None]] = set()

    async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, gated: bool) -> None:
        try:
            while data := await src.read(65536):
                if not (gated and stalled.is_set()):
                    dst.write(data)
        finally:
            dst.close()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(upstream.hostname, upstream.port)
        for task in (pipe(reader, up_writer, True), pipe(up_reader, writer, False)):
            pipes.add(asyncio.ensure_future(task))

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield urlunsplit(upstream._replace(netloc=f"127.0.0.1:{port}")), stalled
    server.close()
    for task in pipes:
        task.cancel()
    await asyncio.gather(*pipes, return_exceptions=True)


async def test_an_append_redis_does_not_answer_times_out_and_the_next_connects_again(
    prefix: str, stalling_proxy: tuple[str, asyncio.Event]
) -> None:
    url, stalled = stalling_proxy
    stream = f"{prefix}:inbox"
    outbound = Outbound(connection(url, 1.0), 0.2)
    reader = Inbox(connection(REDIS_URL, 1.0), stream, block_ms=1000, count=100)
    loop = asyncio.get_running_loop()
    try:
        await outbound.append([(stream, b"before")])
        stalled.set()
        started = loop.time()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(outbound.append([(stream, b"lost in the stall")]), 5)
        assert loop.time() - started < 1.0  # the append's own bound, not wait_for's
        stalled.clear()
        await asyncio.wait_for(outbound.append([(stream, b"after")]), 5)
        assert await read_all(reader, 2) == [b"before", b"after"]
    finally:
        await outbound.close()
        await reader.close()
