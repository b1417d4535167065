"""Parties in pools with a range rule: the rule holds between every two members of a
group, a party's own members included, with the party's window widening from its enter."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from matchmaker.core import EnterPool, Matchmaker
from matchmaker.model import MatchmakingPolicy, Project, RangeRule, Team, Widen
from tests.matchmaker.core.test_parties import connect, new_core, party_of, sessions

RANKED = MatchmakingPolicy(
    name="ranked", mode="auto", group_size=4, filter={"rating": RangeRule(within=100)}
)
WIDEN = RangeRule(within=100, widen=Widen(every_ms=1_000, by=50, max=200))
WIDENING = MatchmakingPolicy(name="widening", mode="auto", group_size=4, filter={"rating": WIDEN})
TEAMS = MatchmakingPolicy(
    name="teams",
    mode="auto",
    group_size=4,
    filter={"rating": WIDEN},
    teams=(Team("a", 2), Team("b", 2)),
)
PROJECT = Project(id="p", policies=(RANKED, WIDENING, TEAMS))


def enter_party(core: Matchmaker, policy: str, *ratings: int, now_ms: int = 0) -> set[str]:
    """A party of players rated ``ratings`` enters ``policy``: its members."""
    members = [connect(core, rating=rating) for rating in ratings]
    info = party_of(core, *members, now_ms=now_ms)
    core.enter(members[0], PROJECT, EnterPool(policy=policy, party_id=info.party_id), now_ms)
    return set(members)


def enter_solo(core: Matchmaker, policy: str, rating: int, now_ms: int = 0) -> dict[str, set[str]]:
    """A solo rated ``rating`` enters ``policy``: the sessions that formed."""
    client = connect(core, rating=rating)
    return sessions(core.enter(client, PROJECT, EnterPool(policy=policy), now_ms)[1])


def test_a_party_matches_solos_within_the_window_of_every_member() -> None:
    core = new_core()
    party = enter_party(core, "ranked", 1000, 1040)
    assert enter_solo(core, "ranked", 1200) == {}  # 200 from the party's 1000
    assert enter_solo(core, "ranked", 1050) == {}
    (session,) = enter_solo(core, "ranked", 1080).values()
    assert party < session
    assert len(session) == 4
    assert len(core.pools) == 1  # the 1200 still waits


def test_a_partys_window_widens_until_it_reaches_its_farthest_member() -> None:
    core = new_core()
    party = enter_party(core, "widening", 1000, 1040)
    assert enter_solo(core, "widening", 1120) == {}  # 120 from 1000 > 100
    assert enter_solo(core, "widening", 1110) == {}
    assert sessions(core.expire(999)) == {}
    formed = sessions(core.expire(1_000))
    assert [party < s and len(s) == 4 for s in formed.values()] == [True]


def test_a_party_whose_own_members_are_too_far_apart_waits() -> None:
    core = new_core()
    enter_party(core, "ranked", 1000, 1150)
    assert enter_solo(core, "ranked", 1050) == {}
    assert enter_solo(core, "ranked", 1100) == {}


def test_a_party_plays_on_one_team_under_the_range_rule() -> None:
    core = new_core()
    party = enter_party(core, "teams", 1000, 1040)
    assert enter_solo(core, "teams", 1200) == {}
    assert enter_solo(core, "teams", 1050) == {}
    (session,) = enter_solo(core, "teams", 1080).values()
    assert party < session


@settings(max_examples=120, deadline=None)
@given(
    policy=st.sampled_from(["widening", "teams"]),
    arrivals=st.lists(
        st.tuples(
            st.lists(st.integers(min_value=900, max_value=1300), min_size=1, max_size=2),
            st.integers(min_value=0, max_value=700),
        ),
        min_size=1,
        max_size=30,
    ),
)
def test_every_group_holds_the_rule_for_every_two_members(
    policy: str, arrivals: list[tuple[list[int], int]]
) -> None:
    """Any arrivals of solos and parties of two (and time passing between them): every
    member of every group formed is within the smaller of its and the other's entry's
    window of every other member, and a party is never split."""
    core = new_core()
    now = 0
    entered: dict[str, int] = {}  # client -> when its entry entered
    parties: list[set[str]] = []
    for ratings, wait in arrivals:
        now += wait
        out = core.expire(now)
        members = [connect(core, rating=rating) for rating in ratings]
        request = EnterPool(policy=policy)
        if len(members) > 1:
            request = EnterPool(policy=policy, party_id=party_of(core, *members).party_id)
            parties.append(set(members))
        entered.update(dict.fromkeys(members, now))
        out += core.enter(members[0], PROJECT, request, now)[1]
        for session in sessions(out).values():
            for party in parties:
                assert party <= session or not party & session
            for a, b in combinations(sorted(session), 2):
                reach = min(WIDEN.window(now - entered[a]), WIDEN.window(now - entered[b]))
                rating_a = core.clients[a].attributes["rating"]
                rating_b = core.clients[b].attributes["rating"]
                assert isinstance(rating_a, int)
                assert isinstance(rating_b, int)
                assert abs(rating_a - rating_b) <= reach
