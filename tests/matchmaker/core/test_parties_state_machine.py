"""A hypothesis state machine over parties in the core: clients create, join and leave
parties, leaders enter them (others enter alone), members drop, come back and go, entries
expire. After every step: a party's waiting entry is what entered (its members unchanged,
paused exactly while one is away), every group formed has exactly its pool's seats, a
party is never split between sessions, the parties' tables agree, and no set of waiting
entries of a bucket could fill a group (matching is event-driven: nothing waits for a
scan)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from matchmaker.config import Limits
from matchmaker.core import Delivery, EnterPool, Matchmaker
from matchmaker.core.commands import CreateParty, JoinParty, LeaveParty
from matchmaker.core.events import SessionFormed
from matchmaker.core.parties import PartyInfo
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project

POLICIES = (
    MatchmakingPolicy(name="duo", mode="auto", group_size=2),
    MatchmakingPolicy(name="trio", mode="auto", group_size=3),
    MatchmakingPolicy(name="squad", mode="auto", group_size=4, filter={"region": "@self"}),
)
PROJECT = Project(id="p", policies=POLICIES)
SIZES = {p.name: p.group_size for p in POLICIES}
T = TypeVar("T")


class PartyMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        limits = Limits(max_sessions_per_client=1000, entry_ttl_ms=80, max_party_members=4)
        self.core = Matchmaker(limits, node="h")
        self.now = 0
        self.entered: dict[str, int] = {}  # party id -> its members when its entry entered

    def _apply(self, out: list[Delivery]) -> None:
        parties = [set(p.members) for p in self.core.parties.by_code.values()]
        for recipients, event in out:
            if not isinstance(event, SessionFormed) or event.pool is None:
                continue
            members = {m.client_id for m in event.members}
            if recipients[0] == event.you == event.members[0].client_id:
                assert len(members) == SIZES[event.pool]
            for party in parties:
                # A party is never split: all its members are in the session its entry
                # formed, or none (members enter only through their leader here).
                assert party <= members or not party & members

    def _clients(self) -> list[str]:
        return sorted(c for c, state in self.core.clients.items() if not state.away)

    def _free(self) -> list[str]:
        """Clients that may make or join a party: connected, waiting in no pool (a client
        with a party enters only through its leader from then on)."""
        return [c for c in self._clients() if not self.core.clients[c].entries]

    @rule(region=st.sampled_from(["eu", "us"]))
    def connect(self, region: str) -> None:
        self.core.connect("p", None, {"region": region})

    @precondition(lambda self: self._free())
    @rule(data=st.data())
    def create(self, data: st.DataObject) -> None:
        client = data.draw(st.sampled_from(self._free()))
        done = _attempt(lambda: self.core.party(client, CreateParty(), self.now))
        assert done == "party.limit" or isinstance(done[0], PartyInfo)
        if not isinstance(done, str):
            self._apply(done[1])

    @precondition(lambda self: self._free() and self.core.parties.by_code)
    @rule(data=st.data())
    def join(self, data: st.DataObject) -> None:
        client = data.draw(st.sampled_from(self._free()))
        # By party id (the codes are random: drawing among them would not replay).
        parties = {p.party_id: p.code for p in self.core.parties.by_code.values()}
        code = parties[data.draw(st.sampled_from(sorted(parties)))]
        done = _attempt(lambda: self.core.party(client, JoinParty(code), self.now))
        if isinstance(done, str):
            assert done in {"party.limit", "party.full", "rate.limited"}
            return
        assert isinstance(done[0], PartyInfo)
        self._apply(done[1])

    @precondition(lambda self: any(c.parties for c in self.core.clients.values()))
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        pairs = sorted((c, p) for c, s in self.core.clients.items() for p in s.parties)
        client, party_id = data.draw(st.sampled_from(pairs))
        self._apply(self.core.party(client, LeaveParty(party_id), self.now)[1])

    @precondition(lambda self: self._clients())
    @rule(data=st.data(), pool=st.sampled_from(sorted(SIZES)), ttl=st.integers(1, 80))
    def enter(self, data: st.DataObject, pool: str, ttl: int) -> None:
        """A party's leader enters it; a member who leads none enters alone."""
        client = data.draw(st.sampled_from(self._clients()))
        state = self.core.clients[client]
        led = [p for p in state.parties.values() if p.leader == client]
        if state.parties and not led:
            return  # a member waits for its leader
        request = EnterPool(policy=pool, ttl_ms=ttl)
        if led:
            request = EnterPool(policy=pool, ttl_ms=ttl, party_id=led[0].party_id)
        done = _attempt(lambda: self.core.enter(client, PROJECT, request, self.now))
        if isinstance(done, str):
            allowed = {"pool.already_entered", "pool.limit", "party.too_large"}
            assert done in allowed | {"pool.filter_mismatch"}, done
            return
        if led:
            self.entered[led[0].party_id] = len(led[0].members)
        self._apply(done[1])

    @precondition(lambda self: self._clients())
    @rule(data=st.data())
    def drop(self, data: st.DataObject) -> None:
        """A connection drops: the client is away (it may come back)."""
        self._apply(self.core.suspend(data.draw(st.sampled_from(self._clients()))))

    @precondition(lambda self: any(c.away for c in self.core.clients.values()))
    @rule(data=st.data(), back=st.booleans())
    def come_back_or_go(self, data: st.DataObject, back: bool) -> None:
        away = sorted(c for c, s in self.core.clients.items() if s.away)
        client = data.draw(st.sampled_from(away))
        if back:
            self._apply(self.core.resume(client, self.now))
        else:
            self._apply(self.core.disconnect(client, self.now))

    @rule(step=st.integers(1, 50))
    def tick(self, step: int) -> None:
        self.now += step
        self._apply(self.core.expire(self.now))

    @invariant()
    def a_waiting_party_is_what_entered(self) -> None:
        for party in self.core.parties.by_code.values():
            entry = party.entry
            if entry is None:
                continue
            assert entry.live
            assert entry.party is party
            assert entry.client.client_id == party.leader
            assert entry.seats == len(party.members) == self.entered[party.party_id]
            assert entry.paused == (party.away() or entry.client.away)

    @invariant()
    def the_tables_agree(self) -> None:
        parties = self.core.parties
        counted: dict[str, int] = {}
        for (project_id, code), party in parties.by_code.items():
            assert party.code == code
            assert party.members
            assert party.leader in party.members
            counted[project_id] = counted.get(project_id, 0) + 1
            for client_id, client in party.members.items():
                assert self.core.clients[client_id] is client
                assert client.parties[party.party_id] is party
        assert counted == parties.per_project

    @invariant()
    def nothing_that_could_fill_a_group_waits(self) -> None:
        for pool in self.core.pools.values():
            for fifo in pool.buckets.values():
                reach = 1
                for entry in fifo.values():
                    reach |= reach << entry.seats
                assert not (reach >> pool.spec.group_size) & 1


def _attempt(call: Callable[[], T]) -> T | str:
    """What ``call`` returns, or the code of the error it raised."""
    try:
        return call()
    except MatchmakerError as error:
        return error.code


TestParties = PartyMachine.TestCase
TestParties.settings = settings(max_examples=100, stateful_step_count=50, deadline=None)
