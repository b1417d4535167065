"""Skill windows that widen and groups that fill after a timeout, over real sockets."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, RangeRule, Widen

RANKED = MatchmakingPolicy(
    name="ranked",
    mode="auto",
    group_size=2,
    default=True,
    filter={
        "region": "@self",
        "rating": RangeRule(within=100, widen=Widen(every_ms=300, by=100, max=300)),
    },
)
LOBBY = MatchmakingPolicy(
    name="lobby", mode="auto", group_size=4, min_group_size=2, fill_timeout_ms=300
)
GAME = Project(id="game", policies=(RANKED, LOBBY))
RANGE = {"within": 10}


async def test_windows_widen_until_two_players_accept_each_other(start_server: Any) -> None:
    server = await start_server(GAME)
    low, high, other_region = [
        await server.connect(project="game", attributes={"region": region, "rating": rating})
        for region, rating in (("eu", 1000), ("eu", 1250), ("us", 1100))
    ]
    for client in (low, high, other_region):
        await client.enter()
    created = await low.next_event("session.created")
    members = {m["client_id"] for m in created.data["members"]}
    assert members == {low.client_id, high.client_id}
    assert (await high.next_event("session.created")).data["session_id"] == (
        created.data["session_id"]
    )
    pool = next(iter(server.plane.core.pools.values()))
    assert pool.size == 1  # the other region's player still waits


async def test_a_smaller_group_forms_after_the_fill_timeout(start_server: Any) -> None:
    server = await start_server(GAME)
    a, b = [await server.connect(project="game") for _ in range(2)]
    await a.enter(policy="lobby")
    await b.enter(policy="lobby")
    created = await a.next_event("session.created")
    assert {m["client_id"] for m in created.data["members"]} == {a.client_id, b.client_id}


async def test_an_ad_hoc_pool_takes_the_same_fields(start_server: Any) -> None:
    server = await start_server()
    a = await server.connect(attributes={"rating": 5})
    b = await server.connect(attributes={"rating": 12})
    for client in (a, b):
        await client.enter(
            pool="mine", create=True, mode="auto", group_size=3, filter={"rating": RANGE},
            min_group_size=2, fill_timeout_ms=200,
        )  # fmt: skip
    created = await b.next_event("session.created")
    assert {m["client_id"] for m in created.data["members"]} == {a.client_id, b.client_id}


@pytest.mark.parametrize(
    ("fields", "details"),
    [
        ({"group_size": 2, "min_group_size": 3, "fill_timeout_ms": 1}, {"field": "minGroupSize"}),
        ({"group_size": 2, "min_group_size": 1}, {"field": "fillTimeoutMs"}),
        ({"mode": "claim", "min_group_size": 1, "fill_timeout_ms": 1}, {"field": "minGroupSize"}),
        ({"mode": "claim", "filter": {"r": RANGE}}, {"field": "filter"}),
        ({"filter": {"a": RANGE, "b": RANGE}}, {"field": "filter", "attribute": "b"}),
        (
            {"filter": {"r": {"within": 5, "widen": {"everyMs": 1, "by": 1, "max": 4}}}},
            {"field": "filter", "attribute": "r"},
        ),
    ],
)
async def test_bad_ad_hoc_rules_are_refused(
    start_server: Any, fields: dict[str, Any], details: dict[str, Any]
) -> None:
    server = await start_server()
    client = await server.connect()
    request = {"pool": "p", "create": True, "mode": "auto", "group_size": 2, **fields}
    with pytest.raises(MatchmakerError) as caught:
        await client.enter(**request)
    assert caught.value.code == "protocol.bad_request"
    assert caught.value.details == details
    assert server.plane.core.pools == {}


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({"pool": "p", "create": True, "mode": "auto", "groupSize": 2,
          "filter": {"r": {"within": -1}}}, "protocol.bad_request"),
        ({"policy": "lobby", "minGroupSize": 2, "fillTimeoutMs": 9}, "pool.conflict"),
        ({"policy": "ranked"}, "pool.filter_mismatch"),
    ],
)  # fmt: skip
async def test_rule_errors(start_server: Any, request_: dict[str, Any], code: str) -> None:
    server = await start_server(GAME)
    client = await server.connect(project="game", attributes={"region": "eu", "rating": "x"})
    with pytest.raises(MatchmakerError) as caught:
        await client.request("pool.enter", request_)
    assert caught.value.code == code
