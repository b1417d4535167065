"""Range rules with widening and variable group sizes in auto pools, driven on the core."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.config import Limits
from matchmaker.core import Delivery, EnterPool, Matchmaker, events
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, RangeRule, Widen

WIDE = RangeRule(within=100, widen=Widen(every_ms=5000, by=50, max=400))
POLICIES = (
    MatchmakingPolicy(name="duel", mode="auto", group_size=2, filter={"rating": WIDE}),
    MatchmakingPolicy(name="fixed", mode="auto", group_size=2, filter={"rating": RangeRule(10)}),
    MatchmakingPolicy(name="trio", mode="auto", group_size=3, filter={"rating": RangeRule(100)}),
    MatchmakingPolicy(
        name="regional",
        mode="auto",
        group_size=2,
        filter={"region": "@self", "queue": "ranked", "rating": WIDE},
    ),
    MatchmakingPolicy(
        name="lobby", mode="auto", group_size=4, min_group_size=2, fill_timeout_ms=1000
    ),
    MatchmakingPolicy(
        name="squad",
        mode="auto",
        group_size=4,
        min_group_size=2,
        fill_timeout_ms=1000,
        filter={"rating": RangeRule(100)},
    ),
)
PROJECT = Project(id="p", policies=POLICIES)


def new_core() -> Matchmaker:
    return Matchmaker(Limits(max_sessions_per_client=100), node="t")


def connect(core: Matchmaker, rating: Any = 1000, **attributes: Any) -> str:
    attributes = {"region": "eu", "queue": "ranked", "rating": rating, **attributes}
    return core.connect("p", None, attributes).client_id


def enter(core: Matchmaker, client: str, policy: str, now: int = 0) -> list[Delivery]:
    return core.enter(client, PROJECT, EnterPool(policy=policy), now)[1]


def groups(out: list[Delivery]) -> list[set[str]]:
    """The members of each session formed, once per session."""
    seen: dict[str, set[str]] = {}
    for _, event in out:
        if isinstance(event, events.SessionFormed):
            seen[event.session_id] = {m.client_id for m in event.members}
    return list(seen.values())


def waiting(core: Matchmaker, policy: str, ratings: list[int], now: int = 0) -> list[str]:
    """Clients with these ratings, entered at ``now``, none matched."""
    clients = [connect(core, rating) for rating in ratings]
    for client in clients:
        assert groups(enter(core, client, policy, now)) == []
    return clients


def test_entries_within_the_window_match_at_once() -> None:
    core = new_core()
    (a,) = waiting(core, "duel", [1000])
    b = connect(core, 1100)
    assert groups(enter(core, b, "duel")) == [{a, b}]


def test_entries_outside_the_window_wait_until_both_windows_widen() -> None:
    core = new_core()
    a, b = waiting(core, "duel", [1000, 1150])
    assert groups(core.expire(4999)) == []
    assert groups(core.expire(5000)) == [{a, b}]


def test_both_entries_must_accept_each_other_at_their_own_windows() -> None:
    core = new_core()
    (a,) = waiting(core, "duel", [1000])
    # a's window is 200 after 10 s; a newcomer 150 away still has 100.
    (b,) = waiting(core, "duel", [1150], now=10_000)
    assert groups(core.expire(14_999)) == []
    assert groups(core.expire(15_000)) == [{a, b}]


def test_a_window_stops_at_its_max() -> None:
    core = new_core()
    waiting(core, "duel", [1000, 1401])
    assert groups(core.expire(60_000)) == []
    assert core.pools  # both still wait


def test_a_fixed_window_never_widens() -> None:
    core = new_core()
    waiting(core, "fixed", [1000, 1011])
    assert groups(core.expire(600_000 - 1)) == []


def test_the_closest_acceptable_entry_is_chosen() -> None:
    core = new_core()
    far, near = waiting(core, "duel", [1090, 950])
    c = connect(core, 1000)
    assert groups(enter(core, c, "duel")) == [{near, c}]
    assert core.entry_of(far, next(iter(core.pools.values()))) is not None


def test_a_group_must_be_pairwise_acceptable() -> None:
    core = new_core()
    low, high = waiting(core, "trio", [0, 150])
    middle = connect(core, 75)
    assert groups(enter(core, middle, "trio")) == []  # low and high are 150 apart
    last = connect(core, 100)
    assert groups(enter(core, last, "trio")) == [{middle, high, last}]
    assert core.clients[low].entries


def test_range_rules_combine_with_literals_and_self() -> None:
    core = new_core()
    eu = connect(core, 1000)
    us = connect(core, 1000, region="us")
    assert groups(enter(core, eu, "regional")) == []
    assert groups(enter(core, us, "regional")) == []
    casual = connect(core, 1000, queue="casual")
    with pytest.raises(MatchmakerError) as caught:
        enter(core, casual, "regional")
    assert caught.value.code == "pool.filter_mismatch"
    eu2 = connect(core, 1050)
    assert groups(enter(core, eu2, "regional")) == [{eu, eu2}]


@pytest.mark.parametrize(
    ("attributes", "code"),
    [({"rating": "high"}, "pool.filter_mismatch"), ({"rating": True}, "pool.filter_mismatch")],
)
def test_a_range_needs_a_number(attributes: dict[str, Any], code: str) -> None:
    core = new_core()
    client = core.connect("p", None, attributes).client_id
    with pytest.raises(MatchmakerError) as caught:
        enter(core, client, "duel")
    assert caught.value.code == code
    assert caught.value.details == {
        "attribute": "rating",
        "expected": "number",
        "actual": attributes["rating"],
    }


def test_a_range_attribute_must_be_declared() -> None:
    core = new_core()
    client = core.connect("p", None, {}).client_id
    with pytest.raises(MatchmakerError) as caught:
        enter(core, client, "duel")
    assert caught.value.code == "pool.attribute_missing"


def test_a_paused_entry_is_not_matched_by_its_widening_and_is_tried_on_resume() -> None:
    core = new_core()
    a, b = waiting(core, "duel", [1000, 1150])
    core.suspend(a)
    assert groups(core.expire(5000)) == []  # b widened, a is away
    assert groups(core.resume(a, 5100)) == [{a, b}]


def test_only_the_widening_entry_is_tried() -> None:
    """One widen timer per entry, at its own next step: others' windows are not looked at."""
    core = new_core()
    waiting(core, "duel", [0, 1000, 2000, 3000])
    (pool,) = core.pools.values()
    looked: list[str] = []
    original = pool.mode._candidates  # type: ignore[attr-defined]

    def spy(trigger: Any, now_ms: int) -> Any:
        looked.append(trigger.client.client_id)
        return original(trigger, now_ms)

    pool.mode._candidates = spy  # type: ignore[attr-defined]
    (late,) = waiting(core, "duel", [5000], now=2500)
    looked.clear()
    core.expire(5000)  # the first four widen; the late one does not
    assert len(looked) == 4
    assert core.clients[late].client_id not in looked
    looked.clear()
    core.expire(7500)
    assert looked == [late]


def test_a_full_group_forms_at_once_and_a_smaller_one_after_the_fill_timeout() -> None:
    core = new_core()
    a, b, c = waiting(core, "lobby", [0, 0, 0])
    d = connect(core)
    assert groups(enter(core, d, "lobby", 10)) == [{a, b, c, d}]
    e, f = waiting(core, "lobby", [0, 0], now=100)
    assert groups(core.expire(1099)) == []
    assert groups(core.expire(1100)) == [{e, f}]


def test_the_fill_timeout_counts_from_the_oldest_entry() -> None:
    core = new_core()
    (a,) = waiting(core, "lobby", [0])
    assert groups(core.expire(1500)) == []  # alone: below minGroupSize
    b = connect(core)
    assert groups(enter(core, b, "lobby", 1600)) == [{a, b}]


def test_the_fill_timeout_applies_to_ranges() -> None:
    core = new_core()
    a, b, far = waiting(core, "squad", [1000, 1050, 2000])
    assert groups(core.expire(999)) == []
    assert groups(core.expire(1000)) == [{a, b}]
    assert core.clients[far].entries


def test_a_policy_fixes_the_group_sizes() -> None:
    core = new_core()
    client = connect(core)
    with pytest.raises(MatchmakerError) as caught:
        core.enter(client, PROJECT, EnterPool(policy="lobby", min_group_size=2), 0)
    assert caught.value.code == "pool.conflict"


def test_an_ad_hoc_pool_takes_group_sizes_and_ranges() -> None:
    core = new_core()
    a, b = connect(core, 1000), connect(core, 1040)
    fields: dict[str, Any] = {
        "pool": "mine",
        "create": True,
        "mode": "auto",
        "group_size": 3,
        "min_group_size": 2,
        "fill_timeout_ms": 500,
        "filter": {"rating": RangeRule(50)},
    }
    assert core.enter(a, PROJECT, EnterPool(**fields), 0)[1] == []
    with pytest.raises(MatchmakerError) as caught:
        core.enter(b, PROJECT, EnterPool(pool="mine", min_group_size=3), 0)
    assert caught.value.code == "pool.conflict"
    assert (caught.value.details or {})["minGroupSize"] == 2
    assert core.enter(b, PROJECT, EnterPool(pool="mine"), 100)[1] == []
    assert groups(core.expire(500)) == [{a, b}]


def test_changing_a_group_size_closes_the_old_pool() -> None:
    core = new_core()
    (a,) = waiting(core, "lobby", [0])
    changed = tuple(
        MatchmakingPolicy(
            name="lobby", mode="auto", group_size=4, min_group_size=3, fill_timeout_ms=1000
        )
        if p.name == "lobby"
        else p
        for p in POLICIES
    )
    out = core.close_changed_policies("p", Project(id="p", policies=changed))
    assert [type(event).__name__ for _, event in out] == ["EntryPoolClosed"]
    assert not core.clients[a].entries


def test_a_resumed_entry_takes_back_its_place_for_the_fill_timeout() -> None:
    core = new_core()
    (a,) = waiting(core, "lobby", [0])
    (b,) = waiting(core, "lobby", [0], now=10)
    core.suspend(a)
    (c,) = waiting(core, "lobby", [0], now=30)
    assert groups(core.resume(a, 40)) == []
    assert groups(core.expire(1000)) == [{a, b, c}]  # a is the oldest again
