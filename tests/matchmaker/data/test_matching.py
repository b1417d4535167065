"""Pools and sessions over real sockets: entry rules, grouping, concurrency, config changes."""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import pytest

from matchmaker.client import Client
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project

DUEL = MatchmakingPolicy(name="duel", mode="auto", group_size=2, default=True)
REGIONAL = MatchmakingPolicy(
    name="regional", mode="auto", group_size=2, filter={"region": "@self", "ranked": True}
)
LOBBY = MatchmakingPolicy(name="lobby", mode="claim", group_size=2)
GAME = Project(id="game", policies=(DUEL, REGIONAL, LOBBY))
NO_DEFAULT = Project(id="nodefault", policies=(REGIONAL,))
LOCKED = Project(id="locked", lockdown=True, policies=(DUEL,))
ADHOC = {"pool": "x", "create": True, "mode": "auto", "groupSize": 2}


@pytest.mark.parametrize(
    "case",
    [
        ("game", {}, [], {"policy": "nope"}, "pool.policy_not_found"),
        ("nodefault", {}, [], {}, "pool.policy_required"),
        ("locked", {}, [], ADHOC, "project.lockdown"),
        ("locked", {}, [], {"pool": "x"}, "pool.policy_not_found"),
        ("game", {}, [], {"policy": "duel", "groupSize": 3}, "pool.conflict"),
        ("game", {}, [ADHOC], {**ADHOC, "groupSize": 3}, "pool.conflict"),
        ("game", {}, [], {"pool": "x"}, "pool.not_found"),
        (
            "game",
            {"region": "eu", "ranked": False},
            [],
            {"policy": "regional"},
            "pool.filter_mismatch",
        ),
        ("game", {"ranked": True}, [], {"policy": "regional"}, "pool.attribute_missing"),
        ("game", {}, [{"policy": "duel"}], {"policy": "duel"}, "pool.already_entered"),
        (
            "game",
            {},
            [{**ADHOC, "pool": p} for p in "abc"],
            {**ADHOC, "pool": "d"},
            "pool.limit",
        ),
    ],
)
async def test_entry_errors(start_server: Any, case: tuple[Any, ...]) -> None:
    project, attributes, setup, request_, code = case
    server = await start_server(GAME, NO_DEFAULT, LOCKED)
    other = await server.connect(project=project)
    client = await server.connect(project=project, attributes=attributes)
    for i, step in enumerate(setup):
        # ad-hoc pools in the setup are created by another client so this one can join them
        await (other if i == 0 and code == "pool.conflict" else client).request("pool.enter", step)
    with pytest.raises(MatchmakerError) as caught:
        await client.request("pool.enter", request_)
    assert caught.value.code == code


async def test_pool_leave_and_unknown_pool(server: Any) -> None:
    client = await server.connect()
    entered = await client.request("pool.enter", ADHOC)
    assert await client.leave("x") == {"pool": "x", "entry_id": entered["entry_id"]}
    with pytest.raises(MatchmakerError) as caught:
        await client.leave("x")
    assert caught.value.code == "pool.not_found"
    with pytest.raises(MatchmakerError) as caught:
        await client.enter(pool="x")  # the pool was freed with its last entry
    assert caught.value.code == "pool.not_found"


async def test_a_pair_is_matched_and_relays_in_order(start_server: Any) -> None:
    server = await start_server(GAME)
    a = await server.connect(project="game")
    b = await server.connect(project="game")
    entered = await a.enter()
    assert (entered["pool"], entered["mode"], entered["groupSize"]) == ("duel", "auto", 2)
    await b.enter(policy="duel", public={"name": "bee"})
    created_a = await a.next_event("session.created")
    created_b = await b.next_event("session.created")
    session_id = created_a.data["session_id"]
    assert created_b.data["session_id"] == session_id
    assert created_a.data["you"] == a.client_id
    assert created_a.data["pool"] == "duel"
    assert {"client_id": b.client_id, "public": {"name": "bee"}} in created_a.data["members"]
    for i in range(100):
        await a.send(session_id, {"n": i})
    received = [(await b.next_event("session.message")).data for _ in range(100)]
    assert [m["data"]["n"] for m in received] == list(range(100))
    assert {m["from"] for m in received} == {a.client_id}
    await a.leave_session(session_id)
    left = await b.next_event("session.member_left")
    assert left.data == {"session_id": session_id, "client_id": a.client_id, "reason": "left"}


async def test_seq_increases_per_client(server: Any) -> None:
    a, b = await server.connect(), await server.connect()
    room = await a.join("r", create=True)
    await b.join("r")
    await a.next_event("session.member_joined")
    for i in range(3):
        await b.send(room["session_id"], i)
    seqs = [(await a.next_event("session.message")).seq for _ in range(3)]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == 3


async def test_self_grouping_never_mixes_values(start_server: Any) -> None:
    server = await start_server(GAME)
    regions = ["eu", "us", "ap"] * 8
    clients = [
        await server.connect(project="game", attributes={"region": r, "ranked": True})
        for r in regions
    ]
    region_of = {c.client_id: r for c, r in zip(clients, regions, strict=True)}
    await asyncio.gather(*(c.enter(policy="regional") for c in clients))
    events = await asyncio.gather(*(c.next_event("session.created") for c in clients))
    sessions: dict[str, set[str]] = collections.defaultdict(set)
    for event in events:
        members = [m["client_id"] for m in event.data["members"]]
        assert len(members) == 2
        assert len({region_of[m] for m in members}) == 1
        sessions[event.data["session_id"]].update(members)
    assert len(sessions) == 12


@pytest.mark.parametrize("group_size", [1, 2, 3, 5])
async def test_concurrent_entries_form_exact_groups(start_server: Any, group_size: int) -> None:
    server = await start_server()
    count = 61
    clients: list[Client] = await asyncio.gather(*(server.connect() for _ in range(count)))
    spec = {"pool": "crowd", "create": True, "mode": "auto", "groupSize": group_size}
    await asyncio.gather(*(c.request("pool.enter", spec) for c in clients))
    matched = count - count % group_size
    await server.until(lambda: len(server.plane.core.sessions) == matched // group_size)
    members_seen: collections.Counter[str] = collections.Counter()
    for session in server.plane.core.sessions.values():
        assert len(session.members) == group_size
        members_seen.update(list(session.members))
    assert all(n == 1 for n in members_seen.values())
    waiting = sum(p.size for p in server.plane.core.pools.values())
    assert waiting == count % group_size
    assert len(members_seen) + waiting == count
    for client in clients:
        if client.client_id in members_seen:
            event = await client.next_event("session.created")
            assert len(event.data["members"]) == group_size


async def test_matched_client_is_withdrawn_from_other_pools(start_server: Any) -> None:
    server = await start_server(GAME)
    a = await server.connect(project="game", attributes={"region": "eu", "ranked": True})
    b = await server.connect(project="game")
    regional = await a.enter(policy="regional")
    await a.enter(policy="duel")
    await b.enter(policy="duel")
    withdrawn = await a.next_event("pool.withdrawn")
    assert withdrawn.data == {
        "pool": "regional",
        "entry_id": regional["entry_id"],
        "reason": "matched",
    }


async def test_entries_expire_with_an_event(server: Any) -> None:
    client = await server.connect()
    entered = await client.request("pool.enter", {**ADHOC, "ttl_ms": 50})
    expired = await client.next_event("pool.expired", wait_s=5)
    assert expired.data == {"pool": "x", "entry_id": entered["entry_id"], "reason": "ttl"}
    assert server.plane.core.pools == {}


async def test_lockdown_applies_to_the_next_entry_not_to_live_pools(start_server: Any) -> None:
    server = await start_server(Project(id="p"))
    a = await server.connect(project="p")
    b = await server.connect(project="p")
    await a.request("pool.enter", ADHOC)
    server.directory.put(Project(id="p", lockdown=True))
    with pytest.raises(MatchmakerError) as caught:
        await b.request("pool.enter", {**ADHOC, "pool": "y"})
    assert caught.value.code == "project.lockdown"
    with pytest.raises(MatchmakerError) as caught:
        await b.join("room", create=True)
    assert caught.value.code == "project.lockdown"
    # a's entry in the live ad-hoc pool is untouched; unlocking lets b join it
    server.directory.put(Project(id="p", lockdown=False))
    await b.enter(pool="x")
    assert (await a.next_event("session.created")).data["pool"] == "x"


async def test_a_changed_policy_closes_its_pool_and_unchanged_ones_keep_waiting(
    start_server: Any,
) -> None:
    keep = MatchmakingPolicy(name="keep", mode="auto", group_size=2)
    server = await start_server(Project(id="p", policies=(DUEL, keep)))
    a, b, c = [await server.connect(project="p") for _ in range(3)]
    waiting = await a.enter()
    await b.enter(policy="keep")
    server.directory.put(Project(id="p", policies=(DUEL, keep)))  # equal: not a change
    trio = MatchmakingPolicy(name="duel", mode="auto", group_size=3, default=True)
    server.directory.put(Project(id="p", policies=(trio, keep)))
    closed = await a.next_event("pool.closed")
    assert closed.data == {
        "pool": "duel",
        "entry_id": waiting["entry_id"],
        "reason": "policy_changed",
    }
    assert (await a.enter())["groupSize"] == 3  # the client re-enters under the new policy
    await c.enter(policy="keep")  # the unchanged policy kept b waiting
    created = await c.next_event("session.created")
    assert {m["client_id"] for m in created.data["members"]} == {b.client_id, c.client_id}
    (only,) = server.plane.core.pools.values()
    assert only.spec.group_size == 3


async def test_a_removed_policy_or_project_closes_its_entries(start_server: Any) -> None:
    keep = MatchmakingPolicy(name="keep", mode="auto", group_size=2)
    server = await start_server(Project(id="p", policies=(DUEL, keep)))
    a, b = [await server.connect(project="p") for _ in range(2)]
    await a.enter()
    await b.enter(policy="keep")
    server.directory.put(Project(id="p", policies=(keep,)))
    assert (await a.next_event("pool.closed")).data["pool"] == "duel"
    server.directory.remove("p")
    assert (await b.next_event("pool.closed")).data["reason"] == "policy_changed"
    assert server.plane.core.pools == {}


async def test_deleting_the_project_leaves_sessions_working(start_server: Any) -> None:
    server = await start_server(GAME)
    a = await server.connect(project="game")
    b = await server.connect(project="game")
    await a.enter()
    await b.enter()
    session_id = (await a.next_event("session.created")).data["session_id"]
    await b.next_event("session.created")
    server.directory.remove("game")
    await a.send(session_id, "still here")
    assert (await b.next_event("session.message")).data["data"] == "still here"
    with pytest.raises(MatchmakerError) as caught:
        await a.enter(policy="duel")  # the policy went with the Project
    assert caught.value.code == "pool.policy_not_found"


async def test_a_deleted_project_is_not_found_at_the_next_step_when_declaration_is_required(
    start_server: Any,
) -> None:
    server = await start_server(GAME, require_declared=True)
    a = await server.connect(project="game")
    b = await server.connect(project="game")
    room = (await a.join("room", create=True))["session_id"]
    await b.join("room")
    server.directory.remove("game")
    for operation in (a.enter(), a.join("other", create=True)):
        with pytest.raises(MatchmakerError) as caught:
            await operation
        assert caught.value.code == "project.not_found"
    await b.send(room, "the room still relays")
    assert (await a.next_event("session.message")).data["data"] == "the room still relays"


async def test_rooms_and_directed_sends(server: Any) -> None:
    a, b, c = await server.connect(), await server.connect(), await server.connect()
    room = await a.join("lobby", create=True, public={"n": "a"})
    assert room["created"] is True
    assert (await b.join("lobby"))["session_id"] == room["session_id"]
    joined = await a.next_event("session.member_joined")
    assert joined.data["client_id"] == b.client_id
    await c.join("lobby", create=True)
    created = await c.next_event("session.created")
    assert [m["client_id"] for m in created.data["members"]] == [
        a.client_id,
        b.client_id,
        c.client_id,
    ]
    await a.send(room["session_id"], "psst", to=[c.client_id])
    await a.send(room["session_id"], "all")
    assert (await c.next_event("session.message")).data["data"] == "psst"
    assert (await c.next_event("session.message")).data["data"] == "all"
    assert (await b.next_event("session.message")).data["data"] == "all"


@pytest.mark.parametrize(
    ("who", "request_", "code"),
    [
        (
            "stranger",
            {"type": "session.leave", "data": {"session_id": "SID"}},
            "session.not_member",
        ),
        ("member", {"type": "session.leave", "data": {"session_id": "nope"}}, "session.not_found"),
        ("stranger", {"type": "session.join", "data": {"session": "none"}}, "session.not_found"),
        (
            "member",
            {"type": "session.send", "data": {"session_id": "SID", "data": 1, "to": ["ghost"]}},
            "session.not_member",
        ),
    ],
)
async def test_session_errors(server: Any, who: str, request_: dict[str, Any], code: str) -> None:
    member, stranger = await server.connect(), await server.connect()
    room = await member.join("r", create=True)
    client = member if who == "member" else stranger
    data = {k: (room["session_id"] if v == "SID" else v) for k, v in request_["data"].items()}
    with pytest.raises(MatchmakerError) as caught:
        await client.request(request_["type"], data)
    assert caught.value.code == code


async def test_session_full_and_session_limit(start_server: Any) -> None:
    server = await start_server(max_session_members=2, max_sessions_per_client=1)
    a, b, c = await server.connect(), await server.connect(), await server.connect()
    await a.join("r", create=True)
    await b.join("r")
    with pytest.raises(MatchmakerError) as caught:
        await c.join("r")
    assert caught.value.code == "session.full"
    with pytest.raises(MatchmakerError) as caught:
        await a.join("other", create=True)
    assert caught.value.code == "session.limit"


async def test_disconnect_leaves_pools_and_sessions(server: Any) -> None:
    a, b = await server.connect(), await server.connect()
    room = await a.join("r", create=True)
    await b.join("r")
    await b.request("pool.enter", ADHOC)
    await b.close()
    left = await a.next_event("session.member_left")
    assert left.data == {
        "session_id": room["session_id"],
        "client_id": b.client_id,
        "reason": "disconnected",
    }
    await server.until(lambda: server.plane.core.pools == {})
    assert b.client_id not in server.plane.core.clients
