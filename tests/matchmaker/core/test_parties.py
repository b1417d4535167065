"""Parties in the core: created, joined by code, entered whole by the leader, matched into
one session, withdrawn for all when they change, bounded."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchmaker.config import Limits
from matchmaker.core import Delivery, EnterPool, Matchmaker, events
from matchmaker.core.commands import Backfill, CreateParty, JoinParty, LeaveParty
from matchmaker.core.parties import (
    CODE_ALPHABET,
    CODE_LENGTH,
    JOIN_BURST,
    PartyEntered,
    PartyInfo,
    PartyMemberJoined,
    PartyMemberLeft,
)
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, RangeRule

FOUR = MatchmakingPolicy(name="four", mode="auto", group_size=4, default=True)
FIVE = MatchmakingPolicy(name="five", mode="auto", group_size=5)
DUEL = MatchmakingPolicy(name="duel", mode="auto", group_size=2)
FILL = MatchmakingPolicy(
    name="fill", mode="auto", group_size=4, min_group_size=3, fill_timeout_ms=1_000
)
REGIONAL = MatchmakingPolicy(name="regional", mode="auto", group_size=4, filter={"region": "@self"})
LOBBY = MatchmakingPolicy(name="lobby", mode="claim", group_size=4)
RANKED = MatchmakingPolicy(
    name="ranked", mode="auto", group_size=4, filter={"rating": RangeRule(within=100)}
)
PROJECT = Project(id="p", policies=(FOUR, FIVE, DUEL, FILL, REGIONAL, LOBBY, RANKED))


def new_core(**limits: Any) -> Matchmaker:
    return Matchmaker(Limits(**limits), node="t")


def connect(core: Matchmaker, **attributes: Any) -> str:
    return core.connect("p", None, dict(attributes)).client_id


def party_of(core: Matchmaker, leader: str, *others: str, now_ms: int = 0) -> PartyInfo:
    """A party led by ``leader`` that ``others`` joined; its state after the last join."""
    info, _ = core.party(leader, CreateParty(), now_ms)
    assert isinstance(info, PartyInfo)
    for other in others:
        info, _ = core.party(other, JoinParty(info.code), now_ms)
        assert isinstance(info, PartyInfo)
    return info


def sessions(out: list[Delivery]) -> dict[str, set[str]]:
    """The sessions formed in ``out``: session id -> the members it was announced to."""
    formed: dict[str, set[str]] = {}
    for recipients, event in out:
        if isinstance(event, events.SessionFormed):
            formed.setdefault(event.session_id, set()).update(recipients)
            assert {m.client_id for m in event.members} >= set(recipients)
    return formed


def told(out: list[Delivery], kind: type) -> list[tuple[set[str], Any]]:
    return [(set(recipients), event) for recipients, event in out if isinstance(event, kind)]


def enter(core: Matchmaker, client: str, now_ms: int = 0, **fields: Any) -> list[Delivery]:
    return core.enter(client, PROJECT, EnterPool(**fields), now_ms)[1]


def test_a_party_of_two_and_two_solos_form_one_session_of_four() -> None:
    core = new_core()
    a, b, s1, s2 = (connect(core) for _ in range(4))
    party = party_of(core, a, b)
    assert enter(core, s1) == []
    entered, out = core.enter(a, PROJECT, EnterPool(party_id=party.party_id), 1)
    # The others are told their leader entered for them; nothing forms with three seats.
    assert told(out, PartyEntered) == [
        ({b}, PartyEntered(party.party_id, "four", entered.entry_id))
    ]
    assert sessions(out) == {}
    out = enter(core, s2, 2)
    assert list(sessions(out).values()) == [{a, b, s1, s2}]
    assert core.pools == {}
    # The party outlives its match: it can queue again.
    assert core.clients[a].parties[party.party_id].entry is None


def test_the_leaders_public_and_the_members_are_in_the_session() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    party = party_of(core, a, b)
    core.enter(a, PROJECT, EnterPool(policy="duel", party_id=party.party_id, public={"n": 1}), 0)
    session = next(iter(core.clients[b].sessions.values()))
    assert set(session.members) == {a, b}
    assert session.members[a].public == {"n": 1}


def test_parties_fill_a_group_exactly_and_the_oldest_first() -> None:
    core = new_core()
    solo = connect(core)
    p1 = [connect(core) for _ in range(2)]
    p2 = [connect(core) for _ in range(2)]
    first, second = party_of(core, *p1), party_of(core, *p2)
    enter(core, solo)
    enter(core, p1[0], 1, party_id=first.party_id)  # 1 + 2 seats: waits
    out = enter(core, p2[0], 2, party_id=second.party_id)  # 2 + 2 fill four: the solo waits
    assert list(sessions(out).values()) == [{*p1, *p2}]
    assert set(core.clients[solo].entries) == {"four"}


def test_many_unfitting_parties_wait_and_a_solo_takes_the_oldest() -> None:
    """Parties of three never fill four together; each solo completes the oldest one."""
    core = new_core()
    parties = []
    for i in range(50):
        members = [connect(core) for _ in range(3)]
        info = party_of(core, *members)
        enter(core, members[0], i, party_id=info.party_id)
        parties.append(members)
    assert not any(core.clients[m].sessions for members in parties for m in members)
    solo = connect(core)
    out = enter(core, solo, 100)
    assert list(sessions(out).values()) == [{*parties[0], solo}]


def test_a_party_the_size_of_the_group_forms_alone() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    party = party_of(core, a, b)
    out = enter(core, a, policy="duel", party_id=party.party_id)
    assert list(sessions(out).values()) == [{a, b}]


def test_a_party_larger_than_the_group_is_refused() -> None:
    core = new_core()
    a, b, c = connect(core), connect(core), connect(core)
    party = party_of(core, a, b, c)
    with pytest.raises(MatchmakerError) as refused:
        enter(core, a, policy="duel", party_id=party.party_id)
    assert refused.value.code == "party.too_large"
    assert refused.value.details == {"party_id": party.party_id, "limit": 2}
    assert core.clients[a].entries == {}


def test_a_member_who_is_not_the_leader_cannot_enter_the_party() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    party = party_of(core, a, b)
    with pytest.raises(MatchmakerError) as refused:
        enter(core, b, party_id=party.party_id)
    assert refused.value.code == "party.not_leader"
    assert refused.value.details == {"party_id": party.party_id, "leader": a}


def test_a_member_never_waits_twice_in_one_pool_alone_and_with_its_party() -> None:
    """One entry per client per pool, a party's entry counting for every member: a member
    waiting alone keeps its party out of that pool, and a party waiting keeps its members
    from entering it alone (once seated twice in one session, or a KeyError later)."""
    core = new_core()
    a, b = connect(core), connect(core)
    party = party_of(core, a, b)
    enter(core, b, policy="fill")
    with pytest.raises(MatchmakerError) as refused:
        enter(core, a, policy="fill", party_id=party.party_id)
    assert refused.value.code == "pool.already_entered"
    assert refused.value.details == {"pool": "fill", "client_id": b}
    enter(core, a, policy="four", party_id=party.party_id)
    with pytest.raises(MatchmakerError) as refused:
        enter(core, b, policy="four")
    assert refused.value.code == "pool.already_entered"
    assert refused.value.details is not None
    assert refused.value.details["pool"] == "four"
    s1, s2 = connect(core), connect(core)
    enter(core, s1, policy="four")
    formed = sessions(enter(core, s2, policy="four"))
    assert list(formed.values()) == [{a, b, s1, s2}]


def test_entering_a_party_one_is_not_in_is_not_found() -> None:
    core = new_core()
    a, b, c = connect(core), connect(core), connect(core)
    party = party_of(core, a, b)
    with pytest.raises(MatchmakerError) as refused:
        enter(core, c, party_id=party.party_id)
    assert refused.value.code == "party.not_found"


@pytest.mark.parametrize("policy", ["lobby"])
def test_parties_enter_auto_pools_only(policy: str) -> None:
    core = new_core()
    a, b = connect(core, rating=1000), connect(core, rating=1000)
    party = party_of(core, a, b)
    with pytest.raises(MatchmakerError) as refused:
        enter(core, a, policy=policy, party_id=party.party_id)
    assert refused.value.code == "party.unsupported"


def test_members_must_share_the_pools_self_bucket() -> None:
    core = new_core()
    a, b = connect(core, region="eu"), connect(core, region="us")
    party = party_of(core, a, b)
    with pytest.raises(MatchmakerError) as refused:
        enter(core, a, policy="regional", party_id=party.party_id)
    assert refused.value.code == "pool.filter_mismatch"
    assert refused.value.details == {"party_id": party.party_id, "client_id": b}


def test_a_party_waits_once() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    party = party_of(core, a, b)
    enter(core, a, party_id=party.party_id)
    with pytest.raises(MatchmakerError) as refused:
        enter(core, a, policy="five", party_id=party.party_id)
    assert refused.value.code == "pool.already_entered"


def test_a_member_leaving_withdraws_the_party_for_all() -> None:
    core = new_core()
    a, b, c = connect(core), connect(core), connect(core)
    party = party_of(core, a, b, c)
    entered, _ = core.enter(a, PROJECT, EnterPool(party_id=party.party_id), 0)
    _answer, out = core.party(c, LeaveParty(party.party_id), 1)
    withdrawn = told(out, events.EntryWithdrawn)
    assert withdrawn == [
        ({a, b, c}, events.EntryWithdrawn("four", entered.entry_id, "party_changed"))
    ]
    assert told(out, PartyMemberLeft) == [({a, b}, PartyMemberLeft(party.party_id, c, "left", a))]
    assert core.clients[a].entries == {}
    assert core.pools == {}
    # Entering again takes the party as it is now; a solo pair then completes it.
    enter(core, a, 2, party_id=party.party_id)
    s1, s2 = connect(core), connect(core)
    enter(core, s1, 3)
    assert list(sessions(enter(core, s2, 4)).values()) == [{a, b, s1, s2}]


def test_a_member_joining_withdraws_the_party_too() -> None:
    core = new_core()
    a, b, c = connect(core), connect(core), connect(core)
    party = party_of(core, a, b)
    enter(core, a, party_id=party.party_id)
    _, out = core.party(c, JoinParty(party.code), 1)
    assert [r for r, _ in told(out, events.EntryWithdrawn)] == [{a, b}]
    assert told(out, PartyMemberJoined) == [({a, b}, PartyMemberJoined(party.party_id, c))]


def test_the_leader_leaving_the_pool_tells_the_members() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    party = party_of(core, a, b)
    entered, _ = core.enter(a, PROJECT, EnterPool(party_id=party.party_id), 0)
    _, out = core.leave_pool(a, "four")
    assert told(out, events.EntryWithdrawn) == [
        ({b}, events.EntryWithdrawn("four", entered.entry_id, "left"))
    ]


def test_the_next_member_leads_when_the_leader_leaves() -> None:
    core = new_core()
    a, b, c = connect(core), connect(core), connect(core)
    party = party_of(core, a, b, c)
    _, out = core.party(a, LeaveParty(party.party_id), 0)
    assert told(out, PartyMemberLeft) == [({b, c}, PartyMemberLeft(party.party_id, a, "left", b))]
    out = enter(core, b, 1, policy="duel", party_id=party.party_id)
    assert list(sessions(out).values()) == [{b, c}]


def test_a_member_gone_past_its_grace_withdraws_the_party() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    party = party_of(core, a, b)
    entered, _ = core.enter(a, PROJECT, EnterPool(party_id=party.party_id), 0)
    core.suspend(b)
    out = core.disconnect(b, 5)
    assert told(out, events.EntryWithdrawn) == [
        ({a, b}, events.EntryWithdrawn("four", entered.entry_id, "party_changed"))
    ]
    assert told(out, PartyMemberLeft) == [
        ({a}, PartyMemberLeft(party.party_id, b, "disconnected", a))
    ]
    assert core.pools == {}


def test_an_away_member_pauses_the_party_until_it_is_back() -> None:
    core = new_core()
    a, b, s1, s2 = (connect(core) for _ in range(4))
    party = party_of(core, a, b)
    enter(core, a, party_id=party.party_id)
    core.suspend(b)
    enter(core, s1, 1)
    assert sessions(enter(core, s2, 2)) == {}  # two seats of four wait: the party is paused
    core.suspend(a)
    assert core.resume(a, 3) == []  # its member is still away
    out = core.resume(b, 4)
    assert list(sessions(out).values()) == [{a, b, s1, s2}]


def test_a_party_entered_while_a_member_is_away_waits_for_it() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    party = party_of(core, a, b)
    core.suspend(b)
    assert sessions(enter(core, a, policy="duel", party_id=party.party_id)) == {}
    assert list(sessions(core.resume(b, 1)).values()) == [{a, b}]


def test_a_partys_entry_expires_for_all() -> None:
    core = new_core(entry_ttl_ms=100)
    a, b = connect(core), connect(core)
    party = party_of(core, a, b)
    enter(core, a, party_id=party.party_id)
    out = core.expire(100)
    assert [(r, e.reason) for r, e in told(out, events.EntryExpired)] == [({a, b}, "ttl")]


def test_the_fill_timeout_counts_seats() -> None:
    core = new_core()
    a, b, solo = connect(core), connect(core), connect(core)
    party = party_of(core, a, b)
    enter(core, a, policy="fill", party_id=party.party_id)
    enter(core, solo, 10, policy="fill")
    assert list(sessions(core.expire(1_000)).values()) == [{a, b, solo}]


def test_a_backfill_never_seats_a_party() -> None:
    core = new_core()
    players = [connect(core) for _ in range(4)]
    for i, client in enumerate(players):
        out = enter(core, client, i)
    (session_id,) = sessions(out)
    core.leave_session(players[0], session_id, 5)
    core.backfill(players[1], Backfill(session_id, 1), 6)
    a, b = connect(core), connect(core)
    party = party_of(core, a, b)
    enter(core, a, 7, party_id=party.party_id)
    assert set(core.sessions[session_id].members) == set(players[1:])
    solo = connect(core)
    enter(core, solo, 8)
    assert solo in core.sessions[session_id].members


# -- codes and bounds -------------------------------------------------------------------------


def test_codes_are_short_and_read_out_loosely() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    party = party_of(core, a)
    assert len(party.code) == CODE_LENGTH
    assert set(party.code) <= set(CODE_ALPHABET)
    typed = "-".join([party.code[:4], party.code[4:]]).lower().replace("0", "o")
    info, out = core.party(b, JoinParty(typed), 0)
    assert isinstance(info, PartyInfo)
    assert info.party_id == party.party_id
    assert [m.client_id for m in info.members] == [a, b]
    assert told(out, PartyMemberJoined) == [({a}, PartyMemberJoined(party.party_id, b))]
    again, out = core.party(b, JoinParty(party.code), 1)  # joining twice changes nothing
    assert again == info
    assert out == []


def test_a_wrong_code_is_not_found_and_guesses_are_rate_limited() -> None:
    core = new_core()
    a = connect(core)
    for _ in range(JOIN_BURST):
        with pytest.raises(MatchmakerError) as missed:
            core.party(a, JoinParty("00000000"), 0)
        assert missed.value.code == "party.not_found"
    with pytest.raises(MatchmakerError) as limited:
        core.party(a, JoinParty("00000000"), 0)
    assert limited.value.code == "rate.limited"
    with pytest.raises(MatchmakerError) as missed:
        core.party(a, JoinParty("00000000"), 1_000)  # a second later: one more guess
    assert missed.value.code == "party.not_found"


def test_parties_are_bounded_per_client_per_project_and_in_members() -> None:
    core = new_core(max_parties_per_project=2, max_party_members=2, max_parties_per_client=1)
    a, b, c, d = (connect(core) for _ in range(4))
    party = party_of(core, a, b)
    with pytest.raises(MatchmakerError) as refused:
        core.party(a, CreateParty(), 0)
    assert (refused.value.code, (refused.value.details or {})["per"]) == ("party.limit", "client")
    with pytest.raises(MatchmakerError) as refused:
        core.party(c, JoinParty(party.code), 0)
    assert refused.value.code == "party.full"
    party_of(core, c)
    with pytest.raises(MatchmakerError) as refused:
        core.party(d, CreateParty(), 0)
    assert (refused.value.code, (refused.value.details or {})["per"]) == ("party.limit", "project")
    core.party(c, LeaveParty(_only(core, c)), 0)
    party_of(core, d)  # a party emptied frees its place


def _only(core: Matchmaker, client_id: str) -> str:
    (party_id,) = core.clients[client_id].parties
    return party_id


def test_a_disconnected_client_leaves_its_parties_and_the_last_frees_the_code() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    party = party_of(core, a)
    core.disconnect(a, 0)
    assert core.parties.by_code == {}
    assert core.parties.per_project == {}
    with pytest.raises(MatchmakerError) as missed:
        core.party(b, JoinParty(party.code), 0)
    assert missed.value.code == "party.not_found"
    with pytest.raises(MatchmakerError) as missing:
        core.party(b, LeaveParty(party.party_id), 0)
    assert missing.value.code == "party.not_found"


# -- matching by seats, for any arrivals ------------------------------------------------------


def _can_fill(seats: list[int], size: int) -> bool:
    """Whether some of ``seats`` add up to ``size`` (a subset sum, by brute DP)."""
    reach = 1
    for count in seats:
        reach |= reach << count
    return bool((reach >> size) & 1)


@settings(max_examples=150, deadline=None)
@given(
    size=st.integers(min_value=2, max_value=6),
    arrivals=st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=40),
)
def test_groups_fill_exactly_and_nothing_that_could_fill_one_waits(
    size: int, arrivals: list[int]
) -> None:
    """Any arrivals of solos and parties (each at most a group): every group formed has
    exactly ``size`` seats, a party's members always together, and after each arrival
    no set of waiting entries could fill a group (matching is event-driven: nothing is
    left for a later scan to find)."""
    policy = MatchmakingPolicy(name="g", mode="auto", group_size=size)
    project = Project(id="p", policies=(policy,))
    core = new_core(max_party_members=6)
    parties: dict[str, set[str]] = {}  # leader -> its members
    for now, seats in enumerate(min(a, size) for a in arrivals):
        members = [connect(core) for _ in range(seats)]
        request = EnterPool(policy="g")
        if seats > 1:
            info = party_of(core, *members)
            request = EnterPool(policy="g", party_id=info.party_id)
        parties[members[0]] = set(members)
        _, out = core.enter(members[0], project, request, now)
        for session in sessions(out).values():
            assert len(session) == size
            for group in parties.values():
                assert group <= session or not group & session
        pool = next(iter(core.pools.values()), None)
        waiting = (
            [] if pool is None else [e.seats for f in pool.buckets.values() for e in f.values()]
        )
        assert not _can_fill(waiting, size)
