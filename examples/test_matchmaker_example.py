"""How a game developer tests their client code against a real matchmaker.

Nothing to set up: installing matchmaker gives pytest the ``matchmaker_server``
and ``matchmaker_client`` fixtures (a real server on free loopback ports, a
memory store, a random management key). Run with pytest and pytest-asyncio.
"""

from __future__ import annotations

import pytest

from matchmaker import MatchmakerError

DUEL = {"name": "duel", "mode": "auto", "groupSize": 2, "default": True}


@pytest.mark.asyncio
async def test_two_players_are_matched_and_can_talk(matchmaker_server, matchmaker_client):
    matchmaker_server.admin.create({"id": "chess", "policies": [DUEL]})

    async with (
        matchmaker_client(project="chess") as alice,
        matchmaker_client(project="chess") as bob,
    ):
        await alice.enter(policy="duel")
        await bob.enter(policy="duel")
        session = (await alice.next_event("session.created")).data
        assert (await bob.next_event("session.created")).data["session_id"] == session["session_id"]

        await alice.send(session["session_id"], {"move": "e4"})
        message = await bob.next_event("session.message")
        assert message.data["data"] == {"move": "e4"}


@pytest.mark.asyncio
async def test_an_unknown_policy_is_a_coded_error(matchmaker_server, matchmaker_client):
    matchmaker_server.admin.create({"id": "chess", "policies": [DUEL]})

    async with matchmaker_client(project="chess") as alice:
        with pytest.raises(MatchmakerError) as caught:
            await alice.enter(policy="blitz")
    assert caught.value.code == "pool.policy_not_found"
