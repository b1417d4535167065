"""Teams, balance and regions over real sockets, on both servers."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.errors import MatchmakerError
from matchmaker.model import Balance, MatchmakingPolicy, Project, Regions, Team

DUO = MatchmakingPolicy(
    name="duo",
    mode="auto",
    group_size=4,
    teams=(Team("red", 2), Team("blue", 2)),
    balance=Balance("rating", 50),
)
NEAR = MatchmakingPolicy(name="near", mode="auto", group_size=2, regions=Regions(80))
GAME = Project(id="game", policies=(DUO, NEAR))


async def test_a_2v2_is_balanced_and_every_member_sees_the_teams(start_server: Any) -> None:
    server = await start_server(GAME)
    clients = [
        await server.connect(project="game", attributes={"rating": rating})
        for rating in (1000, 1010, 2000, 2010)
    ]
    rating = {c.client_id: r for c, r in zip(clients, (1000, 1010, 2000, 2010), strict=True)}
    for client in clients:
        await client.enter("duo")
    created = [(await c.next_event("session.created")).data for c in clients]
    teams = created[0]["teams"]
    assert all(data["teams"] == teams for data in created)
    assert set(teams) == {"red", "blue"}
    assert sorted(c for team in teams.values() for c in team) == sorted(rating)
    means = [sum(rating[c] for c in team) / 2 for team in teams.values()]
    assert abs(means[0] - means[1]) <= 50


async def test_regions_match_only_players_who_share_a_near_region(start_server: Any) -> None:
    server = await start_server(GAME)
    eu, us, both = [await server.connect(project="game") for _ in range(3)]
    await eu.enter("near", latencies={"eu": 30, "us": 150})
    await us.enter("near", latencies={"eu": 140, "us": 20})
    await server.until(lambda: sum(p.size for p in server.plane.core.pools.values()) == 2)
    await both.enter("near", latencies={"eu": 90, "us": 60})
    created = (await both.next_event("session.created")).data
    assert {m["client_id"] for m in created["members"]} == {us.client_id, both.client_id}
    assert created["region"] == "us"
    assert (await us.next_event("session.created")).data["region"] == "us"


async def test_backfill_refills_the_team_that_lost_its_member(start_server: Any) -> None:
    server = await start_server(GAME)
    clients = [await server.connect(project="game", attributes={"rating": 1000}) for _ in range(4)]
    for client in clients:
        await client.enter("duo")
    created = (await clients[0].next_event("session.created")).data
    session, teams = created["session_id"], created["teams"]
    gone = teams["blue"][0]
    leaver = next(c for c in clients if c.client_id == gone)
    stay = next(c for c in clients if c.client_id != gone)
    await leaver.leave_session(session)
    await stay.backfill(session, 1)
    newcomer = await server.connect(project="game", attributes={"rating": 1000})
    await newcomer.enter("duo")
    seated = (await newcomer.next_event("session.created")).data
    assert seated["session_id"] == session
    assert newcomer.client_id in seated["teams"]["blue"]
    joined = await stay.next_event("session.member_joined")
    assert joined.data["team"] == "blue"


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({"policy": "near"}, "pool.latencies_required"),
        ({"policy": "near", "latencies": {"eu": -1}}, "protocol.bad_request"),
        ({"policy": "near", "latencies": {f"r{i}": 1 for i in range(33)}}, "protocol.bad_request"),
        ({"policy": "duo", "teams": [{"name": "a", "size": 4}]}, "pool.conflict"),
        ({"pool": "x", "create": True, "mode": "auto", "groupSize": 4,
          "teams": [{"name": "a", "size": 1}]}, "protocol.bad_request"),
        ({"pool": "x", "create": True, "mode": "claim", "groupSize": 2,
          "teams": [{"name": "a", "size": 2}]}, "protocol.bad_request"),
    ],
)  # fmt: skip
async def test_team_and_region_errors(
    start_server: Any, request_: dict[str, Any], code: str
) -> None:
    server = await start_server(GAME)
    client = await server.connect(project="game", attributes={"rating": 1})
    with pytest.raises(MatchmakerError) as caught:
        await client.request("pool.enter", request_)
    assert caught.value.code == code


async def test_an_ad_hoc_pool_takes_teams_and_regions(start_server: Any) -> None:
    server = await start_server()
    a, b = [await server.connect() for _ in range(2)]
    rules = {"teams": [{"name": "a", "size": 1}, {"name": "b", "size": 1}],
             "regions": {"maxLatencyMs": 50}}  # fmt: skip
    for client in (a, b):
        await client.enter(
            pool="x", create=True, mode="auto", group_size=2, latencies={"eu": 10}, **rules
        )
    created = (await b.next_event("session.created")).data
    assert created["teams"] == {"a": [a.client_id], "b": [b.client_id]}
    assert created["region"] == "eu"


async def test_a_party_of_two_and_two_solos_form_a_2v2_with_the_party_on_one_team(
    start_server: Any,
) -> None:
    server = await start_server(GAME)
    a, b, s1, s2 = [
        await server.connect(project="game", attributes={"rating": rating})
        for rating in (1000, 2000, 1010, 2010)
    ]
    party = await a.party_create()
    await b.party_join(party["code"])
    await s1.enter("duo")
    await a.enter("duo", party_id=party["party_id"])
    await b.next_event("party.entered")
    await s2.enter("duo")
    created = [(await c.next_event("session.created")).data for c in (a, b, s1, s2)]
    assert len({data["session_id"] for data in created}) == 1
    teams = created[0]["teams"]
    assert all(data["teams"] == teams for data in created)
    assert sorted(map(sorted, teams.values())) == sorted(
        [sorted([a.client_id, b.client_id]), sorted([s1.client_id, s2.client_id])]
    )


async def test_a_party_larger_than_the_largest_team_is_refused(start_server: Any) -> None:
    server = await start_server(GAME)
    leader, *others = [
        await server.connect(project="game", attributes={"rating": 1000}) for _ in range(3)
    ]
    party = await leader.party_create()
    for other in others:
        await other.party_join(party["code"])
    with pytest.raises(MatchmakerError) as caught:
        await leader.enter("duo", party_id=party["party_id"])
    assert caught.value.code == "party.too_large"
    assert caught.value.details == {"party_id": party["party_id"], "limit": 2}
