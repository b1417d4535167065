"""The restart hand-over without I/O: one core's parked clients written, another core
taking them (what two processes on one store do, :mod:`matchmaker.data.handover`)."""

from __future__ import annotations

import json

from matchmaker.config import Limits
from matchmaker.core import Matchmaker
from matchmaker.core.commands import CreateParty, EnterPool, JoinParty
from matchmaker.core.events import EntryPoolClosed, MemberLeft
from matchmaker.core.parties import PartyCreated, PartyInfo
from matchmaker.data.handover import close_entries, hand_over, take_over
from matchmaker.model import Project

LIMITS = Limits()
GRACE = LIMITS.resume_grace_ms
PROJECT = Project(id="p")
NOW = 1_700_000_000_000


def _room(core: Matchmaker) -> dict[str, str]:
    """Two clients in room ``table``: each one's id and token."""
    tokens = {}
    for _ in range(2):
        client = core.connect("p", "secret", {"region": "eu"}, player_id=None)
        tokens[client.client_id] = core.resumption.issue(client.client_id, "p")
        core.join_session(client.client_id, PROJECT, "table", True, {"name": client.client_id})
    return tokens


def _park(core: Matchmaker, client_id: str, now_ms: int) -> None:
    assert core.resumption.park(client_id, now_ms)
    core.suspend(client_id)


def _written(core: Matchmaker, now_ms: int) -> str:
    close_entries(core, now_ms)
    body = hand_over(core, now_ms)
    assert body is not None
    return body


def test_taken_over_clients_resume_with_their_tokens_in_their_session() -> None:
    first = Matchmaker(LIMITS)
    tokens = _room(first)
    (session_id,) = first.sessions
    for client_id in tokens:
        _park(first, client_id, NOW)
    outbox = first.resumption.outboxes[next(iter(tokens))]
    outbox.stamp('{"type":"session.message","data":{}', NOW)
    body = _written(first, NOW)
    assert not any(token in body for token in tokens.values())
    assert "secret" not in body  # no credential is handed over

    second = Matchmaker(LIMITS)
    assert take_over(second, body, NOW + 1000) == []
    session = second.sessions[session_id]
    assert list(session.members) == list(tokens)
    assert second.rooms[("p", "table")] is session
    for client_id, token in tokens.items():
        client = second.clients[client_id]
        assert client.away
        assert client.attributes == {"region": "eu"}
        assert client.credential is None
        assert session.members[client_id].public == {"name": client_id}
        taken = second.resumption.take(token, "p", 0)
        assert taken is not None
        assert taken.outbox.client_id == client_id
        assert second.resumption.take(token, "p", 0) is None  # a token works once
    first_id = next(iter(tokens))
    assert second.resumption.outboxes[first_id].seq == 1


def test_a_client_whose_grace_ran_out_meanwhile_leaves_and_its_peer_is_told() -> None:
    first = Matchmaker(LIMITS)
    early, late = _room(first)
    _park(first, early, NOW)
    _park(first, late, NOW + 10_000)
    body = _written(first, NOW + 10_000)
    second = Matchmaker(LIMITS)
    told = take_over(second, body, NOW + GRACE)
    assert told == [([late], MemberLeft(next(iter(first.sessions)), early, "disconnected"))]
    assert early not in second.clients
    assert late in second.clients


def test_a_waiting_entry_is_closed_with_reason_restart_into_the_replay_buffer() -> None:
    core = Matchmaker(LIMITS)
    client = core.connect("p", None, {})
    core.resumption.issue(client.client_id, "p")
    request = EnterPool(pool="later", create=True, mode="auto", group_size=3)
    entered, _ = core.enter(client.client_id, PROJECT, request, NOW)
    _park(core, client.client_id, NOW)
    closed = close_entries(core, NOW)
    assert closed == [((client.client_id,), EntryPoolClosed("later", entered.entry_id, "restart"))]
    assert not client.entries
    assert not core.pools


def test_nothing_is_written_without_a_parked_client() -> None:
    core = Matchmaker(LIMITS)
    _room(core)
    assert hand_over(core, NOW) is None


def test_a_hand_over_that_does_not_decode_or_of_another_version_is_not_taken() -> None:
    first = Matchmaker(LIMITS)
    for client_id in _room(first):
        _park(first, client_id, NOW)
    body = json.loads(_written(first, NOW))
    for bad in ("{", json.dumps({**body, "version": 99})):
        second = Matchmaker(LIMITS)
        assert take_over(second, bad, NOW) == []
        assert not second.clients
        assert not second.sessions


def test_a_party_is_handed_over_and_its_entry_closed_for_every_member() -> None:
    """A party waiting in a pool: every member hears the entry closed; on the next core
    the party has its id, code, leader and members, and a friend joins it by its code."""
    first = Matchmaker(LIMITS)
    leader, friend = (first.connect("p", None, {}) for _ in range(2))
    for client in (leader, friend):
        first.resumption.issue(client.client_id, "p")
    created, _ = first.party(leader.client_id, CreateParty(), NOW)
    assert isinstance(created, PartyCreated)
    first.party(friend.client_id, JoinParty(created.code), NOW)
    request = EnterPool(
        pool="duo", create=True, mode="auto", group_size=4, party_id=created.party_id
    )
    entered, _ = first.enter(leader.client_id, PROJECT, request, NOW)
    for client in (leader, friend):
        _park(first, client.client_id, NOW)
    closed = close_entries(first, NOW)
    members = (leader.client_id, friend.client_id)
    assert closed == [(members, EntryPoolClosed("duo", entered.entry_id, "restart"))]
    body = hand_over(first, NOW)
    assert body is not None

    second = Matchmaker(LIMITS)
    take_over(second, body, NOW + 1)
    party = second.clients[leader.client_id].parties[created.party_id]
    assert second.clients[friend.client_id].parties[created.party_id] is party
    assert (party.code, party.leader, tuple(party.members)) == (
        created.code,
        leader.client_id,
        members,
    )
    newcomer = second.connect("p", None, {})
    joined, _ = second.party(newcomer.client_id, JoinParty(created.code), NOW + 2)
    assert isinstance(joined, PartyInfo)
    assert joined.party_id == created.party_id
