"""Parties over real sockets, on each server: made and joined by code, entered by the
leader for all, matched into one session together, withdrawn for all when they change."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.client import Client
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, RangeRule, Team, Widen

FOUR = MatchmakingPolicy(name="four", mode="auto", group_size=4, default=True)
DUEL = MatchmakingPolicy(name="duel", mode="auto", group_size=2)
RANKED = MatchmakingPolicy(
    name="ranked",
    mode="auto",
    group_size=4,
    filter={"rating": RangeRule(within=100, widen=Widen(every_ms=300, by=100, max=200))},
)
RANKED_TEAMS = MatchmakingPolicy(
    name="ranked_teams",
    mode="auto",
    group_size=4,
    filter={"rating": RangeRule(within=100)},
    teams=(Team("red", 2), Team("blue", 2)),
)
GAME = Project(id="game", policies=(FOUR, DUEL, RANKED, RANKED_TEAMS))


async def party(leader: Client, *others: Client) -> dict[str, Any]:
    """A party led by ``leader`` that ``others`` joined by its code; the creation reply."""
    created: dict[str, Any] = await leader.party_create()
    for other in others:
        joined = await other.party_join(created["code"])
        assert joined["party_id"] == created["party_id"]
        for earlier in (leader, *others[: others.index(other)]):
            event = await earlier.next_event("party.member_joined")
            assert event.data["client_id"] == other.client_id
    return created


async def test_a_party_of_two_and_two_solos_play_in_one_session(start_server: Any) -> None:
    server = await start_server(GAME)
    a, b, s1, s2 = [await server.connect(project="game") for _ in range(4)]
    created = await party(a, b)
    assert created["leader"] == a.client_id
    assert [m["client_id"] for m in created["members"]] == [a.client_id]
    await s1.enter("four")
    entered = await a.enter("four", party_id=created["party_id"])
    told = await b.next_event("party.entered")
    assert told.data == {
        "party_id": created["party_id"],
        "pool": "four",
        "entry_id": entered["entry_id"],
    }
    await s2.enter("four")
    formed = [await c.next_event("session.created") for c in (a, b, s1, s2)]
    assert len({f.data["session_id"] for f in formed}) == 1
    everyone = {a.client_id, b.client_id, s1.client_id, s2.client_id}
    assert {m["client_id"] for m in formed[0].data["members"]} == everyone
    # The party members play together: b's message reaches a in that one session.
    await b.send(formed[1].data["session_id"], {"hi": "leader"})
    message = await a.next_event("session.message")
    assert message.data["data"] == {"hi": "leader"}


async def test_a_party_that_changes_while_queued_is_withdrawn_for_all(start_server: Any) -> None:
    server = await start_server(GAME)
    a, b, c = [await server.connect(project="game") for _ in range(3)]
    created = await party(a, b, c)
    entered = await a.enter("four", party_id=created["party_id"])
    await c.party_leave(created["party_id"])
    for member in (a, b, c):
        withdrawn = await member.next_event("pool.withdrawn")
        assert withdrawn.data == {
            "pool": "four",
            "entry_id": entered["entry_id"],
            "reason": "party_changed",
        }
    left = await b.next_event("party.member_left")
    assert left.data == {
        "party_id": created["party_id"],
        "client_id": c.client_id,
        "reason": "left",
        "leader": a.client_id,
    }
    await server.until(lambda: not server.plane.core.pools)


async def test_a_member_gone_past_its_grace_withdraws_the_party(start_server: Any) -> None:
    server = await start_server(GAME, resume_grace_ms=200)
    a, b = [await server.connect(project="game") for _ in range(2)]
    created = await party(a, b)
    await a.enter("four", party_id=created["party_id"])
    b.abort()  # cut, no goodbye: away for the grace, then gone
    withdrawn = await a.next_event("pool.withdrawn")
    assert withdrawn.data["reason"] == "party_changed"
    left = await a.next_event("party.member_left")
    assert left.data["reason"] == "disconnected"


@pytest.mark.parametrize(
    ("policy", "members", "by", "code"),
    [
        ("duel", 3, 0, "party.too_large"),
        ("four", 2, 1, "party.not_leader"),
    ],
)
async def test_entries_a_party_cannot_make_are_refused(
    start_server: Any, policy: str, members: int, by: int, code: str
) -> None:
    server = await start_server(GAME)
    clients = [await server.connect(project="game") for _ in range(members)]
    created = await party(*clients)
    with pytest.raises(MatchmakerError) as refused:
        await clients[by].enter(policy, party_id=created["party_id"])
    assert refused.value.code == code
    assert not server.plane.core.pools


async def test_a_wrong_code_is_not_found_then_rate_limited(start_server: Any) -> None:
    server = await start_server(GAME)
    guesser = await server.connect(project="game")
    codes = []
    for _ in range(6):
        with pytest.raises(MatchmakerError) as refused:
            await guesser.party_join("0000-0000")
        codes.append(refused.value.code)
    assert codes == ["party.not_found"] * 5 + ["rate.limited"]


@pytest.mark.parametrize("policy", ["ranked", "ranked_teams"])
async def test_a_ranked_party_plays_with_solos_its_every_member_accepts(
    start_server: Any, policy: str
) -> None:
    """The range rule holds member by member: a party of 1000 and 1040 with a window of
    100 plays with solos at 1050 and 1080, not with one at 1200."""
    server = await start_server(GAME)
    a, b, far, s1, s2 = [
        await server.connect(project="game", attributes={"rating": rating})
        for rating in (1000, 1040, 1200, 1050, 1080)
    ]
    created = await party(a, b)
    await far.enter(policy)
    await a.enter(policy, party_id=created["party_id"])
    await s1.enter(policy)
    await s2.enter(policy)
    formed = [await c.next_event("session.created") for c in (a, b, s1, s2)]
    assert len({f.data["session_id"] for f in formed}) == 1
    assert {m["client_id"] for m in formed[0].data["members"]} == {
        a.client_id,
        b.client_id,
        s1.client_id,
        s2.client_id,
    }
    if policy == "ranked_teams":
        teams = formed[0].data["teams"]
        assert any({a.client_id, b.client_id} <= set(team) for team in teams.values())
    assert len(server.plane.core.pools) == 1  # the 1200 still waits


async def test_a_ranked_partys_window_widens_to_its_farthest_member(start_server: Any) -> None:
    server = await start_server(GAME)
    a, b, s1, s2 = [
        await server.connect(project="game", attributes={"rating": rating})
        for rating in (1000, 1040, 1110, 1120)
    ]
    created = await party(a, b)
    await a.enter("ranked", party_id=created["party_id"])
    await s1.enter("ranked")
    await s2.enter("ranked")  # 120 from the party's 1000: a step of the window later
    assert server.plane.core.pools  # matched in the enter's own step if the rule allowed it
    formed = [await c.next_event("session.created") for c in (a, b, s1, s2)]
    assert len({f.data["session_id"] for f in formed}) == 1
