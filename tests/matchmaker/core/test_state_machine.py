"""A hypothesis state machine over the matching core.

A simple model tracks which (client, pool) entries wait; every operation's
deliveries must explain each change of the core's live entries. A lost entry,
an entry matched twice, a client matched without an entry, a session of the
wrong size or a session mixing ``@self`` buckets fails the run. Members leave
sessions and ask for backfill, whose newcomers must come from the session's
bucket, never overfill it and, under a range rule, be within the widest window
of every member.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from matchmaker.config import Limits
from matchmaker.core import Delivery, EnterPool, Matchmaker
from matchmaker.core.commands import Backfill
from matchmaker.core.events import EntryExpired, EntryWithdrawn, SessionFormed
from matchmaker.errors import MatchmakerError
from matchmaker.model import FilterValue, MatchmakingPolicy, Project, RangeRule, Widen

POLICIES = (
    MatchmakingPolicy(name="duo", mode="auto", group_size=2, filter={"region": "@self"}),
    MatchmakingPolicy(name="trio", mode="auto", group_size=3),
    MatchmakingPolicy(
        name="squad", mode="auto", group_size=4, filter={"region": "@self", "tier": "@self"}
    ),
    MatchmakingPolicy(name="solo", mode="auto", group_size=1),
    MatchmakingPolicy(
        name="rated",
        mode="auto",
        group_size=3,
        filter={"rating": RangeRule(within=5, widen=Widen(every_ms=10, by=5, max=15))},
    ),
)
WIDEST = 15  # the rated pool's widest window: no two members of its sessions are farther
PROJECT = Project(id="p", policies=POLICIES)
SIZES = {p.name: p.group_size for p in POLICIES}
FILTERS = {p.name: [k for k, v in (p.filter or {}).items() if v == "@self"] for p in POLICIES}


class CoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.core = Matchmaker(Limits(max_sessions_per_client=1000, entry_ttl_ms=50), node="h")
        self.now = 0
        self.waiting: dict[tuple[str, str], str] = {}  # (client, pool) -> entry id
        self.attributes: dict[str, dict[str, Any]] = {}
        self.sessions: dict[str, set[str]] = {}  # session id -> every member it ever had

    def _apply(self, deliveries: list[Delivery]) -> None:
        for recipients, event in deliveries:
            if isinstance(event, SessionFormed):
                data = event
                assert data.pool is not None
                members = [m.client_id for m in data.members]
                assert list(recipients) == [data.you]
                for key in FILTERS[data.pool]:
                    assert len({str(self.attributes[m][key]) for m in members}) == 1
                assert data.you in members
                if data.pool == "rated":
                    ratings = [self.attributes[m]["rating"] for m in members]
                    assert max(ratings) - min(ratings) <= WIDEST
                seen = self.sessions.get(data.session_id)
                if seen is None:  # a new group
                    self.sessions[data.session_id] = set(members)
                    assert len(members) == SIZES[data.pool] == len(set(members))
                    for member in members:
                        assert self.waiting.pop((member, data.pool), None) is not None
                elif data.you not in seen:  # seated by a backfill
                    seen.add(data.you)
                    assert len(members) <= SIZES[data.pool]
                    assert self.waiting.pop((data.you, data.pool), None) is not None
            elif isinstance(event, EntryWithdrawn | EntryExpired):
                (client,) = recipients
                entry_id = self.waiting.pop((client, event.pool))
                assert entry_id == event.entry_id

    @rule(region=st.sampled_from(["eu", "us"]), tier=st.integers(0, 1), rating=st.integers(0, 60))
    def connect(self, region: str, tier: int, rating: int) -> None:
        attributes: dict[str, FilterValue] = {"region": region, "tier": tier, "rating": rating}
        client = self.core.connect("p", None, attributes)
        self.attributes[client.client_id] = attributes

    @precondition(lambda self: self.attributes)
    @rule(data=st.data(), pool=st.sampled_from([p.name for p in POLICIES]), ttl=st.integers(1, 60))
    def enter(self, data: st.DataObject, pool: str, ttl: int) -> None:
        client = data.draw(st.sampled_from(sorted(self.attributes)))
        request = EnterPool(policy=pool, ttl_ms=ttl)
        if (client, pool) in self.waiting or len(self.core.clients[client].entries) == 3:
            with pytest.raises(MatchmakerError) as caught:
                self.core.enter(client, PROJECT, request, self.now)
            assert caught.value.code in {"pool.already_entered", "pool.limit"}
            return
        entered, out = self.core.enter(client, PROJECT, request, self.now)
        self.waiting[(client, pool)] = entered.entry_id
        self._apply(out)

    @precondition(lambda self: self.waiting)
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        client, pool = data.draw(st.sampled_from(sorted(self.waiting)))
        assert self.core.leave_pool(client, pool)[0] == self.waiting.pop((client, pool))

    @precondition(lambda self: self.attributes)
    @rule(data=st.data())
    def disconnect(self, data: st.DataObject) -> None:
        client = data.draw(st.sampled_from(sorted(self.attributes)))
        self.core.disconnect(client, self.now)
        del self.attributes[client]
        self.waiting = {k: v for k, v in self.waiting.items() if k[0] != client}

    @precondition(lambda self: self.core.sessions)
    @rule(data=st.data())
    def leave_session(self, data: st.DataObject) -> None:
        session_id = data.draw(st.sampled_from(sorted(self.core.sessions)))
        member = data.draw(st.sampled_from(sorted(self.core.sessions[session_id].members)))
        self.core.leave_session(member, session_id, self.now)

    @precondition(lambda self: self.core.sessions)
    @rule(data=st.data(), seats=st.integers(0, 3))
    def backfill(self, data: st.DataObject, seats: int) -> None:
        session_id = data.draw(st.sampled_from(sorted(self.core.sessions)))
        session = self.core.sessions[session_id]
        member = data.draw(st.sampled_from(sorted(session.members)))
        assert session.pool is not None
        if seats > SIZES[session.pool] - len(session.members):
            with pytest.raises(MatchmakerError) as caught:
                self.core.backfill(member, Backfill(session_id, seats), self.now)
            assert caught.value.code == "backfill.invalid"
            return
        answer, out = self.core.backfill(member, Backfill(session_id, seats), self.now)
        assert len(answer.filled) + answer.pending == seats
        self._apply(out)

    @rule(step=st.integers(1, 40))
    def tick(self, step: int) -> None:
        self.now += step
        self._apply(self.core.expire(self.now))

    @invariant()
    def live_entries_match_the_model(self) -> None:
        live = {
            (entry.client.client_id, pool.name): entry.entry_id
            for pool in self.core.pools.values()
            for fifo in pool.buckets.values()
            for entry in fifo.values()
        }
        assert live == self.waiting
        for pool in self.core.pools.values():
            assert pool.size == sum(len(f) for f in pool.buckets.values()) > 0
            # Without a range rule a full bucket forms a group at once; with one, entries
            # out of each other's windows wait side by side (test_modes_state_machine checks
            # that no acceptable group is left waiting).
            most = pool.size if pool.spec.range_rule is not None else pool.spec.group_size - 1
            assert all(0 < len(f) <= most for f in pool.buckets.values())

    @invariant()
    def sessions_hold_connected_clients(self) -> None:
        for session in self.core.sessions.values():
            assert session.members
            for client_id, member in session.members.items():
                assert self.core.clients[client_id] is member.client
                assert member.client.sessions[session.session_id] is session
            assert session.pool is not None
            assert len(session.members) <= SIZES[session.pool]


TestCore = CoreMachine.TestCase
TestCore.settings = settings(max_examples=150, stateful_step_count=60, deadline=None)
