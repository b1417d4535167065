from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from matchmaker.config import Limits
from matchmaker.core import Delivery, EnterPool, Matchmaker, events
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project


def enter_data(**fields: Any) -> EnterPool:
    """A ``pool.enter`` command."""
    return EnterPool(**fields)


# The wire tag of each core event (the frame the shell turns it into).
TAGS: dict[type, str] = {
    events.SessionFormed: "session.created",
    events.MessageRelayed: "session.message",
    events.MemberJoined: "session.member_joined",
    events.MemberLeft: "session.member_left",
    events.EntryWithdrawn: "pool.withdrawn",
    events.EntryExpired: "pool.expired",
    events.EntryPoolClosed: "pool.closed",
}


def by_type(deliveries: list[Delivery]) -> dict[str, list[tuple[list[str], Any]]]:
    """Deliveries grouped by event type, each as ``(recipients, event)``."""
    grouped: dict[str, list[tuple[list[str], Any]]] = {}
    for recipients, event in deliveries:
        grouped.setdefault(TAGS[type(event)], []).append((list(recipients), event))
    return grouped


def new_core(**limits: Any) -> Matchmaker:
    return Matchmaker(Limits(**limits), node="t")


DUEL = MatchmakingPolicy(name="duel", mode="auto", group_size=2, default=True)
REGIONAL = MatchmakingPolicy(name="regional", mode="auto", group_size=2, filter={"region": "@self"})
SOLO = MatchmakingPolicy(name="solo", mode="auto", group_size=1)
CLAIM = MatchmakingPolicy(name="lobby", mode="claim", group_size=2)
PROJECT = Project(id="p", policies=(DUEL, REGIONAL, SOLO, CLAIM))


def connect(core: Matchmaker, **attributes: str) -> str:
    return core.connect("p", None, dict(attributes)).client_id


def test_auto_pairs_the_two_oldest_at_once() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    entered, out = core.enter(a, PROJECT, enter_data(), now_ms=0)
    assert (entered.pool, entered.mode, entered.group_size) == ("duel", "auto", 2)
    assert out == []
    _, out = core.enter(b, PROJECT, enter_data(), now_ms=1)
    created = by_type(out)["session.created"]
    assert [recipients for recipients, _ in created] == [[a], [b]]
    assert {m.client_id for m in created[0][1].members} == {a, b}
    assert created[1][1].you == b
    assert created[0][1].pool == "duel"
    assert core.pools == {}


def test_group_size_one_forms_a_session_on_entry() -> None:
    core = new_core()
    a = connect(core)
    _, out = core.enter(a, PROJECT, enter_data(policy="solo"), now_ms=0)
    assert [r for r, _ in by_type(out)["session.created"]] == [[a]]


def test_self_buckets_never_mix() -> None:
    core = new_core()
    eu, us, eu2 = connect(core, region="eu"), connect(core, region="us"), connect(core, region="eu")
    assert core.enter(eu, PROJECT, enter_data(policy="regional"), 0)[1] == []
    assert core.enter(us, PROJECT, enter_data(policy="regional"), 0)[1] == []
    _, out = core.enter(eu2, PROJECT, enter_data(policy="regional"), 0)
    members = {m.client_id for m in by_type(out)["session.created"][0][1].members}
    assert members == {eu, eu2}


@pytest.mark.parametrize(("first", "second"), [(True, 1), (False, 0), (1, "1"), (True, "true")])
def test_self_buckets_keep_json_kinds_apart(first: object, second: object) -> None:
    core = new_core()
    a = core.connect("p", None, {"region": first}).client_id  # type: ignore[dict-item]
    b = core.connect("p", None, {"region": second}).client_id  # type: ignore[dict-item]
    assert core.enter(a, PROJECT, enter_data(policy="regional"), 0)[1] == []
    assert core.enter(b, PROJECT, enter_data(policy="regional"), 0)[1] == []


def test_self_buckets_treat_equal_numbers_as_one_value() -> None:
    core = new_core()
    a = core.connect("p", None, {"region": 1}).client_id
    b = core.connect("p", None, {"region": 1.0}).client_id
    core.enter(a, PROJECT, enter_data(policy="regional"), 0)
    _, out = core.enter(b, PROJECT, enter_data(policy="regional"), 0)
    assert {m.client_id for m in by_type(out)["session.created"][0][1].members} == {a, b}


@pytest.mark.parametrize(
    ("requests", "code"),
    [
        ([{"policy": "duel"}, {"pool": "duel"}], "pool.already_entered"),
        ([{"pool": "adhoc"}], "pool.not_found"),
        ([{"policy": "regional"}], "pool.attribute_missing"),
        (
            [{"pool": "big", "create": True, "mode": "auto", "group_size": 65}],
            "protocol.bad_request",
        ),
        (
            [
                {"pool": "a", "create": True, "mode": "auto", "group_size": 5},
                {"pool": "b", "create": True, "mode": "auto", "group_size": 5},
                {"pool": "c", "create": True, "mode": "auto", "group_size": 5},
                {"pool": "d", "create": True, "mode": "auto", "group_size": 5},
            ],
            "pool.limit",
        ),
    ],
)
def test_entry_errors(requests: list[dict[str, object]], code: str) -> None:
    core = new_core()
    a = connect(core)
    *ok, last = requests
    for request in ok:
        core.enter(a, PROJECT, enter_data(**request), 0)
    with pytest.raises(MatchmakerError) as caught:
        core.enter(a, PROJECT, enter_data(**last), 0)
    assert caught.value.code == code


def test_adhoc_pool_is_joined_by_name_and_its_parameters_must_match() -> None:
    core, bare = new_core(), Project(id="p")
    a, b, c = connect(core), connect(core), connect(core)
    core.enter(a, bare, enter_data(pool="x", create=True, mode="auto", group_size=3), 0)
    with pytest.raises(MatchmakerError) as caught:
        core.enter(b, bare, enter_data(pool="x", create=True, mode="auto", group_size=2), 0)
    assert caught.value.code == "pool.conflict"
    with pytest.raises(MatchmakerError):
        core.enter(b, bare, enter_data(pool="x", group_size=2), 0)
    assert core.enter(b, bare, enter_data(pool="x"), 0)[0].group_size == 3
    _, out = core.enter(c, bare, enter_data(pool="x", create=True, mode="auto", group_size=3), 0)
    assert len(by_type(out)["session.created"]) == 3


def test_a_match_withdraws_the_other_entries() -> None:
    core = new_core()
    a, b = connect(core, region="eu"), connect(core)
    regional, _ = core.enter(a, PROJECT, enter_data(policy="regional"), 0)
    core.enter(a, PROJECT, enter_data(policy="duel"), 0)
    _, out = core.enter(b, PROJECT, enter_data(policy="duel"), 0)
    withdrawn = by_type(out)["pool.withdrawn"]
    assert withdrawn == [([a], withdrawn[0][1])]
    assert (withdrawn[0][1].entry_id, withdrawn[0][1].reason) == (regional.entry_id, "matched")
    assert core.clients[a].entries == {}
    assert core.pools == {}


def test_entries_expire_after_their_ttl_clamped_to_the_limit() -> None:
    core = new_core(entry_ttl_ms=1000)
    a, b = connect(core), connect(core)
    short, _ = core.enter(a, PROJECT, enter_data(ttl_ms=100), now_ms=0)
    long, _ = core.enter(b, PROJECT, enter_data(policy="solo"), 0)
    assert short.expires_at == 100
    assert core.expire(99) == []
    out = core.expire(100)
    assert [(r, d.entry_id) for r, d in by_type(out)["pool.expired"]] == [([a], short.entry_id)]
    assert core.clients[a].entries == {}
    c = connect(core)
    clamped, _ = core.enter(c, PROJECT, enter_data(ttl_ms=10**9), now_ms=0)
    assert clamped.expires_at == 1000
    assert long.pool == "solo"


def test_leave_frees_the_pool_and_unknown_pool_is_an_error() -> None:
    core = new_core()
    a = connect(core)
    entered, _ = core.enter(a, PROJECT, enter_data(), 0)
    assert core.leave_pool(a, "duel")[0] == entered.entry_id
    assert core.pools == {}
    with pytest.raises(MatchmakerError) as caught:
        core.leave_pool(a, "duel")
    assert caught.value.code == "pool.not_found"


def test_a_changed_policy_applies_to_new_entries_while_old_ones_drain() -> None:
    core = new_core()
    a, b, c = connect(core), connect(core), connect(core)
    core.enter(a, PROJECT, enter_data(), 0)
    trio = Project(
        id="p", policies=(MatchmakingPolicy(name="duel", mode="auto", group_size=3, default=True),)
    )
    core.enter(b, trio, enter_data(), 0)
    _, out = core.enter(c, trio, enter_data(), 0)
    assert out == []  # b and c wait for a third; a still waits in the old pair pool
    assert sorted(p.spec.group_size for p in core.pools.values()) == [2, 3]


def test_rooms_join_relay_leave_and_delete_when_empty() -> None:
    core = new_core()
    a, b, c = connect(core), connect(core), connect(core)
    joined, out = core.join_session(a, PROJECT, "room", create=True, public={"n": "a"})
    assert joined.created
    assert [r for r, _ in by_type(out)["session.created"]] == [[a]]
    again, out = core.join_session(b, PROJECT, "room", create=False, public=None)
    assert (again.session_id, again.created) == (joined.session_id, False)
    assert by_type(out)["session.member_joined"][0][0] == [a]
    core.join_session(c, PROJECT, "room", create=True, public=None)
    recipients, message = core.relay(a, joined.session_id, None, msgspec.Raw(b'{"x":1}'))
    assert list(recipients) == [b, c]
    assert isinstance(message, events.MessageRelayed)
    assert (message.sender, bytes(message.data)) == (a, b'{"x":1}')  # type: ignore[call-overload]
    assert list(core.relay(a, joined.session_id, [c], msgspec.Raw(b"1"))[0]) == [c]
    # A repeated id is delivered once (one frame must not flood a peer's queue).
    assert list(core.relay(a, joined.session_id, [c, b, c, c], msgspec.Raw(b"1"))[0]) == [c, b]
    out = core.leave_session(b, joined.session_id, 0)
    left = by_type(out)["session.member_left"]
    assert left[0][0] == [a, c]
    assert (left[0][1].client_id, left[0][1].reason) == (b, "left")
    out = core.disconnect(a, 0)
    assert by_type(out)["session.member_left"][0][1].reason == "disconnected"
    core.leave_session(c, joined.session_id, 0)
    assert core.sessions == {}
    assert core.rooms == {}


SessionOp = Callable[[Matchmaker, str, str, str], object]


@pytest.mark.parametrize(
    ("operation", "code"),
    [
        (lambda m, a, b, s: m.join_session(b, PROJECT, "other", False, None), "session.not_found"),
        (
            lambda m, a, b, s: m.join_session(b, Project(id="p", lockdown=True), "r", True, None),
            "project.lockdown",
        ),
        (lambda m, a, b, s: m.join_session(b, PROJECT, "r", False, None), "session.full"),
        (lambda m, a, b, s: m.join_session(a, PROJECT, "r2", True, None), "session.limit"),
        (lambda m, a, b, s: m.relay(b, s, None, msgspec.Raw(b"1")), "session.not_member"),
        (lambda m, a, b, s: m.relay(a, s, [b], msgspec.Raw(b"1")), "session.not_member"),
        (lambda m, a, b, s: m.relay(a, "nope", None, msgspec.Raw(b"1")), "session.not_found"),
        (lambda m, a, b, s: m.leave_session(b, s, 0), "session.not_member"),
    ],
)
def test_session_errors(operation: SessionOp, code: str) -> None:
    core = new_core(max_session_members=1, max_sessions_per_client=1)
    a, b = connect(core), connect(core)
    room, _ = core.join_session(a, PROJECT, "r", create=True, public=None)
    with pytest.raises(MatchmakerError) as caught:
        operation(core, a, b, room.session_id)
    assert caught.value.code == code


def test_lockdown_still_lets_clients_join_existing_rooms() -> None:
    core = new_core()
    a, b = connect(core), connect(core)
    room, _ = core.join_session(a, PROJECT, "r", create=True, public=None)
    locked = Project(id="p", lockdown=True)
    assert (
        core.join_session(b, locked, "r", create=False, public=None)[0].session_id
        == room.session_id
    )


def test_session_limit_refuses_entry() -> None:
    core = new_core(max_sessions_per_client=1)
    a = connect(core)
    core.enter(a, PROJECT, enter_data(policy="solo"), 0)
    with pytest.raises(MatchmakerError) as caught:
        core.enter(a, PROJECT, enter_data(policy="solo"), 0)
    assert caught.value.code == "session.limit"


def test_expiry_heap_is_compacted() -> None:
    core = new_core()
    a = connect(core)
    for _ in range(3000):
        core.enter(a, PROJECT, enter_data(), 0)
        core.leave_pool(a, "duel")
    assert len(core.tables.expiry) < 2100


def test_a_policy_change_closes_only_that_projects_changed_policy_pools() -> None:
    core = new_core()
    a, b, c = connect(core, region="eu"), connect(core), connect(core)
    other = core.connect("q", None, {}).client_id
    core.enter(a, PROJECT, enter_data(policy="regional"), 0)
    entered_b, _ = core.enter(b, PROJECT, enter_data(), 0)
    core.enter(c, PROJECT, enter_data(pool="adhoc", create=True, mode="auto", group_size=2), 0)
    core.enter(other, Project(id="q", policies=(DUEL,)), enter_data(), 0)
    wider = MatchmakingPolicy(name="duel", mode="auto", group_size=3, default=True)
    out = core.close_changed_policies("p", Project(id="p", policies=(wider, REGIONAL)))
    assert [(r, e.pool, e.entry_id, e.reason) for r, e in by_type(out)["pool.closed"]] == [
        ([b], "duel", entered_b.entry_id, "policy_changed")
    ]
    assert sorted(pool.name for pool in core.pools.values()) == ["adhoc", "duel", "regional"]
    assert core.clients[b].entries == {}
    out = core.close_changed_policies("p", None)  # deleted: every policy pool of p closes
    assert [r for r, _ in by_type(out)["pool.closed"]] == [[a]]
    assert sorted((p.project_id, p.name) for p in core.pools.values()) == [
        ("p", "adhoc"),
        ("q", "duel"),
    ]
