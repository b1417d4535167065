"""The claim, mutual, propose and delegated modes over real sockets: every message, error
and timeout of each, policies by name and as the default, and lockdown."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.client import Client
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, PoolMode, Project, ProjectKey

LOBBY = MatchmakingPolicy(name="lobby", mode="claim", group_size=3)
DUO = MatchmakingPolicy(name="duo", mode="mutual", group_size=2)
PARTY = MatchmakingPolicy(name="party", mode="propose", group_size=3)
RANKED = MatchmakingPolicy(
    name="ranked", mode="delegated", group_size=2, filter={"region": "@self"}
)
DUEL = MatchmakingPolicy(name="duel", mode="auto", group_size=2)
DELEGATE = ProjectKey(type="shared-secret", secret="delegate-secret-1", scopes=("delegate",))
PLAYER = ProjectKey(type="shared-secret", secret="player-secret-01")
GAME = Project(id="game", policies=(LOBBY, DUO, PARTY, RANKED, DUEL), keys=(DELEGATE, PLAYER))


async def refused(code: str, client: Client, kind: str, data: Any) -> dict[str, Any]:
    with pytest.raises(MatchmakerError) as caught:
        await client.request(kind, data)
    assert caught.value.code == code, caught.value
    return caught.value.details or {}


async def players(server: Any, count: int, **attributes: Any) -> list[Client]:
    return [
        await server.connect(credential=PLAYER.secret, attributes=attributes) for _ in range(count)
    ]


async def members_of(client: Client) -> tuple[str, set[str]]:
    created = (await client.next_event("session.created")).data
    return created["session_id"], {m["client_id"] for m in created["members"]}


async def test_claim_list_watch_conflict_and_claim(start_server: Any) -> None:
    server = await start_server(GAME)
    seeker, a, b, c = await players(server, 4)
    await seeker.request("pool.enter", {"policy": "lobby", "listed": False})
    assert await seeker.request("pool.watch", {"pool": "lobby"}) == {
        "pool": "lobby",
        "watching": True,
    }
    ids = []
    for i, client in enumerate((a, b, c)):
        await client.enter("lobby", public={"name": f"p{i}"})
        listed = (await seeker.next_event("pool.listed")).data
        assert listed["entry"]["public"] == {"name": f"p{i}"}
        ids.append(listed["entry"]["client_id"])
    page = await seeker.request("pool.list", {"pool": "lobby", "limit": 2})
    assert [e["client_id"] for e in page["entries"]] == ids[:2]
    rest = await seeker.request("pool.list", {"pool": "lobby", "cursor": page["cursor"]})
    assert [e["client_id"] for e in rest["entries"]] == ids[2:]
    assert rest["cursor"] is None
    await c.leave("lobby")
    unlisted = (await seeker.next_event("pool.unlisted")).data
    assert unlisted == {"pool": "lobby", "client_id": ids[2], "reason": "left"}
    details = await refused(
        "claim.conflict", seeker, "claim.make", {"pool": "lobby", "targets": [ids[0], ids[2]]}
    )
    assert details == {"missing": [ids[2]]}
    await refused("claim.invalid", seeker, "claim.make", {"pool": "lobby", "targets": [ids[0]]})
    claimed = await seeker.request("claim.make", {"pool": "lobby", "targets": ids[:2]})
    for client in (seeker, a, b):
        session_id, members = await members_of(client)
        assert session_id == claimed["session_id"]
        assert members == {seeker.client_id, *ids[:2]}


async def test_mutual_picks_form_a_pair_privately(start_server: Any) -> None:
    server = await start_server(GAME)
    a, b, c = await players(server, 3)
    for client in (a, b, c):
        await client.enter("duo")
    assert await a.request("pick.add", {"pool": "duo", "target": b.client_id}) == {
        "pool": "duo",
        "picks": [b.client_id],
        "session_id": None,  # fields without a value are null, never missing
    }
    await refused("pick.not_found", a, "pick.add", {"pool": "duo", "target": "nobody"})
    await refused("pick.invalid", a, "pick.add", {"pool": "duo", "target": a.client_id})
    removed = await c.request("pick.add", {"pool": "duo", "target": a.client_id})
    assert removed["picks"] == [a.client_id]
    removed = await c.request("pick.remove", {"pool": "duo", "target": a.client_id})
    assert removed["picks"] == []
    reply = await b.request("pick.add", {"pool": "duo", "target": a.client_id})
    assert reply["session_id"]
    for client in (a, b):
        assert (await members_of(client))[1] == {a.client_id, b.client_id}
    # picks are private: c never heard of any, and still waits
    await c.request("ping")
    assert c._events.empty()


async def test_proposal_accept_decline_cancel_and_timeout(start_server: Any) -> None:
    server = await start_server(GAME, proposal_ttl_ms=300)
    a, b, c = await players(server, 3)
    for client in (a, b, c):
        await client.enter("party")
    members = [b.client_id, c.client_id]
    # decline: everyone else is told, everyone stays
    made = await a.request("proposal.create", {"pool": "party", "members": members})
    received = (await b.next_event("proposal.received")).data
    assert received["proposer"] == a.client_id
    assert received["proposal_id"] == made["proposal_id"]
    await c.next_event("proposal.received")
    await c.request("proposal.respond", {"proposal_id": made["proposal_id"], "accept": False})
    for client in (a, b):
        closed = (await client.next_event("proposal.closed")).data
        assert closed == {
            "proposal_id": made["proposal_id"],
            "reason": "declined",
            "client_id": c.client_id,
        }
    # cancel
    made = await a.request("proposal.create", {"pool": "party", "members": members})
    await a.request("proposal.cancel", {"proposal_id": made["proposal_id"]})
    assert (await b.next_event("proposal.closed")).data["reason"] == "cancelled"
    await refused(
        "proposal.not_found",
        b,
        "proposal.respond",
        {"proposal_id": made["proposal_id"], "accept": True},
    )
    # timeout
    made = await a.request("proposal.create", {"pool": "party", "members": members})
    closed = (await a.next_event("proposal.closed", wait_s=5)).data
    assert (closed["proposal_id"], closed["reason"]) == (made["proposal_id"], "timeout")
    # accepted by all: a session
    made = await a.request(
        "proposal.create", {"pool": "party", "members": members, "ttl_ms": 60_000}
    )
    pid = made["proposal_id"]
    first = await b.request("proposal.respond", {"proposal_id": pid, "accept": True})
    assert first == {"proposal_id": pid, "state": "open", "session_id": None}
    updated = (await a.next_event("proposal.updated")).data
    assert updated == {
        "proposal_id": pid,
        "client_id": b.client_id,
        "accepted": True,
        "pending": [c.client_id],
    }
    last = await c.request("proposal.respond", {"proposal_id": pid, "accept": True})
    assert last["state"] == "formed"
    for client in (a, b, c):
        session_id, group = await members_of(client)
        assert (session_id, group) == (last["session_id"], {a.client_id, *members})


async def test_proposal_closes_when_a_member_leaves_and_limits_hold(start_server: Any) -> None:
    server = await start_server(GAME, max_open_proposals=1)
    a, b, c, d = await players(server, 4)
    for client in (a, b, c, d):
        await client.enter("party")
    made = await a.request(
        "proposal.create", {"pool": "party", "members": [b.client_id, c.client_id]}
    )
    await refused(
        "proposal.limit",
        a,
        "proposal.create",
        {"pool": "party", "members": [b.client_id, d.client_id]},
    )
    details = await refused(
        "proposal.unavailable",
        d,
        "proposal.create",
        {"pool": "party", "members": [b.client_id, "ghost"]},
    )
    assert details == {"missing": ["ghost"]}
    await c.leave("party")
    closed = (await a.next_event("proposal.closed")).data
    assert closed == {
        "proposal_id": made["proposal_id"],
        "reason": "left",
        "client_id": c.client_id,
    }
    assert (await b.next_event("proposal.closed")).data["reason"] == "left"


async def test_delegate_attach_snapshot_delta_form_and_stale(start_server: Any) -> None:
    server = await start_server(GAME)
    await refused(
        "project.forbidden", (await players(server, 1))[0], "delegate.attach", {"pool": "ranked"}
    )
    delegate = await server.connect(credential=DELEGATE.secret)
    rival = await server.connect(credential=DELEGATE.secret)
    a, b = await players(server, 2, region="eu")
    entered_a = await a.enter("ranked")
    attached = await delegate.request("delegate.attach", {"pool": "ranked"})
    snapshot = (await delegate.next_event("pool.snapshot")).data
    assert snapshot["version"] == attached["version"]
    assert [e["entry_id"] for e in snapshot["entries"]] == [entered_a["entry_id"]]
    assert snapshot["entries"][0]["attributes"] == {"region": "eu"}
    await rival.request("delegate.attach", {"pool": "ranked"})
    entered_b = await b.enter("ranked")
    delta = (await delegate.next_event("pool.delta")).data
    assert delta["version"] == attached["version"] + 1
    assert [e["entry_id"] for e in delta["added"]] == [entered_b["entry_id"]]
    group = [entered_a["entry_id"], entered_b["entry_id"]]
    await refused("pool.wrong_mode", delegate, "delegate.attach", {"pool": "duel"})
    await refused(
        "delegate.not_attached", a, "delegate.form", {"pool": "ranked", "groups": [group]}
    )
    formed = await delegate.request("delegate.form", {"pool": "ranked", "groups": [group]})
    (result,) = formed["results"]
    assert result["ok"] is True
    for client in (a, b):
        assert (await members_of(client))[0] == result["session_id"]
    # the second delegate comes too late: first valid claim wins, nobody moves twice
    late = await rival.request("delegate.form", {"pool": "ranked", "groups": [group]})
    assert late["results"] == [
        {
            "ok": False,
            "session_id": None,
            "error": {
                "code": "delegate.stale",
                "message": "some entries are no longer waiting",
                "details": {"missing": group},
            },
        }
    ]


async def test_no_delegate_notice_after_the_grace(start_server: Any) -> None:
    server = await start_server(GAME, delegate_grace_ms=200)
    (a,) = await players(server, 1, region="eu")
    entered = await a.enter("ranked")
    notice = (await a.next_event("pool.no_delegate", wait_s=5)).data
    assert notice == {"pool": "ranked", "entry_id": entered["entry_id"]}
    assert (await a.request("pool.leave", {"pool": "ranked"}))["entry_id"] == entered["entry_id"]


@pytest.mark.parametrize("mode", ["claim", "mutual", "propose", "delegated"])
async def test_each_mode_works_as_the_default_policy_and_under_lockdown(
    start_server: Any, mode: PoolMode
) -> None:
    default = MatchmakingPolicy(name="main", mode=mode, group_size=2, default=True)
    locked = Project(id="locked", lockdown=True, policies=(default,))
    server = await start_server(locked)
    client = await server.connect(project="locked")
    entered = await client.request("pool.enter", {})
    assert (entered["pool"], entered["mode"]) == ("main", mode)
    await client.leave("main")
    assert (await client.enter("main"))["mode"] == mode
    adhoc = {"pool": "mine", "create": True, "mode": mode, "groupSize": 2}
    await refused("project.lockdown", client, "pool.enter", adhoc)
    await refused("pool.policy_not_found", client, "pool.enter", {"pool": "mine"})


@pytest.mark.parametrize("mode", ["claim", "mutual", "propose"])
async def test_ad_hoc_pools_of_each_client_mode_form_groups(server: Any, mode: str) -> None:
    a, b = await server.connect(), await server.connect()
    adhoc = {"pool": "x", "create": True, "mode": mode, "groupSize": 2}
    await a.request("pool.enter", adhoc)
    await b.request("pool.enter", {"pool": "x"})
    if mode == "claim":
        await a.request("claim.make", {"pool": "x", "targets": [b.client_id]})
    elif mode == "mutual":
        await a.request("pick.add", {"pool": "x", "target": b.client_id})
        await b.request("pick.add", {"pool": "x", "target": a.client_id})
    else:
        made = await a.request("proposal.create", {"pool": "x", "members": [b.client_id]})
        await b.next_event("proposal.received")
        await b.request("proposal.respond", {"proposal_id": made["proposal_id"], "accept": True})
    for client in (a, b):
        assert (await members_of(client))[1] == {a.client_id, b.client_id}


async def test_a_mode_request_in_a_pool_of_another_mode(start_server: Any) -> None:
    server = await start_server(GAME)
    (a,) = await players(server, 1)
    await a.enter("duel")
    await refused("pool.wrong_mode", a, "pick.add", {"pool": "duel", "target": "x"})
    await refused("pool.not_found", a, "claim.make", {"pool": "lobby", "targets": ["x", "y"]})
    await refused("protocol.bad_request", a, "pool.list", {"pool": "lobby", "limit": 0})


async def test_the_remaining_mode_errors_over_the_socket(start_server: Any) -> None:
    server = await start_server(GAME)
    a, b, *crowd = await players(server, 35, region="eu")
    await a.enter("lobby")
    await refused("claim.bad_cursor", a, "pool.list", {"pool": "lobby", "cursor": "zz"})
    await a.enter("party")
    await b.enter("party")
    await refused(
        "proposal.invalid", a, "proposal.create", {"pool": "party", "members": [b.client_id]}
    )
    await a.enter("duo")
    for other in crowd:
        await other.enter("duo")
    for other in crowd[:32]:
        await a.request("pick.add", {"pool": "duo", "target": other.client_id})
    details = await refused(
        "pick.limit", a, "pick.add", {"pool": "duo", "target": crowd[32].client_id}
    )
    assert details == {"limit": 32}
    us = (await players(server, 1, region="us"))[0]
    delegate = await server.connect(credential=DELEGATE.secret)
    await delegate.request("delegate.attach", {"pool": "ranked"})
    e_eu = (await b.enter("ranked"))["entry_id"]
    e_us = (await us.enter("ranked"))["entry_id"]
    formed = await delegate.request("delegate.form", {"pool": "ranked", "groups": [[e_eu, e_us]]})
    (result,) = formed["results"]
    assert (result["ok"], result["error"]["code"]) == (False, "delegate.invalid_group")
    assert result["error"]["details"] == {"filter": ["region"]}
