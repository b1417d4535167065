"""``jwt`` credentials over real sockets through the Python client: the Project a token
binds, the player id peers see, trusted attributes matching, and every refusal."""

from __future__ import annotations

import time
from typing import Any

import pytest

from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project
from tests.matchmaker.jwtkeys import ALGORITHMS, AUDIENCE, ISSUER, signer

RANKED = MatchmakingPolicy(
    name="ranked", mode="auto", group_size=2, default=True, filter={"league": "@self"}
)
GAME = Project(
    id="game",
    keys=tuple(
        signer(a).key(issuer=ISSUER, audience=AUDIENCE, claims={"tier": "attributes.league"})
        for a in ALGORITHMS
    ),
    policies=(RANKED,),
)


def token(algorithm: Any = "EdDSA", **claims: Any) -> str:
    return signer(algorithm).token(**{"iss": ISSUER, "aud": AUDIENCE, **claims})


@pytest.mark.parametrize("algorithm", ALGORITHMS)
async def test_a_token_binds_the_project_and_peers_see_the_player_id(
    start_server: Any, algorithm: str
) -> None:
    server = await start_server(GAME)
    ana = await server.connect(credential=token(algorithm, sub="ana", tier="gold"))
    assert (ana.hello_reply["project"], ana.player_id) == ("game", "ana")
    bo = await server.connect(project="game", credential=token("HS256", sub="bo", tier="gold"))
    await ana.enter()
    await bo.enter()
    created = (await ana.next_event("session.created")).data
    players = {m["client_id"]: m.get("player_id") for m in created["members"]}
    assert players == {ana.client_id: "ana", bo.client_id: "bo"}


async def test_trusted_attributes_decide_the_match_and_cannot_be_sent(start_server: Any) -> None:
    server = await start_server(GAME)
    with pytest.raises(MatchmakerError) as caught:
        await server.connect(credential=token(tier="gold"), attributes={"league": "gold"})
    assert caught.value.code == "protocol.bad_request"
    assert caught.value.details == {"attribute": "league", "reason": "trusted"}
    gold = await server.connect(credential=token(sub="g", tier="gold"))
    silver = await server.connect(credential=token(sub="s", tier="silver"))
    other_gold = await server.connect(credential=token(sub="h", tier="gold"))
    await gold.enter()
    await silver.enter()  # another league: waits
    await other_gold.enter()
    created = (await gold.next_event("session.created")).data
    assert {m["client_id"] for m in created["members"]} == {gold.client_id, other_gold.client_id}


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"exp": int(time.time()) - 3600}, "expired"),
        ({"nbf": int(time.time()) + 3600}, "not_yet_valid"),
        ({"aud": "another-game"}, "wrong_audience"),
        ({"iss": "https://evil.example"}, "wrong_issuer"),
        # A sub that is no name never becomes a player id peers see, a mapped claim a
        # client could not send never becomes a trusted attribute.
        ({"sub": "a\nb\u0000", "tier": "gold"}, "bad_claim"),
        ({"sub": 42, "tier": "gold"}, "bad_claim"),
        ({"sub": "ana", "tier": 10**40}, "bad_claim"),
        ({"sub": "ana", "nbf": "soon"}, "bad_claim"),
    ],
)
async def test_a_refused_token_is_invalid_credential_with_its_reason_and_closes_4003(
    start_server: Any, claims: dict[str, Any], reason: str
) -> None:
    """No library's exception name reaches the client: it branches on the reason."""
    server = await start_server(GAME)
    client = await server.connect(hello=False)
    with pytest.raises(MatchmakerError) as caught:
        await client.hello(project="game", credential=token(**claims))
    assert (caught.value.code, caught.value.details) == (
        "auth.invalid_credential",
        {"reason": reason},
    )
    assert "Error" not in str(caught.value)
    assert await client.wait_closed() == 4003


@pytest.mark.parametrize("algorithm", ALGORITHMS)
async def test_a_token_signed_by_an_unknown_key_is_a_bad_signature(
    start_server: Any, algorithm: Any
) -> None:
    server = await start_server(GAME)
    forged = signer(algorithm, 1).token(iss=ISSUER, aud=AUDIENCE)
    with pytest.raises(MatchmakerError) as caught:
        await server.connect(credential=forged)
    assert caught.value.details == {"reason": "bad_signature"}


async def test_a_player_resumes_its_client_and_no_one_else_can(start_server: Any) -> None:
    server = await start_server(GAME, resume_grace_ms=10_000)
    ana = await server.connect(credential=token(sub="ana"))
    ana.abort()
    await server.until(lambda: server.plane.core.clients[ana.client_id].away)
    resume = (ana.resume_token, ana.last_seq)
    with pytest.raises(MatchmakerError) as caught:
        await server.connect(credential=token(sub="eve"), resume=resume)
    assert caught.value.code == "resume.expired"
    back = await server.connect(credential=token(sub="ana"), resume=resume)
    assert (back.client_id, back.player_id) == (ana.client_id, "ana")


async def test_a_resume_within_the_grace_keeps_the_match_with_a_token_expired_since_hello(
    start_server: Any,
) -> None:
    server = await start_server(GAME, resume_grace_ms=10_000)
    ana = await server.connect(credential=token(sub="ana", tier="gold"))
    room = await ana.join("room", create=True)
    ana.abort()
    await server.until(lambda: server.plane.core.clients[ana.client_id].away)
    expired = token(sub="ana", tier="gold", exp=int(time.time()) - 3600)
    back = await server.connect(credential=expired, resume=(ana.resume_token, ana.last_seq))
    assert (back.client_id, back.hello_reply["resumed"]) == (ana.client_id, True)
    await back.send(room["session_id"], "still in")  # the same session, still a member
    with pytest.raises(MatchmakerError) as caught:
        await server.connect(credential=expired)
    assert caught.value.details == {"reason": "expired"}


async def test_a_credential_function_is_called_at_every_hello(start_server: Any) -> None:
    server = await start_server(GAME)
    issued: list[str] = []

    def fresh() -> str:
        issued.append(token(sub="ana", n=len(issued)))
        return issued[-1]

    async def fetched() -> str:
        return fresh()

    plain = await server.connect(credential=fresh)
    awaited = await server.connect(credential=fetched)
    assert len(issued) == 2
    assert [plain.player_id, awaited.player_id] == ["ana", "ana"]
    assert [server.plane.core.clients[c.client_id or ""].credential for c in (plain, awaited)] == (
        issued
    )
    with pytest.raises(MatchmakerError) as caught:
        await server.connect(credential=lambda: 1 / 0)
    assert caught.value.code == "client.credential"
    assert "ZeroDivisionError" in str(caught.value)


async def test_max_sessions_per_client_counts_the_player_over_connections(
    start_server: Any,
) -> None:
    server = await start_server(GAME, max_sessions_per_client=1)
    first = await server.connect(credential=token(sub="ana"))
    second = await server.connect(credential=token(sub="ana"))
    await first.join("lobby", create=True)
    with pytest.raises(MatchmakerError) as caught:
        await second.join("lobby-2", create=True)
    assert caught.value.code == "session.limit"


async def test_a_client_value_breaking_the_attribute_rule_is_refused(start_server: Any) -> None:
    """The rule a mapped claim obeys is the one a client's own attributes obey."""
    server = await start_server()
    for value in (10**40, -(2**53)):
        with pytest.raises(MatchmakerError) as caught:
            await server.connect(attributes={"rating": value})
        assert caught.value.code == "protocol.bad_request"
        assert caught.value.details == {"attribute": "rating", "limit": 2**53 - 1}
    client = await server.connect(attributes={"rating": 2**53 - 1})
    assert client.client_id
