"""Issue 31 end to end through the Python client, over real sockets: a Project bound by
``jwt`` tokens whose rating claim is a trusted attribute, a policy with a widening rating
window and ``minGroupSize``, and a backfill of the seat its smaller group left open.

Each rule shows in the outcome: the token's ``sub`` is the ``player_id`` peers see and its
rating cannot be overridden; two players 80 apart are matched only once their windows
widened (from 50) and only as a group of two after the fill timeout; the backfill seats a
newcomer once both windows reached it, never the player beyond the widest window.
"""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, RangeRule, Widen
from tests.matchmaker.jwtkeys import AUDIENCE, ISSUER, signer

RANKED = MatchmakingPolicy(
    name="ranked",
    mode="auto",
    group_size=3,
    min_group_size=2,
    fill_timeout_ms=300,
    default=True,
    filter={"rating": RangeRule(within=50, widen=Widen(every_ms=200, by=50, max=200))},
)
KEY = signer("EdDSA").key(issuer=ISSUER, audience=AUDIENCE, claims={"mmr": "attributes.rating"})
GAME = Project(id="game", keys=(KEY,), policies=(RANKED,))


def token(sub: str, mmr: int) -> str:
    return signer("EdDSA").token(sub=sub, iss=ISSUER, aud=AUDIENCE, mmr=mmr)


def ids(created: dict[str, Any]) -> dict[str, str | None]:
    return {m["client_id"]: m.get("player_id") for m in created["members"]}


async def test_a_ranked_game_with_a_jwt_project_a_widening_window_and_backfill(
    start_server: Any,
) -> None:
    server = await start_server(GAME)
    with pytest.raises(MatchmakerError) as caught:  # the token's rating is the one that counts
        await server.connect(credential=token("cheat", 1500), attributes={"rating": 900})
    assert caught.value.code == "protocol.bad_request"
    ana = await server.connect(credential=token("ana", 1500))
    bo = await server.connect(credential=token("bo", 1580))  # 80 apart: windows must widen
    far = await server.connect(credential=token("far", 1900))  # 320 from bo: past the widest
    assert ana.hello_reply["project"] == "game"
    for client in (ana, bo, far):
        entered = await client.enter()
        assert (entered["pool"], entered["groupSize"]) == ("ranked", 3)
    created = (await ana.next_event("session.created")).data
    session_id = created["session_id"]
    assert (created["pool"], ids(created)) == ("ranked", {ana.client_id: "ana", bo.client_id: "bo"})
    assert (await bo.next_event("session.created")).data["session_id"] == session_id

    # One seat is open (a group of two of three): a member asks for it.
    answer = await bo.backfill(session_id, 1)
    assert answer == {"session_id": session_id, "filled": [], "pending": 1}  # far does not fit
    cy = await server.connect(credential=token("cy", 1560))  # 60 from ana: after one widening
    await cy.enter()
    seated = (await cy.next_event("session.created")).data
    assert seated["session_id"] == session_id
    assert ids(seated) == {ana.client_id: "ana", bo.client_id: "bo", cy.client_id: "cy"}
    for member in (ana, bo):
        joined = (await member.next_event("session.member_joined")).data
        assert (joined["client_id"], joined["player_id"]) == (cy.client_id, "cy")
    await cy.send(session_id, {"gl": "hf"})
    assert (await ana.next_event("session.message")).data["data"] == {"gl": "hf"}
    # far still waits in the pool: never seated, never matched.
    assert (await far.leave("ranked"))["pool"] == "ranked"
