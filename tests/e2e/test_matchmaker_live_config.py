"""The real ``matchmaker`` executable: /admin changes reach WebSocket clients at the next step.

The control plane's writes (lockdown, policies, keys, deletion) apply to the
next ``hello``, ``pool.enter`` or ``session.join``; sessions and ad-hoc pools that
are already live are never touched, and entries waiting under a policy that was
changed or removed are closed (``pool.closed``). WebSocket side through
``matchmaker.client``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from matchmaker.client import Client
from matchmaker.errors import MatchmakerError

from .matchmaker_process import MatchmakerProcess

KEY = "live-config-management-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
DUEL = {"name": "duel", "mode": "auto", "groupSize": 2, "default": True}
LOBBY = {"pool": "lobby", "create": True, "mode": "auto", "group_size": 2}

Start = Callable[..., MatchmakerProcess]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """Start ``matchmaker`` with a management key and a SQLite store, plus ``extra`` flags."""
    started: list[MatchmakerProcess] = []

    def start(*extra: str) -> MatchmakerProcess:
        args = ["--port", "0", "--management-port", "0", "--management-key", KEY]
        store = ["--store", f"sqlite:///{tmp_path / 'mm.db'}"]
        started.append(MatchmakerProcess([*args, *store, *extra], cwd=tmp_path))
        return started[-1]

    yield start
    for process in started:
        if process.process.poll() is None:
            assert process.stop() == 0


@pytest.fixture
def mm(start: Start) -> MatchmakerProcess:
    return start()


@pytest.fixture
async def admin(mm: MatchmakerProcess) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client for the control plane of ``mm``, with the key."""
    base = mm.control_url
    async with httpx.AsyncClient(base_url=base, headers=AUTH, timeout=10) as http:
        yield http


@pytest.fixture
async def connect(mm: MatchmakerProcess) -> AsyncIterator[Callable[..., Any]]:
    """Open ``matchmaker.client`` connections to ``mm`` (past ``hello``), closed afterwards."""
    clients: list[Client] = []

    async def connect(**hello: Any) -> Client:
        client = await Client.connect(f"ws://127.0.0.1:{mm.ports['data']}/ws", **hello)
        clients.append(client)
        return client

    yield connect
    for client in clients:
        await client.close()


async def refused(code: str, operation: Any) -> MatchmakerError:
    with pytest.raises(MatchmakerError) as caught:
        await operation
    assert caught.value.code == code, caught.value
    return caught.value


async def test_lockdown_by_patch_applies_to_the_next_entry_not_to_live_pools_or_sessions(
    admin: httpx.AsyncClient, connect: Callable[..., Any]
) -> None:
    assert (await admin.post("/admin/projects", json={"id": "arena"})).status_code == 201
    waiting, host, late = [await connect(project="arena") for _ in range(3)]
    await waiting.enter(**LOBBY)
    room = (await host.join("room", create=True))["session_id"]

    patched = await admin.patch("/admin/projects/arena", json={"lockdown": True})
    assert patched.status_code == 200
    assert patched.json()["lockdown"] is True

    await refused("project.lockdown", late.enter(**LOBBY))
    await refused(
        "project.lockdown", late.enter(pool="fresh", create=True, mode="auto", group_size=2)
    )
    await refused("project.lockdown", late.join("other-room", create=True))
    newcomer = await connect(project="arena")
    assert newcomer.hello_reply["lockdown"] is True
    # The live room is untouched: joining it without create is allowed, and it relays.
    assert (await late.join("room"))["session_id"] == room
    await host.send(room, {"still": "open"})
    assert (await late.next_event("session.message")).data["data"] == {"still": "open"}

    # Lifting the lockdown: the entry that waited through it is still there and matches.
    assert (await admin.patch("/admin/projects/arena", json={"lockdown": False})).status_code == 200
    await newcomer.enter(pool="lobby", mode="auto", group_size=2)
    for client in (waiting, newcomer):
        created = await client.next_event("session.created")
        assert {m["client_id"] for m in created.data["members"]} == {
            waiting.client_id,
            newcomer.client_id,
        }


async def test_a_policy_added_or_changed_by_patch_is_what_the_next_entry_uses(
    admin: httpx.AsyncClient, connect: Callable[..., Any]
) -> None:
    assert (await admin.post("/admin/projects", json={"id": "league"})).status_code == 201
    a, b, c = [await connect(project="league") for _ in range(3)]
    await refused("pool.policy_required", a.enter())

    assert (
        await admin.patch("/admin/projects/league", json={"policies": [DUEL]})
    ).status_code == 200
    assert (await a.enter())["groupSize"] == 2  # the same connection sees the new default
    await b.enter(policy="duel")
    sessions = {(await x.next_event("session.created")).data["session_id"] for x in (a, b)}
    assert len(sessions) == 1

    trio = {**DUEL, "groupSize": 3}
    assert (
        await admin.patch("/admin/projects/league", json={"policies": [trio]})
    ).status_code == 200
    assert (await c.enter(policy="duel"))["groupSize"] == 3
    await refused("pool.policy_not_found", c.enter(policy="gone"))


async def test_waiting_clients_of_a_changed_policy_are_told_and_others_keep_waiting(
    admin: httpx.AsyncClient, connect: Callable[..., Any]
) -> None:
    ranked = {"name": "ranked", "mode": "auto", "groupSize": 2}
    body = {"id": "cup", "policies": [DUEL, ranked]}
    assert (await admin.post("/admin/projects", json=body)).status_code == 201
    a, b, c = [await connect(project="cup") for _ in range(3)]
    waiting = await a.enter()
    await b.enter(policy="ranked")
    trio = {**DUEL, "groupSize": 3}
    patched = await admin.patch("/admin/projects/cup", json={"policies": [trio, ranked]})
    assert patched.status_code == 200
    closed = await a.next_event("pool.closed")
    assert closed.data == {
        "pool": "duel",
        "entry_id": waiting["entry_id"],
        "reason": "policy_changed",
    }
    assert (await a.enter())["groupSize"] == 3
    await c.enter(policy="ranked")
    created = await b.next_event("session.created")
    assert {m["client_id"] for m in created.data["members"]} == {b.client_id, c.client_id}
    assert (await admin.delete("/admin/projects/cup")).status_code == 204
    assert (await a.next_event("pool.closed")).data["pool"] == "duel"


async def test_keys_changed_by_patch_apply_to_the_next_hello_and_request(
    admin: httpx.AsyncClient, connect: Callable[..., Any], mm: MatchmakerProcess
) -> None:
    old = {"id": "vault", "keys": [{"type": "shared-secret", "secret": "old-secret"}]}
    assert (
        await admin.post("/admin/projects", json={**old, "policies": [DUEL]})
    ).status_code == 201
    assert (await connect(credential="old-secret")).hello_reply["project"] == "vault"
    open_project = await connect(project="open")
    assert (
        await admin.post("/admin/projects", json={"id": "open", "policies": [DUEL]})
    ).status_code == 201

    new_keys = [{"type": "shared-secret", "secret": "new-secret"}]
    assert (await admin.patch("/admin/projects/vault", json={"keys": new_keys})).status_code == 200
    await refused("auth.invalid_credential", connect(credential="old-secret"))
    assert (await connect(credential="new-secret")).hello_reply["project"] == "vault"

    client = await Client.connect(f"ws://127.0.0.1:{mm.ports['data']}/ws", hello=False)
    await refused("project.forbidden", client.hello(project="vault"))
    assert await client.wait_closed() == 4003

    # Keys added to a Project after a client joined it without one: its next request.
    keyed = [{"type": "shared-secret", "secret": "open-secret"}]
    assert (await admin.patch("/admin/projects/open", json={"keys": keyed})).status_code == 200
    await refused("project.forbidden", open_project.enter())


async def test_a_deleted_projects_session_keeps_relaying(
    admin: httpx.AsyncClient, connect: Callable[..., Any]
) -> None:
    keys = [{"type": "shared-secret", "secret": "doomed-secret"}]
    body = {"id": "doomed", "keys": keys, "policies": [DUEL]}
    assert (await admin.post("/admin/projects", json=body)).status_code == 201
    a, b = [await connect(credential="doomed-secret") for _ in range(2)]
    await a.enter()
    await b.enter()
    session = (await a.next_event("session.created")).data["session_id"]
    await b.next_event("session.created")

    assert (await admin.delete("/admin/projects/doomed")).status_code == 204
    assert (await admin.get("/admin/projects/doomed")).status_code == 404
    await a.send(session, {"move": "e4"})
    message = await b.next_event("session.message")
    assert message.data["data"] == {"move": "e4"}
    assert message.data["from"] == a.client_id
    await b.send(session, "reply")
    assert (await a.next_event("session.message")).data["data"] == "reply"
    # New work meets the Project as it is now: gone, so implicit and without policies.
    await refused("pool.policy_required", a.enter())
    await refused("auth.invalid_credential", connect(credential="doomed-secret"))


async def test_require_declared_projects_refuses_undeclared_ids(start: Start) -> None:
    mm = start("--require-declared-projects")
    url = f"ws://127.0.0.1:{mm.ports['data']}/ws"
    client = await Client.connect(url, hello=False)
    error = await refused("project.not_found", client.hello(project="undeclared"))
    assert error.details == {"project": "undeclared"}
    assert await client.wait_closed() == 4003

    admin = f"{mm.control_url}/admin/projects"
    async with httpx.AsyncClient(headers=AUTH) as http:
        assert (await http.post(admin, json={"id": "declared"})).status_code == 201
    async with await Client.connect(url, project="declared") as declared:
        assert declared.hello_reply["project"] == "declared"
    async with await Client.connect(url) as default:
        assert default.hello_reply["project"] == "default"


async def test_require_declared_projects_without_a_key_admits_only_default(
    tmp_path: Path,
) -> None:
    mm = MatchmakerProcess(
        ["--port", "0", "--require-declared-projects"], cwd=tmp_path, expect_control=False
    )
    try:
        url = f"ws://127.0.0.1:{mm.ports['data']}/ws"
        await refused("project.not_found", Client.connect(url, project="anything"))
        async with await Client.connect(url) as default:
            assert default.hello_reply["project"] == "default"
    finally:
        assert mm.stop() == 0
    assert "only the default Project is admitted" in mm.log()
