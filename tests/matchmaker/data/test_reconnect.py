"""The Python client's automatic resume (``reconnect=``) over real sockets, behind a TCP
proxy that cuts, stalls and refuses: events once and in order across cuts, requests that
wait, a fresh credential per attempt, the backoff's limits, and final closes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from matchmaker.client import Client, Event, Reconnect
from matchmaker.errors import MatchmakerError
from matchmaker.model import Project, ProjectKey
from tests.matchmaker.data.cutproxy import CutProxy, cut_proxy

FAST = Reconnect(initial_delay_ms=10, max_delay_ms=80)
KEYED = Project(id="keyed", keys=(ProjectKey(type="shared-secret", secret="s3cret"),))


@pytest.fixture
async def proxy(start_server: Any) -> AsyncIterator[tuple[Any, CutProxy]]:
    """``(server, proxy)``: a server with a long grace, and a proxy in front of it."""
    server = await start_server(KEYED, resume_grace_ms=10_000)
    async with cut_proxy(server.url) as cutting:
        yield server, cutting


async def reconnecting(server: Any, url: str, **options: Any) -> Client:
    """A client with ``reconnect=`` (``FAST`` unless given), closed at teardown."""
    options.setdefault("reconnect", FAST)
    client = await Client.connect(url, **options)
    server.clients.append(client)
    return client


async def until_event(client: Client, kind: str, wait_s: float = 10.0) -> Event:
    return await client.next_event(kind, wait_s=wait_s)


async def test_cuts_lose_no_event_and_repeat_none(proxy: tuple[Any, CutProxy]) -> None:
    """A peer sends every 5 ms while the proxy cuts the reconnecting client three times:
    it sees every message once, in order, and each cut as ``connection.away`` then
    ``connection.back`` with its client id kept."""
    server, cutting = proxy
    sender = await server.connect()
    room = (await sender.join("r", create=True))["session_id"]
    client = await reconnecting(server, cutting.url)
    await client.join("r")
    total, cuts_at = 300, (40, 120, 200)

    async def send_all() -> None:
        for n in range(total):
            await sender.send(room, {"n": n})
            await asyncio.sleep(0.005)  # the pace of a game, not a synchronisation

    sending = asyncio.create_task(send_all())
    seen: list[int] = []
    kinds: list[str] = []
    async with asyncio.timeout(30):
        async for event in client.events():
            if event.type == "session.message":
                assert kinds[-1:] != ["connection.away"]  # the replay comes after the back
                seen.append(event.data["data"]["n"])
                if len(seen) in cuts_at:
                    assert cutting.cut() == 1
            elif event.type.startswith("connection."):
                kinds.append(event.type)
                if event.type == "connection.back":
                    assert event.data["client_id"] == client.client_id
            if len(seen) == total:
                break
    await sending
    assert seen == list(range(total))
    assert kinds == ["connection.away", "connection.back"] * len(cuts_at)
    assert client.state == "open"


async def test_a_request_made_while_away_waits_and_each_attempt_asks_for_a_credential(
    proxy: tuple[Any, CutProxy],
) -> None:
    server, cutting = proxy
    asked: list[int] = []

    def credential() -> str:
        asked.append(len(asked))
        return "s3cret"

    client = await reconnecting(server, cutting.url, credential=credential)
    assert asked == [0]
    cutting.refusing = True
    cutting.cut()
    away = await until_event(client, "connection.away")
    assert away.data["grace_ms"] == 10_000
    assert client.state == "reconnecting"
    joining = asyncio.create_task(client.join("r", create=True))
    await server.until(lambda: cutting.accepted >= 4)  # three refused attempts at least
    assert not joining.done()
    cutting.refusing = False
    back = await until_event(client, "connection.back")
    assert back.data["attempts"] >= 3
    assert (await joining)["created"] is True
    assert len(asked) == back.data["attempts"] + 1  # the first hello, then one per attempt
    assert server.plane.core.clients[client.client_id or ""].credential == "s3cret"


async def test_a_reply_lost_with_the_connection_is_interrupted(
    proxy: tuple[Any, CutProxy],
) -> None:
    server, cutting = proxy
    client = await reconnecting(server, cutting.url)
    cutting.stall()  # the request goes nowhere and its reply never comes
    asking = asyncio.create_task(client.request("ping"))
    await server.until(lambda: bool(client._pending))
    cutting.cut()
    with pytest.raises(MatchmakerError) as caught:
        await asking
    assert caught.value.code == "client.interrupted"
    await until_event(client, "connection.back")
    await client.request("ping")


async def test_the_client_heartbeat_notices_a_half_open_connection(
    start_server: Any,
) -> None:
    """A connection that carries nothing and closes nothing: the client hears no frame for
    ``heartbeat_timeout_ms``, drops it (3002) and resumes."""
    server = await start_server(
        resume_grace_ms=10_000, heartbeat_interval_ms=100, heartbeat_timeout_ms=400
    )
    async with cut_proxy(server.url) as cutting:
        client = await reconnecting(server, cutting.url)
        cutting.stall()
        away = await until_event(client, "connection.away", wait_s=5)
        assert away.data["code"] == 3002
        await until_event(client, "connection.back", wait_s=5)
        assert (await client.join("r", create=True))["created"] is True


async def test_sends_made_while_away_are_sent_after_the_resume(
    proxy: tuple[Any, CutProxy],
) -> None:
    server, cutting = proxy
    peer = await server.connect()
    room = (await peer.join("r", create=True))["session_id"]
    client = await reconnecting(server, cutting.url, reconnect=Reconnect(exactly_once=False))
    await client.join("r")
    cutting.refusing = True
    cutting.cut()
    await until_event(client, "connection.away")
    sending = asyncio.create_task(client.send(room, {"n": 1}))
    await server.until(lambda: cutting.accepted >= 3)
    assert not sending.done()
    cutting.refusing = False
    await sending
    assert (await peer.next_event("session.message")).data["data"] == {"n": 1}


async def test_the_grace_running_out_closes_the_client_with_resume_expired(
    start_server: Any,
) -> None:
    server = await start_server(resume_grace_ms=300)
    async with cut_proxy(server.url) as cutting:
        client = await reconnecting(server, cutting.url)
        cutting.refusing = True
        cutting.cut()
        await until_event(client, "connection.away")
        for n in range(2):
            await client.send("s", n)  # held for the resume that will not come
        lost = []
        while (event := await client.next_event(wait_s=5)).type == "error":
            lost.append((event.data["code"], event.data["details"]["seq"]))
        assert lost == [("client.closed", 1), ("client.closed", 2)]
        assert event.type == "connection.closed"
        assert event.data["error"]["code"] == "resume.expired"
        assert client.state == "closed"
        with pytest.raises(MatchmakerError) as caught:
            await client.request("ping")
        assert caught.value.code == "client.closed"
        assert (caught.value.details or {})["reason"] == "resume.expired"
        with pytest.raises(MatchmakerError) as caught:
            await client.send("s", {})
        assert caught.value.code == "client.closed"


async def test_max_attempts_bounds_the_retries(proxy: tuple[Any, CutProxy]) -> None:
    server, cutting = proxy
    client = await reconnecting(
        server, cutting.url, reconnect=Reconnect(initial_delay_ms=5, max_attempts=3)
    )
    cutting.refusing = True
    cutting.cut()
    closed = await until_event(client, "connection.closed")
    assert closed.data["error"]["code"] == "client.connect"
    assert cutting.accepted == 1 + 3  # the first connection, then three attempts


@pytest.mark.parametrize("final", ["replaced", "revoked", "bye"])
async def test_a_final_close_is_not_resumed(proxy: tuple[Any, CutProxy], final: str) -> None:
    """3009 (another connection took the client), a credential revoked before the resume
    (4003) and ``bye`` (4000) end the client: ``connection.closed``, no reconnect."""
    server, cutting = proxy
    client = await reconnecting(server, cutting.url, credential="s3cret")
    if final == "replaced":
        assert client.resume_token is not None
        await server.connect(credential="s3cret", resume=(client.resume_token, 0))
    elif final == "revoked":
        server.directory.put(
            Project(id="keyed", keys=(ProjectKey(type="shared-secret", secret="new"),))
        )
        cutting.cut()
        await until_event(client, "connection.away")
    else:
        await client.close()
    closed = await until_event(client, "connection.closed")
    code, error = closed.data["code"], closed.data["error"]
    expected = {
        "replaced": (3009, "client.closed"),
        "revoked": (4003, "auth.invalid_credential"),
        "bye": (4000, None),
    }[final]
    assert (code, error and error["code"]) == expected
    assert client.state == "closed"
    accepted = cutting.accepted
    with pytest.raises(MatchmakerError):
        await client.next_event()
    assert cutting.accepted == accepted


async def test_a_credential_function_that_fails_fails_only_that_attempt(
    proxy: tuple[Any, CutProxy],
) -> None:
    """A token service down during the blip: the attempt that could not get a credential
    is retried, with the function called again."""
    server, cutting = proxy
    asked: list[int] = []

    def credential() -> str:
        asked.append(len(asked))
        if len(asked) == 2:
            raise ConnectionError("the token service is down")
        return "s3cret"

    client = await reconnecting(server, cutting.url, credential=credential)
    cutting.cut()
    back = await until_event(client, "connection.back")
    assert back.data["attempts"] == 2
    assert len(asked) == 3
    assert client.state == "open"


async def test_closing_while_away_ends_waiting_calls_with_client_closed(
    proxy: tuple[Any, CutProxy],
) -> None:
    server, cutting = proxy
    client = await reconnecting(server, cutting.url)
    cutting.refusing = True
    cutting.cut()
    await until_event(client, "connection.away")
    waiting = asyncio.create_task(client.request("ping", wait_s=30))
    await client.close()
    with pytest.raises(MatchmakerError) as caught:
        await asyncio.wait_for(waiting, 5)
    assert caught.value.code == "client.closed"
    closed = await until_event(client, "connection.closed")
    assert closed.data["error"] is None
    assert client.state == "closed"
