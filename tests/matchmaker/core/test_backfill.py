"""Backfill in the core: a formed session fills open seats from its pool, under its rules."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.config import Limits
from matchmaker.core import Delivery, EnterPool, Matchmaker, events
from matchmaker.core.commands import Backfill
from matchmaker.core.sessions import UNTOLD_CAP
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, RangeRule, Widen

SQUAD = MatchmakingPolicy(
    name="squad", mode="auto", group_size=4, default=True, filter={"region": "@self"}
)
LOBBY = MatchmakingPolicy(name="lobby", mode="claim", group_size=4)
WIDE = RangeRule(within=100, widen=Widen(every_ms=5000, by=50, max=400))
RANKED = MatchmakingPolicy(name="ranked", mode="auto", group_size=3, filter={"rating": WIDE})
PROJECT = Project(id="p", policies=(SQUAD, LOBBY, RANKED))


def connect(core: Matchmaker, region: str = "eu", rating: int = 1000) -> str:
    return core.connect("p", None, {"region": region, "rating": rating}).client_id


def enter(core: Matchmaker, client_id: str, now_ms: int = 0, **fields: Any) -> list[Delivery]:
    _, out = core.enter(client_id, PROJECT, EnterPool(**fields), now_ms)
    return out


def of(out: list[Delivery], kind: type) -> list[tuple[list[str], Any]]:
    return [(list(recipients), event) for recipients, event in out if type(event) is kind]


def squad(core: Matchmaker, region: str = "eu") -> tuple[list[str], str]:
    """Four players of ``region`` matched into one session; their ids and the session's."""
    players = [connect(core, region) for _ in range(4)]
    out: list[Delivery] = []
    for player in players:
        out = enter(core, player)
    (_, created), *_ = of(out, events.SessionFormed)
    return players, created.session_id


def leave(core: Matchmaker, client_id: str, session_id: str) -> None:
    core.leave_session(client_id, session_id, 0)


def test_open_seats_fill_at_once_from_the_oldest_waiting_entries_of_the_bucket() -> None:
    core = Matchmaker(Limits(), node="t")
    players, session_id = squad(core)
    leave(core, players[3], session_id)
    leave(core, players[2], session_id)
    us = connect(core, "us")
    enter(core, us)  # another bucket: not a candidate
    first, second = connect(core), connect(core)
    enter(core, first, 1)
    enter(core, second, 2)
    answer, out = core.backfill(players[0], Backfill(session_id, 1), 3)
    assert (answer.filled, answer.pending) == ([first], 0)
    joined = of(out, events.MemberJoined)
    assert joined == [([players[0], players[1]], joined[0][1])]
    assert joined[0][1].client_id == first
    ((recipients, created),) = of(out, events.SessionFormed)
    assert recipients == [first]
    assert (created.session_id, created.you, created.pool) == (session_id, first, "squad")
    assert {m.client_id for m in created.members} == {players[0], players[1], first}
    assert core.clients[first].entries == {}
    assert set(core.sessions[session_id].members) == {players[0], players[1], first}


def test_seats_still_open_are_filled_by_the_next_arrivals_before_new_groups() -> None:
    core = Matchmaker(Limits(), node="t")
    players, session_id = squad(core)
    for gone in players[1:]:
        leave(core, gone, session_id)
    answer, out = core.backfill(players[0], Backfill(session_id, 2), 0)
    assert (answer.filled, answer.pending, out) == ([], 2, [])
    arrivals = [connect(core) for _ in range(5)]
    seated = [of(enter(core, arrival), events.MemberJoined) for arrival in arrivals]
    assert [len(s) for s in seated] == [1, 1, 0, 0, 0]  # two seats, then waiting as usual
    assert set(core.sessions[session_id].members) == {players[0], *arrivals[:2]}
    assert len(core.backfills) == 0  # filled: the request is done
    assert core.pools[next(iter(core.pools))].size == 3


def test_an_opening_ends_with_its_session_and_seats_zero_cancels_it() -> None:
    core = Matchmaker(Limits(), node="t")
    players, session_id = squad(core)
    leave(core, players[3], session_id)
    core.backfill(players[0], Backfill(session_id, 1), 0)
    answer, _ = core.backfill(players[1], Backfill(session_id, 0), 0)
    assert (answer.filled, answer.pending, len(core.backfills)) == ([], 0, 0)
    core.backfill(players[0], Backfill(session_id, 1), 0)
    for player in players[:3]:
        leave(core, player, session_id)
    assert len(core.backfills) == 0
    late = connect(core)
    assert of(enter(core, late), events.MemberJoined) == []


def test_a_member_waiting_in_the_pool_is_not_seated_twice() -> None:
    core = Matchmaker(Limits(), node="t")
    players, session_id = squad(core)
    leave(core, players[3], session_id)
    enter(core, players[0])  # a member queues again
    answer, _ = core.backfill(players[1], Backfill(session_id, 1), 0)
    assert (answer.filled, answer.pending) == ([], 1)
    newcomer = connect(core)
    assert len(of(enter(core, newcomer), events.MemberJoined)) == 1
    assert newcomer in core.sessions[session_id].members


def test_the_newcomer_resumed_into_its_bucket_takes_a_seat() -> None:
    core = Matchmaker(Limits(resume_grace_ms=10_000), node="t")
    players, session_id = squad(core)
    leave(core, players[3], session_id)
    away = connect(core)
    enter(core, away)
    core.suspend(away)
    answer, _ = core.backfill(players[0], Backfill(session_id, 1), 0)
    assert (answer.filled, answer.pending) == ([], 1)  # paused entries are not candidates
    out = core.resume(away, 10)
    assert away in core.sessions[session_id].members
    assert of(out, events.SessionFormed)[0][0] == [away]


@pytest.mark.parametrize(("seats", "open_seats"), [(2, 1), (-1, 1)])
def test_more_seats_than_are_open_is_backfill_invalid(seats: int, open_seats: int) -> None:
    core = Matchmaker(Limits(), node="t")
    players, session_id = squad(core)
    leave(core, players[3], session_id)
    with pytest.raises(MatchmakerError) as caught:
        core.backfill(players[0], Backfill(session_id, seats), 0)
    assert caught.value.code == "backfill.invalid"
    assert caught.value.details == {"session_id": session_id, "open_seats": open_seats}


def test_rooms_and_other_modes_are_backfill_unsupported_and_only_members_ask() -> None:
    core = Matchmaker(Limits(), node="t")
    host = connect(core)
    joined, _ = core.join_session(host, PROJECT, "room", True, None)
    with pytest.raises(MatchmakerError) as caught:
        core.backfill(host, Backfill(joined.session_id, 1), 0)
    assert caught.value.code == "backfill.unsupported"
    _, session_id = squad(core)
    with pytest.raises(MatchmakerError) as caught:
        core.backfill(host, Backfill(session_id, 1), 0)
    assert caught.value.code == "session.not_member"
    with pytest.raises(MatchmakerError) as caught:
        core.backfill(host, Backfill("s-nope", 1), 0)
    assert caught.value.code == "session.not_found"


def test_a_session_of_a_mode_where_clients_choose_is_backfill_unsupported() -> None:
    core = Matchmaker(Limits(), node="t")
    a, b = connect(core), connect(core)
    enter(core, a, policy="lobby")
    enter(core, b, policy="lobby")
    group = [core.clients[a].entries["lobby"], core.clients[b].entries["lobby"]]
    session_id = core.form(group, [])
    with pytest.raises(MatchmakerError) as caught:
        core.backfill(a, Backfill(session_id, 1), 0)
    assert caught.value.code == "backfill.unsupported"


def ranked(core: Matchmaker) -> tuple[list[str], str]:
    """Three players rated 1000, 1050 and 1100 matched in the ranked pool; the last
    leaves. Their ids and the session's."""
    players = [connect(core, rating=rating) for rating in (1000, 1050, 1100)]
    out: list[Delivery] = []
    for player in players:
        out = enter(core, player, policy="ranked")
    (_, created), *_ = of(out, events.SessionFormed)
    leave(core, players[2], created.session_id)
    return players, created.session_id


def test_a_range_rule_fills_seats_only_with_entries_every_member_accepts() -> None:
    core = Matchmaker(Limits(), node="t")
    players, session_id = ranked(core)
    far, near = connect(core, rating=1200), connect(core, rating=1090)
    enter(core, far, 1, policy="ranked")  # older, but 200 from the member rated 1000
    enter(core, near, 2, policy="ranked")
    answer, _ = core.backfill(players[0], Backfill(session_id, 1), 3)
    assert (answer.filled, answer.pending) == ([near], 0)
    assert core.clients[far].entries  # still waiting


def test_an_open_seat_under_a_range_rule_skips_newcomers_out_of_range() -> None:
    core = Matchmaker(Limits(), node="t")
    players, session_id = ranked(core)
    answer, _ = core.backfill(players[1], Backfill(session_id, 1), 0)
    assert (answer.filled, answer.pending) == ([], 1)
    far = connect(core, rating=1140)  # 50 from one member, 140 from the other
    assert of(enter(core, far, 1, policy="ranked"), events.MemberJoined) == []
    near = connect(core, rating=960)
    assert len(of(enter(core, near, 2, policy="ranked"), events.MemberJoined)) == 1
    assert set(core.sessions[session_id].members) == {*players[:2], near}
    assert core.clients[far].entries


def test_an_open_seat_is_taken_once_the_windows_widen_enough() -> None:
    core = Matchmaker(Limits(), node="t")
    players, session_id = ranked(core)
    core.backfill(players[0], Backfill(session_id, 1), 0)
    late = connect(core, rating=1160)  # 160 from the member rated 1000
    enter(core, late, 0, policy="ranked")
    assert of(core.expire(5000), events.MemberJoined) == []  # windows of 150
    assert len(of(core.expire(10_000), events.MemberJoined)) == 1  # windows of 200
    assert late in core.sessions[session_id].members
    assert len(core.backfills) == 0


def test_an_open_seat_widens_on_its_own_timer() -> None:
    """The newcomer's window is at its max already: only the members' widening seats it."""
    core = Matchmaker(Limits(entry_ttl_ms=100_000), node="t")
    players, session_id = ranked(core)
    late = connect(core, rating=1160)
    enter(core, late, 0, policy="ranked")
    core.expire(30_000)  # its window reached 400
    answer, _ = core.backfill(players[0], Backfill(session_id, 1), 30_000)
    assert (answer.filled, answer.pending) == ([], 1)  # the members' window: 100
    assert of(core.expire(35_000), events.MemberJoined) == []  # 150
    assert len(of(core.expire(40_000), events.MemberJoined)) == 1  # 200
    assert late in core.sessions[session_id].members
    assert len(core.backfills) == 0


def test_a_replaced_or_cancelled_opening_forgets_its_timer() -> None:
    core = Matchmaker(Limits(entry_ttl_ms=100_000), node="t")
    players, session_id = ranked(core)
    core.backfill(players[0], Backfill(session_id, 1), 0)
    core.backfill(players[1], Backfill(session_id, 0), 1)
    late = connect(core, rating=1160)
    enter(core, late, 2, policy="ranked")
    assert of(core.expire(60_000), events.MemberJoined) == []
    assert core.clients[late].entries


def test_a_member_leaving_tries_the_open_seats_again() -> None:
    """The seat's window is the members' that stay: an entry out of range of the one who
    left takes the seat as soon as it leaves (no widening needed)."""
    core = Matchmaker(Limits(), node="t")
    players, session_id = ranked(core)  # 1000 and 1050 stay
    answer, _ = core.backfill(players[0], Backfill(session_id, 1), 0)
    assert (answer.filled, answer.pending) == ([], 1)
    late = connect(core, rating=1120)  # 120 from the member rated 1000
    assert of(enter(core, late, 0, policy="ranked"), events.MemberJoined) == []
    out = core.leave_session(players[0], session_id, 0)
    assert of(out, events.MemberJoined) == [
        ([players[1]], events.MemberJoined(session_id, late, None, None))
    ]
    assert set(core.sessions[session_id].members) == {players[1], late}
    assert len(core.backfills) == 0


def test_a_newcomer_not_yet_told_hears_later_events_in_order_and_keeps_at_most_the_cap() -> None:
    """Seated by another cluster member's offer, a newcomer's session events wait for its
    home's word (``told``); if that word is lost, what is kept stops at ``UNTOLD_CAP`` and
    the newcomer hears the session at once from then on."""
    core = Matchmaker(Limits(), node="t")
    players, session_id = squad(core)
    leave(core, players[3], session_id)
    newcomer = connect(core)
    session = core.sessions[session_id]
    out: list[Delivery] = []
    core.admit(core.clients[newcomer], None, session, out, relayed=True)
    recipients, _ = core.relay(players[0], session_id, None, {"n": 0})
    assert newcomer not in recipients
    ((told_to, kept),) = core.told(newcomer, session_id)
    assert isinstance(kept, events.MessageRelayed)
    assert (list(told_to), kept.data) == ([newcomer], {"n": 0})
    assert core.told(newcomer, session_id) == []
    recipients, _ = core.relay(players[0], session_id, None, {"n": 1})
    assert newcomer in recipients  # told: at once from now on

    late = connect(core)
    core.admit(core.clients[late], None, session, out, relayed=True)
    for n in range(UNTOLD_CAP):
        recipients, _ = core.relay(players[0], session_id, None, {"n": n})
        assert late not in recipients
    recipients, _ = core.relay(players[0], session_id, None, {"n": UNTOLD_CAP})
    assert late in recipients
    assert session.members[late].untold is None
    assert core.told(late, session_id) == []
