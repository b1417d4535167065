"""``session.backfill`` over real sockets through the Python client."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.client import Client
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, RangeRule

TRIO = MatchmakingPolicy(
    name="trio", mode="auto", group_size=3, default=True, filter={"region": "@self"}
)
GAME = Project(id="game", policies=(TRIO,))


async def trio(server: Any) -> tuple[list[Client], str]:
    players = [await server.connect(project="game", attributes={"region": "eu"}) for _ in range(3)]
    for player in players:
        await player.enter()
    created = [(await p.next_event("session.created")).data for p in players]
    return players, created[0]["session_id"]


async def test_a_member_backfills_a_seat_now_and_one_later(start_server: Any) -> None:
    server = await start_server(GAME)
    (a, b, c), session_id = await trio(server)
    await b.leave_session(session_id)
    await c.leave_session(session_id)
    waiting = await server.connect(project="game", attributes={"region": "eu"})
    other_region = await server.connect(project="game", attributes={"region": "us"})
    await other_region.enter()
    await waiting.enter()
    answer = await a.backfill(session_id, 2)
    assert answer == {"session_id": session_id, "filled": [waiting.client_id], "pending": 1}
    joined = (await a.next_event("session.member_joined")).data
    assert (joined["session_id"], joined["client_id"]) == (session_id, waiting.client_id)
    created = (await waiting.next_event("session.created")).data
    assert created["session_id"] == session_id
    assert {m["client_id"] for m in created["members"]} == {a.client_id, waiting.client_id}
    late = await server.connect(project="game", attributes={"region": "eu"})
    await late.enter()
    assert (await late.next_event("session.created")).data["session_id"] == session_id
    for member in (a, waiting):
        joined = (await member.next_event("session.member_joined")).data
        assert joined["client_id"] == late.client_id
    await late.send(session_id, {"hi": "all"})
    assert (await a.next_event("session.message")).data["data"] == {"hi": "all"}


@pytest.mark.parametrize(("seats", "code"), [(1, "backfill.invalid"), (-1, "protocol.bad_request")])
async def test_a_full_session_or_negative_seats_are_refused(
    start_server: Any, seats: int, code: str
) -> None:
    server = await start_server(GAME)
    (a, _, _), session_id = await trio(server)
    with pytest.raises(MatchmakerError) as caught:
        await a.backfill(session_id, seats)
    assert caught.value.code == code


async def test_a_room_is_not_backfilled(start_server: Any) -> None:
    server = await start_server(GAME)
    host = await server.connect(project="game")
    room = await host.join("lounge", create=True)
    with pytest.raises(MatchmakerError) as caught:
        await host.backfill(room["session_id"], 1)
    assert caught.value.code == "backfill.unsupported"


RANKED = MatchmakingPolicy(
    name="ranked", mode="auto", group_size=2, default=True, filter={"rating": RangeRule(100)}
)
RATED = Project(id="rated", policies=(RANKED,))


async def test_a_range_rule_seats_only_a_newcomer_every_member_accepts(
    start_server: Any,
) -> None:
    server = await start_server(RATED)
    a, b = [await server.connect(project="rated", attributes={"rating": r}) for r in (1000, 1050)]
    await a.enter()
    await b.enter()
    session_id = (await a.next_event("session.created")).data["session_id"]
    await b.leave_session(session_id)
    far = await server.connect(project="rated", attributes={"rating": 1200})
    await far.enter()
    assert await a.backfill(session_id, 1) == {"session_id": session_id, "filled": [], "pending": 1}
    near = await server.connect(project="rated", attributes={"rating": 1080})
    await near.enter()
    assert (await near.next_event("session.created")).data["session_id"] == session_id
    assert (await a.next_event("session.member_joined")).data["client_id"] == near.client_id
