"""Teams, balance and regions in auto pools, driven on the core."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchmaker.config import Limits
from matchmaker.core import Delivery, EnterPool, Matchmaker, events
from matchmaker.core.backfill import SeatOffered, mirror_origin
from matchmaker.core.commands import Backfill, CreateParty, JoinParty
from matchmaker.core.modes.split import best_split, imbalance, seat_parties
from matchmaker.core.parties import PartyInfo
from matchmaker.core.pools import PoolSpec
from matchmaker.errors import MatchmakerError
from matchmaker.model import (
    Balance,
    FilterValue,
    MatchmakingPolicy,
    Project,
    RangeRule,
    Regions,
    Team,
    Widen,
)

TWO_V_TWO = (Team("red", 2), Team("blue", 2))
POLICIES = (
    MatchmakingPolicy(
        name="duo",
        mode="auto",
        group_size=4,
        teams=TWO_V_TWO,
        balance=Balance("rating", 50),
    ),
    MatchmakingPolicy(name="plain", mode="auto", group_size=4, teams=TWO_V_TWO),
    MatchmakingPolicy(
        name="widening",
        mode="auto",
        group_size=4,
        teams=TWO_V_TWO,
        balance=Balance("rating", 10, Widen(every_ms=1000, by=100, max=1000)),
    ),
    MatchmakingPolicy(name="near", mode="auto", group_size=2, regions=Regions(max_latency_ms=80)),
    MatchmakingPolicy(
        name="far",
        mode="auto",
        group_size=2,
        regions=Regions(80, Widen(every_ms=1000, by=50, max=200)),
    ),
    MatchmakingPolicy(
        name="ranked",
        mode="auto",
        group_size=4,
        teams=TWO_V_TWO,
        balance=Balance("rating", 50),
        regions=Regions(80),
        filter={"rating": RangeRule(1500)},
    ),
    MatchmakingPolicy(
        name="trio", mode="auto", group_size=6, teams=(Team("red", 3), Team("blue", 3))
    ),
    MatchmakingPolicy(name="near3", mode="auto", group_size=3, regions=Regions(max_latency_ms=80)),
)
PROJECT = Project(id="p", policies=POLICIES)


def new_core() -> Matchmaker:
    return Matchmaker(Limits(max_sessions_per_client=100), node="t")


def connect(core: Matchmaker, rating: Any = 1000) -> str:
    return core.connect("p", None, {"rating": rating}).client_id


def enter(
    core: Matchmaker, client: str, policy: str, now: int = 0, **fields: Any
) -> list[Delivery]:
    return core.enter(client, PROJECT, EnterPool(policy=policy, **fields), now)[1]


def formed(out: list[Delivery]) -> list[events.SessionFormed]:
    """One ``session.created`` per session formed."""
    seen: dict[str, events.SessionFormed] = {}
    for _, event in out:
        if isinstance(event, events.SessionFormed):
            seen.setdefault(event.session_id, event)
    return list(seen.values())


def team_means(core: Matchmaker, teams: dict[str, list[str]]) -> list[float]:
    means = []
    for members in teams.values():
        ratings = [core.clients[c].attributes["rating"] for c in members]
        means.append(sum(ratings) / len(ratings))  # type: ignore[arg-type]
    return means


def test_a_2v2_is_split_so_the_team_means_differ_by_at_most_max_difference() -> None:
    core = new_core()
    players = [connect(core, r) for r in (1000, 1010, 2000, 2010)]
    out: list[Delivery] = []
    for player in players:
        out = enter(core, player, "duo")
    (created,) = formed(out)
    assert created.teams is not None
    assert set(created.teams) == {"red", "blue"}
    assert sorted(c for team in created.teams.values() for c in team) == sorted(players)
    low, high = team_means(core, created.teams)
    assert abs(low - high) <= 50
    assert all(len(team) == 2 for team in created.teams.values())


def test_every_member_sees_the_same_teams() -> None:
    core = new_core()
    out: list[Delivery] = []
    for rating in (1000, 1010, 2000, 2010):
        out += enter(core, connect(core, rating), "duo")
    created = [e for _, e in out if isinstance(e, events.SessionFormed)]
    assert len(created) == 4
    assert all(e.teams == created[0].teams for e in created)


def test_teams_without_balance_fill_in_arrival_order() -> None:
    core = new_core()
    players = [connect(core, r) for r in (1, 2, 3, 4)]
    out: list[Delivery] = []
    for player in players:
        out = enter(core, player, "plain")
    (created,) = formed(out)
    assert created.teams == {"red": players[:2], "blue": players[2:]}


def test_an_unbalanceable_group_waits_until_max_difference_widens() -> None:
    core = new_core()
    players = [connect(core, r) for r in (1000, 1000, 1000, 1400)]
    for player in players:
        assert formed(enter(core, player, "widening")) == []
    assert formed(core.expire(999)) == []
    # best split: 1000+1000 vs 1000+1400, a difference of 200: allowed after 2 steps
    assert formed(core.expire(1000)) == []
    (created,) = formed(core.expire(2000))
    assert created.teams is not None


def test_best_split_tries_every_split() -> None:
    teams, difference = best_split([1000, 1010, 2000, 2010], [2, 2])
    assert difference == 0
    assert teams[0] == teams[3]
    assert teams[1] == teams[2]
    assert teams[0] != teams[1]


def test_best_split_drafts_a_large_group() -> None:
    values = [float(v) for v in range(12)]
    teams, difference = best_split(values, [4, 4, 4])
    assert sorted(teams) == [0] * 4 + [1] * 4 + [2] * 4
    assert difference <= 1.0


def test_players_whose_only_near_regions_differ_are_not_matched() -> None:
    core = new_core()
    eu, us, both = connect(core), connect(core), connect(core)
    assert formed(enter(core, eu, "near", latencies={"eu": 30, "us": 150})) == []
    assert formed(enter(core, us, "near", latencies={"eu": 140, "us": 20})) == []
    (created,) = formed(enter(core, both, "near", latencies={"eu": 90, "us": 60}))
    assert {m.client_id for m in created.members} == {us, both}
    assert created.region == "us"


def test_the_region_with_the_lowest_worst_latency_is_chosen() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    enter(core, a, "near", latencies={"eu": 10, "us": 50, "asia": 79})
    (created,) = formed(enter(core, b, "near", latencies={"eu": 70, "us": 40, "asia": 5}))
    assert created.region == "us"


def test_a_region_is_reached_once_max_latency_widens() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    enter(core, a, "far", latencies={"eu": 30})
    assert formed(enter(core, b, "far", latencies={"eu": 120})) == []
    (created,) = formed(core.expire(1000))
    assert created.region == "eu"


def test_an_entry_without_latencies_is_refused_under_regions() -> None:
    core = new_core()
    with pytest.raises(MatchmakerError) as caught:
        enter(core, connect(core), "near")
    assert caught.value.code == "pool.latencies_required"


def test_teams_balance_regions_and_a_range_rule_combine() -> None:
    core = new_core()
    ratings = (1000, 1010, 2000, 2010)
    out: list[Delivery] = []
    far = connect(core, 1500)
    assert formed(enter(core, far, "ranked", latencies={"us": 20})) == []
    for rating in ratings:
        out = enter(core, connect(core, rating), "ranked", latencies={"eu": 40, "us": 100})
    (created,) = formed(out)
    assert created.region == "eu"
    assert created.teams is not None
    assert far not in {m.client_id for m in created.members}
    low, high = team_means(core, created.teams)
    assert abs(low - high) <= 50


def test_backfill_fills_the_team_that_lost_the_member() -> None:
    core = new_core()
    players = [connect(core, r) for r in (1, 2, 3, 4)]
    out: list[Delivery] = []
    for player in players:
        out = enter(core, player, "plain")
    (created,) = formed(out)
    session = created.session_id
    core.leave_session(players[0], session, 0)  # a red player leaves
    core.backfill(players[1], Backfill(session, 1), 0)
    newcomer = connect(core)
    out = enter(core, newcomer, "plain")
    joined = [e for _, e in out if isinstance(e, events.MemberJoined)]
    assert joined
    assert joined[0].team == "red"
    (seated,) = formed(out)
    assert seated.teams == {"red": [players[1], newcomer], "blue": players[2:]}


def test_backfill_seats_only_a_newcomer_who_reaches_the_region() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    enter(core, a, "near", latencies={"eu": 10})
    (created,) = formed(enter(core, b, "near", latencies={"eu": 20}))
    core.leave_session(b, created.session_id, 0)
    core.backfill(a, Backfill(created.session_id, 1), 0)
    far, near = connect(core), connect(core)
    assert formed(enter(core, far, "near", latencies={"us": 10})) == []
    (seated,) = formed(enter(core, near, "near", latencies={"eu": 70}))
    assert seated.session_id == created.session_id
    assert seated.region == "eu"


def test_largest_team_bounds_a_party() -> None:
    spec = PoolSpec.of_policy(POLICIES[0])
    assert spec.largest_team == 2
    assert PoolSpec.of("auto", 5, None).largest_team == 5


def test_an_ad_hoc_pool_takes_teams_and_a_policy_refuses_them() -> None:
    core = new_core()
    teams = [Team("a", 1), Team("b", 1)]
    a, b = connect(core), connect(core)
    core.enter(
        a, PROJECT, EnterPool(pool="x", create=True, mode="auto", group_size=2, teams=teams), 0
    )
    _, out = core.enter(b, PROJECT, EnterPool(pool="x"), 0)
    (created,) = formed(out)
    assert created.teams == {"a": [a], "b": [b]}
    with pytest.raises(MatchmakerError) as caught:
        enter(core, connect(core), "plain", teams=teams)
    assert caught.value.code == "pool.conflict"


def test_a_mirrored_opening_holds_only_a_newcomer_who_reaches_its_region() -> None:
    core = new_core()
    origin = mirror_origin("p", "near", PoolSpec.of_policy(POLICIES[3]), [], policy=True)
    members: list[tuple[str, dict[str, FilterValue]]] = [("cX-1", {"rating": 1000})]
    core.backfills.mirror(
        "sX-1", origin, members, seats=1, opened_ms=0, now_ms=0, out=[], region="eu"
    )
    far, near = connect(core), connect(core)
    assert not [
        e for _, e in enter(core, far, "near", latencies={"us": 10}) if isinstance(e, SeatOffered)
    ]
    offered = [
        e for _, e in enter(core, near, "near", latencies={"eu": 70}) if isinstance(e, SeatOffered)
    ]
    assert [offer.client_id for offer in offered] == [near]


def test_teams_under_a_range_rule_without_balance_fill_by_arrival() -> None:
    core = new_core()
    policy = MatchmakingPolicy(
        name="ranged", mode="auto", group_size=4, teams=TWO_V_TWO, filter={"rating": RangeRule(500)}
    )
    project = Project(id="p", policies=(policy,))
    players = [connect(core, r) for r in (1300, 1000, 1200, 1100)]
    out: list[Delivery] = []
    for player in players:
        out = core.enter(player, project, EnterPool(policy="ranged"), 0)[1]
    (created,) = formed(out)
    assert created.teams == {"red": players[:2], "blue": players[2:]}


def test_regions_take_a_smaller_group_after_the_fill_timeout() -> None:
    core = new_core()
    policy = MatchmakingPolicy(
        name="lobby",
        mode="auto",
        group_size=4,
        min_group_size=2,
        fill_timeout_ms=1000,
        regions=Regions(80),
    )
    project = Project(id="p", policies=(policy,))
    a, b, c = connect(core), connect(core), connect(core)
    for client, latencies in ((a, {"eu": 10}), (b, {"eu": 20}), (c, {"us": 5})):
        request = EnterPool(policy="lobby", latencies=latencies)
        assert formed(core.enter(client, project, request, 0)[1]) == []
    (created,) = formed(core.expire(1000))
    assert {m.client_id for m in created.members} == {a, b}
    assert created.region == "eu"
    assert created.teams is None


# -- parties in teams pools ----------------------------------------------------------------


def party_of(core: Matchmaker, leader: str, *others: str) -> str:
    """A party led by ``leader`` that ``others`` joined by its code; its id."""
    info, _ = core.party(leader, CreateParty(), 0)
    assert isinstance(info, PartyInfo)
    for other in others:
        core.party(other, JoinParty(info.code), 0)
    return info.party_id


def test_a_party_of_two_and_two_solos_form_a_2v2_with_the_party_on_one_team() -> None:
    """Balanced by member, with the party kept together: 1000+2000 against 1010+2010 (a
    difference of 10), though 1000+2010 against 2000+1010 would differ by 0."""
    core = new_core()
    a, b = connect(core, 1000), connect(core, 2000)
    s1, s2 = connect(core, 1010), connect(core, 2010)
    party = party_of(core, a, b)
    assert formed(enter(core, s1, "duo")) == []
    assert formed(enter(core, a, "duo", 1, party_id=party)) == []
    out = enter(core, s2, "duo", 2)
    (created,) = formed(out)
    assert created.teams is not None
    assert sorted(map(sorted, created.teams.values())) == sorted([sorted([a, b]), sorted([s1, s2])])
    low, high = team_means(core, created.teams)
    assert abs(low - high) == 10
    assert {m.client_id for m in created.members} == {a, b, s1, s2}
    assert core.pools == {}


def test_a_party_that_no_split_keeps_balanced_waits() -> None:
    core = new_core()
    a, b = connect(core, 1000), connect(core, 1010)
    party = party_of(core, a, b)
    enter(core, a, "duo", party_id=party)
    enter(core, connect(core, 2000), "duo")
    # Together the party is 1005 against the solos' 2005: never within 50.
    assert formed(enter(core, connect(core, 2010), "duo")) == []


def test_without_balance_a_party_takes_the_first_team_with_room() -> None:
    core = new_core()
    s1, a, b, s2 = (connect(core) for _ in range(4))
    party = party_of(core, a, b)
    enter(core, s1, "plain")
    enter(core, a, "plain", 1, party_id=party)
    (created,) = formed(enter(core, s2, "plain", 2))
    assert created.teams == {"red": [s1, s2], "blue": [a, b]}


def test_parties_that_cannot_all_be_seated_whole_wait() -> None:
    """3v3: three parties of two never split into teams of three; two solos complete two
    of them, each party with a solo."""
    core = new_core()
    parties = []
    for _ in range(3):
        leader, member = connect(core), connect(core)
        parties.append((leader, member))
        assert formed(enter(core, leader, "trio", party_id=party_of(core, leader, member))) == []
    assert formed(enter(core, connect(core), "trio")) == []
    (created,) = formed(enter(core, connect(core), "trio"))
    assert created.teams is not None
    for team in created.teams.values():
        assert len(team) == 3
        assert any(set(pair) <= set(team) for pair in parties)


def test_a_party_larger_than_the_largest_team_is_refused() -> None:
    core = new_core()
    a, b, c = connect(core), connect(core), connect(core)
    party = party_of(core, a, b, c)
    with pytest.raises(MatchmakerError) as refused:
        enter(core, a, "plain", party_id=party)
    assert refused.value.code == "party.too_large"
    assert refused.value.details == {"party_id": party, "limit": 2}
    assert core.pools == {}


def test_a_party_in_a_regions_pool_plays_where_its_leader_measured() -> None:
    core = new_core()
    a, b, solo = connect(core), connect(core), connect(core)
    party = party_of(core, a, b)
    enter(core, solo, "near3", latencies={"eu": 30})
    enter(core, connect(core), "near3", latencies={"us": 30})
    (created,) = formed(enter(core, a, "near3", 1, party_id=party, latencies={"eu": 40}))
    assert {m.client_id for m in created.members} == {a, b, solo}
    assert created.region == "eu"


def test_a_backfill_seats_no_party_in_a_teams_pool() -> None:
    core = new_core()
    players = [connect(core) for _ in range(4)]
    for player in players:
        out = enter(core, player, "plain")
    (created,) = formed(out)
    assert created.teams is not None
    red = list(created.teams["red"])
    for player in red:
        core.leave_session(player, created.session_id, 1)
    a, b = connect(core), connect(core)
    enter(core, a, "plain", 2, party_id=party_of(core, a, b))
    keep = list(created.teams["blue"])
    core.backfill(keep[0], Backfill(created.session_id, 2), 3)
    assert set(core.sessions[created.session_id].members) == set(keep)
    assert set(core.clients[a].entries) == {"plain"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=2, max_size=3), st.data())
def test_seat_parties_keeps_parties_whole_and_is_the_most_balanced(
    sizes: list[int], data: st.DataObject
) -> None:
    """Any entries of 1-3 seats that make the group (teams of at most 3: every split is
    tried): it returns the most balanced split that seats each whole, or ``None``."""
    seats: list[int] = []
    while sum(seats) < sum(sizes):
        seats.append(data.draw(st.integers(1, min(3, sum(sizes) - sum(seats)))))
    values = data.draw(st.lists(st.integers(0, 100), min_size=sum(seats), max_size=sum(seats)))
    found = seat_parties(seats, [float(v) for v in values], sizes)
    every = [
        teams
        for teams in itertools.product(range(len(sizes)), repeat=len(seats))
        if all(
            sum(n for n, t in zip(seats, teams, strict=True) if t == team) == size
            for team, size in enumerate(sizes)
        )
    ]
    if not every:
        assert found is None
        return
    assert found is not None
    teams, difference = found
    assert tuple(teams) in every

    def score(teams: Sequence[int]) -> float:
        members = [t for t, n in zip(teams, seats, strict=True) for _ in range(n)]
        return imbalance([float(v) for v in values], members, len(sizes))

    assert difference == score(teams) == min(score(t) for t in every)


def test_a_drafted_split_keeps_parties_whole() -> None:
    """4v4v4 has more splits than are tried: the draft seats the largest parties first."""
    seats = [3, 1, 2, 2, 3, 1]
    values = [float(v) for v in range(12)]
    found = seat_parties(seats, values, [4, 4, 4])
    assert found is not None
    teams, _ = found
    for team in range(3):
        assert sum(n for n, t in zip(seats, teams, strict=True) if t == team) == 4
