"""``hello``: Project resolution, credentials, and the handshake deadline, over real sockets."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from matchmaker.client import Client
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, ProjectKey

KEYED = Project(id="keyed", keys=(ProjectKey(type="shared-secret", secret="s3cret"),))
DUEL = MatchmakingPolicy(name="duel", mode="auto", group_size=2, default=True)
OPEN = Project(id="open", lockdown=True, policies=(DUEL,))


async def test_zero_config_hello_binds_the_default_project(server: Any) -> None:
    client = await server.connect()
    reply = client.hello_reply
    assert reply["project"] == "default"
    assert reply["client_id"] == client.client_id
    assert reply["resume_token"]
    assert reply["policies"] == []
    assert reply["lockdown"] is False
    assert reply["limits"]["max_frame_bytes"] == 64 * 1024
    assert reply["heartbeat"] == {"interval_ms": 5_000, "timeout_ms": 15_000}


@pytest.mark.parametrize(
    ("hello", "project"),
    [
        ({"project": "open"}, "open"),
        ({"project": "undeclared"}, "undeclared"),
        ({"credential": "s3cret"}, "keyed"),
        ({"project": "keyed", "credential": "s3cret"}, "keyed"),
    ],
)
async def test_hello_resolves_the_project(
    start_server: Any, hello: dict[str, str], project: str
) -> None:
    server = await start_server(KEYED, OPEN)
    client = await server.connect(**hello)
    assert client.hello_reply["project"] == project
    if project == "open":
        assert client.hello_reply["policies"] == [
            {"name": "duel", "mode": "auto", "groupSize": 2, "default": True}
        ]
        assert client.hello_reply["lockdown"] is True


@pytest.mark.parametrize(
    ("hello", "require", "code"),
    [
        ({"project": "open", "credential": "s3cret"}, False, "project.forbidden"),
        ({"project": "keyed"}, False, "project.forbidden"),
        ({"credential": "wrong"}, False, "auth.invalid_credential"),
        ({"project": "undeclared"}, True, "project.not_found"),
    ],
)
async def test_hello_refusals_close_4003(
    start_server: Any, hello: dict[str, str], require: bool, code: str
) -> None:
    server = await start_server(KEYED, OPEN, require_declared=require)
    client = await server.connect(hello=False)
    with pytest.raises(MatchmakerError) as caught:
        await client.hello(**hello)
    assert caught.value.code == code
    assert await client.wait_closed() == 4003


async def test_require_declared_still_admits_default_and_declared(start_server: Any) -> None:
    server = await start_server(OPEN, require_declared=True)
    assert (await server.connect()).hello_reply["project"] == "default"
    assert (await server.connect(project="open")).hello_reply["project"] == "open"


async def test_requests_before_hello_are_not_ready(server: Any) -> None:
    client = await server.connect(hello=False)
    with pytest.raises(MatchmakerError) as caught:
        await client.enter(pool="x")
    assert caught.value.code == "protocol.not_ready"
    assert (await client.request("ping")) is None
    await client.hello()
    assert client.client_id


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"v": 2}, "version"),
        ({"v": 1, "attributes": {f"k{i}": i for i in range(33)}}, "at most 32"),
        ({"v": 1, "attributes": {"name": "x" * 257}}, "too long"),
        ({"v": 1, "attributes": {"bad key": 1}}, "attributes"),
        ({"v": 1, "attributes": {"k": [1]}}, "attributes"),
        ({"v": 1, "extra": True}, "extra"),
        ({"v": 1, "project": "a\nb"}, "$.data.project"),
        ({"v": 1, "project": "x" * 129}, "$.data.project"),
    ],
)
async def test_bad_hello_is_a_bad_request(server: Any, data: dict[str, Any], fragment: str) -> None:
    client = await server.connect(hello=False)
    with pytest.raises(MatchmakerError) as caught:
        await client.request("hello", data)
    assert caught.value.code == "protocol.bad_request"
    assert fragment in caught.value.message
    assert (await client.hello())["project"] == "default"


async def test_second_hello_is_refused(server: Any) -> None:
    client = await server.connect()
    with pytest.raises(MatchmakerError) as caught:
        await client.hello()
    assert caught.value.code == "protocol.bad_request"


async def test_resume_is_not_served_yet(server: Any) -> None:
    client = await server.connect(hello=False)
    with pytest.raises(MatchmakerError) as caught:
        await client.request("hello", {"v": 1, "resume": {"token": "t", "last_seq": 3}})
    assert caught.value.code == "resume.expired"
    assert await client.wait_closed() == 4004


async def test_no_hello_within_the_deadline_closes_4001(start_server: Any) -> None:
    server = await start_server(handshake_timeout_s=0.2)
    silent = await server.connect(hello=False)
    talker = await server.connect()
    assert await silent.wait_closed(wait_s=5) == 4001
    assert talker.close_code is None
    assert await talker.request("ping") is None


async def test_keys_added_later_refuse_the_next_entry(start_server: Any) -> None:
    server = await start_server()
    client = await server.connect(project="late")
    server.directory.put(Project(id="late", keys=(ProjectKey(type="shared-secret", secret="k"),)))
    with pytest.raises(MatchmakerError) as caught:
        await client.enter(pool="x", create=True, mode="auto", group_size=2)
    assert caught.value.code == "project.forbidden"
    keyed = await server.connect(credential="k")
    assert (await keyed.enter(pool="x", create=True, mode="auto", group_size=2))["pool"] == "x"


async def test_a_revoked_credential_is_told_apart_from_a_missing_one(
    start_server: Any,
) -> None:
    """A client whose key a PATCH removed was told the Project "requires a credential",
    although it had presented one."""
    server = await start_server(KEYED)
    client = await server.connect(credential="s3cret")
    server.directory.put(
        Project(id="keyed", keys=(ProjectKey(type="shared-secret", secret="new"),))
    )
    with pytest.raises(MatchmakerError) as caught:
        await client.enter(pool="x", create=True, mode="auto", group_size=2)
    assert caught.value.code == "auth.invalid_credential"
    assert caught.value.details == {"project": "keyed", "reason": "revoked"}
    assert "revoked" in caught.value.message


async def test_bye_closes_4000(server: Any) -> None:
    client = await server.connect()
    await client.send_raw('{"type":"bye"}')
    assert await client.wait_closed() == 4000


async def test_clients_connect_concurrently(server: Any) -> None:
    clients: list[Client] = await asyncio.gather(*(server.connect() for _ in range(50)))
    assert len({c.client_id for c in clients}) == 50


async def test_client_connect_raises_the_hello_error_and_closes(start_server: Any) -> None:
    server = await start_server(KEYED)
    with pytest.raises(MatchmakerError) as caught:
        await Client.connect(server.url, project="keyed")
    assert caught.value.code == "project.forbidden"
    await server.until(lambda: len(server.plane.open) == 0)
