"""A hypothesis state machine over the claim, mutual, propose and delegated modes, and
the auto mode's range rules (widening windows) and variable group sizes.

A model of who waits where is kept from the core's deliveries alone. Random
clients enter, leave, disconnect, let time pass, claim, pick, propose, answer,
attach as delegates and form groups, valid or not. The run fails on a group of
the wrong size or mixing ``@self`` buckets, a member without a waiting entry
(matched twice from one entry, or half-formed), an entry lost or kept against
the model, mode state pointing at entries that are gone, or a delegate whose
snapshot plus deltas is not the pool. In the auto pools it also fails on a group
whose members do not all accept each other's ratings at their current windows, a
group below the maximum size before its oldest member's fill timeout, and two
waiting entries that accept each other (a widening or a resume was not tried).
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from matchmaker.config import Limits
from matchmaker.core import Delivery, EnterPool, Matchmaker, events
from matchmaker.core.commands import (
    AttachDelegate,
    CancelProposal,
    CreateProposal,
    FormGroups,
    MakeClaim,
    ModeCommand,
    Pick,
    RespondProposal,
)
from matchmaker.core.modes.claim import ClaimMode
from matchmaker.core.modes.delegated import DelegatedMode
from matchmaker.core.modes.mutual import MutualMode
from matchmaker.core.modes.propose import ProposeMode
from matchmaker.core.modes.skill import SkillMode
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, ProjectKey, RangeRule, Widen

WIDENING = RangeRule(within=5, widen=Widen(every_ms=20, by=5, max=30))

POLICIES = (
    MatchmakingPolicy(name="lobby", mode="claim", group_size=2, filter={"region": "@self"}),
    MatchmakingPolicy(name="duo", mode="mutual", group_size=2),
    MatchmakingPolicy(name="trio", mode="mutual", group_size=3),
    MatchmakingPolicy(name="party", mode="propose", group_size=3),
    MatchmakingPolicy(name="ranked", mode="delegated", group_size=2, filter={"region": "@self"}),
    MatchmakingPolicy(
        name="skill", mode="auto", group_size=2, filter={"region": "@self", "rating": WIDENING}
    ),
    MatchmakingPolicy(
        name="squad",
        mode="auto",
        group_size=3,
        min_group_size=2,
        fill_timeout_ms=50,
        filter={"rating": WIDENING},
    ),
    MatchmakingPolicy(
        name="crowd", mode="auto", group_size=3, min_group_size=2, fill_timeout_ms=40
    ),
)
BY_NAME = {p.name: p for p in POLICIES}
KEY = ProjectKey(type="shared-secret", secret="delegate-secret", scopes=("delegate",))
PROJECT = Project(id="p", policies=POLICIES, keys=(KEY,))
SIZES = {p.name: p.group_size for p in POLICIES}
POOLS = [p.name for p in POLICIES]
REGIONAL = {"lobby", "ranked", "skill"}
# Errors a random (often invalid) request may get; anything else is a bug.
EXPECTED = {
    "pool.not_found",
    "claim.conflict",
    "claim.invalid",
    "pick.invalid",
    "pick.not_found",
    "pick.limit",
    "proposal.invalid",
    "proposal.unavailable",
    "proposal.limit",
    "proposal.not_found",
    "delegate.not_attached",
}


class ModesMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        limits = Limits(max_sessions_per_client=10_000, entry_ttl_ms=400, proposal_ttl_ms=100)
        self.core = Matchmaker(limits, node="m")
        self.now = 0
        self.regions: dict[str, str] = {}
        self.ratings: dict[str, int] = {}
        self.entered_at: dict[tuple[str, str], int] = {}  # (client, pool) -> when
        self.waiting: dict[tuple[str, str], str] = {}  # (client, pool) -> entry id
        self.used: set[str] = set()  # entry ids that went into a session
        self.sessions: set[str] = set()
        self.proposals: dict[str, list[str]] = {}  # id -> proposer and members
        self.away: set[str] = set()
        self.delegate: str | None = None
        self.mirror: dict[str, str] | None = None  # the delegate's view: entry id -> client
        self.version = 0

    # -- the model, from deliveries -------------------------------------------------------

    def _apply(self, deliveries: list[Delivery]) -> None:
        for recipients, event in deliveries:
            match event:
                case events.SessionFormed():
                    self._created(event)
                case events.EntryWithdrawn() | events.EntryExpired():
                    (client,) = recipients
                    assert self.waiting.pop((client, event.pool)) == event.entry_id
                case events.ProposalReceived():
                    self.proposals[event.proposal_id] = [m.client_id for m in event.members]
                case events.PoolSnapshot():
                    assert list(recipients) == [self.delegate]
                    self.mirror = {e.entry_id: e.client_id for e in event.entries}
                    self.version = event.version
                case events.PoolDelta():
                    assert list(recipients) == [self.delegate]
                    assert self.mirror is not None
                    assert event.version == self.version + 1, "a delta was skipped"
                    self.version = event.version
                    for entry_id in event.removed:
                        del self.mirror[entry_id]
                    for added in event.added:
                        self.mirror[added.entry_id] = added.client_id

    def _created(self, event: events.SessionFormed) -> None:
        assert event.pool is not None
        if event.session_id in self.sessions:
            return
        self.sessions.add(event.session_id)
        members = [m.client_id for m in event.members]
        assert len(members) == len(set(members))
        self._check_group(event.pool, members)
        if event.pool in REGIONAL:
            assert len({self.regions[m] for m in members}) == 1
        for member in members:
            entry_id = self.waiting.pop((member, event.pool), None)
            assert entry_id is not None, "a member without a waiting entry"
            assert entry_id not in self.used
            self.used.add(entry_id)
            # matched in one pool: its other entries are withdrawn (events follow)

    def _check_group(self, pool: str, members: list[str]) -> None:
        """The size (and, in auto pools, the fill timeout and the rating windows) allow it."""
        policy = BY_NAME[pool]
        since = [self.entered_at[(m, pool)] for m in members]
        if policy.fill_timeout_ms is None:
            assert len(members) == policy.group_size
        else:
            assert policy.min_group_size is not None
            assert policy.min_group_size <= len(members) <= policy.group_size
            if len(members) < policy.group_size:
                assert min(since) + policy.fill_timeout_ms <= self.now, "filled too early"
        rule = (policy.filter or {}).get("rating")
        if isinstance(rule, RangeRule):
            for a, at in zip(members, since, strict=True):
                for b in members:
                    gap = abs(self.ratings[a] - self.ratings[b])
                    assert gap <= rule.window(self.now - at), "a member outside a window"

    def _try(self, client: str, command: ModeCommand) -> Any:
        if client in self.away:
            return None  # an away client has no connection to send with
        try:
            answer, out = self.core.command(client, PROJECT, command, self.now)
        except MatchmakerError as error:
            if error.code not in EXPECTED:
                raise
            return None
        self._apply(out)
        return answer

    # -- rules ----------------------------------------------------------------------------

    @initialize(data=st.data())
    def crowd(self, data: st.DataObject) -> None:
        """Twelve clients, each waiting in up to three pools, and a delegate."""
        for region in ["eu", "us"] * 6:
            self.connect(region, data.draw(st.integers(0, 60)))
        self.attach_delegate()
        for client in sorted(self.regions):
            pools = data.draw(st.lists(st.sampled_from(POOLS), min_size=2, max_size=3, unique=True))
            for pool in pools:
                self._enter(client, pool, listed=True)

    @rule(region=st.sampled_from(["eu", "us"]), rating=st.integers(0, 60))
    def connect(self, region: str, rating: int = 0) -> None:
        attributes = {"region": region, "rating": rating}
        client = self.core.connect("p", None, attributes).client_id  # type: ignore[arg-type]
        self.regions[client] = region
        self.ratings[client] = rating

    @precondition(lambda self: self.delegate is None)
    @rule()
    def attach_delegate(self) -> None:
        delegate = self.core.connect("p", KEY.secret, {}).client_id
        self.delegate = delegate
        assert self._try(delegate, AttachDelegate("ranked")) is not None

    @precondition(lambda self: self.regions)
    @rule(data=st.data(), pool=st.sampled_from([p.name for p in POLICIES]), listed=st.booleans())
    def enter(self, data: st.DataObject, pool: str, listed: bool) -> None:
        self._enter(data.draw(st.sampled_from(sorted(self.regions))), pool, listed)

    def _enter(self, client: str, pool: str, listed: bool) -> None:
        if client in self.away:
            return  # an away client has no connection to send with
        if (client, pool) in self.waiting or len(self.core.clients[client].entries) == 3:
            return  # refusals of these are covered by the auto-mode machine
        request = EnterPool(policy=pool, listed=listed)
        entered, out = self.core.enter(client, PROJECT, request, self.now)
        self.waiting[(client, pool)] = entered.entry_id
        self.entered_at[(client, pool)] = self.now
        self._apply(out)

    @precondition(lambda self: self.waiting)
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        client, pool = data.draw(st.sampled_from(sorted(self.waiting)))
        if client in self.away:
            return
        entry_id, out = self.core.leave_pool(client, pool)
        assert entry_id == self.waiting.pop((client, pool))
        self._apply(out)

    @precondition(lambda self: self.regions)
    @rule(data=st.data())
    def disconnect(self, data: st.DataObject) -> None:
        client = data.draw(st.sampled_from(sorted(self.regions)))
        self._apply(self.core.disconnect(client, self.now))
        del self.regions[client]
        self.away.discard(client)
        self.waiting = {k: v for k, v in self.waiting.items() if k[0] != client}

    @precondition(lambda self: set(self.regions) - self.away)
    @rule(data=st.data())
    def drop(self, data: st.DataObject) -> None:
        """An unclean disconnect: the client is away, its entries paused (kept)."""
        client = data.draw(st.sampled_from(sorted(set(self.regions) - self.away)))
        self._apply(self.core.suspend(client))
        self.away.add(client)

    @precondition(lambda self: self.away)
    @rule(data=st.data())
    def come_back(self, data: st.DataObject) -> None:
        """A resume: the paused entries are back (and may complete groups at once)."""
        client = data.draw(st.sampled_from(sorted(self.away)))
        self.away.discard(client)
        self._apply(self.core.resume(client, self.now))

    @precondition(lambda self: self.delegate is not None)
    @rule()
    def detach_delegate(self) -> None:
        assert self.delegate is not None
        self._apply(self.core.disconnect(self.delegate, self.now))
        self.delegate, self.mirror = None, None

    @rule(step=st.integers(1, 30))
    def tick(self, step: int) -> None:
        self.now += step
        self._apply(self.core.expire(self.now))

    def _waiting_in(self, pool: str) -> list[str]:
        return sorted(c for c, p in self.waiting if p == pool)

    @precondition(lambda self: any(p in ("lobby", "party") for _, p in self.waiting))
    @rule(data=st.data())
    def claim_or_propose(self, data: st.DataObject) -> None:
        pool = data.draw(st.sampled_from(sorted({p for _, p in self.waiting} & {"lobby", "party"})))
        clients = sorted(self.regions)
        # Mostly clients that wait in the pool, so groups do form; sometimes anyone.
        here = self._waiting_in(pool)
        client = data.draw(st.sampled_from(here))
        others = data.draw(
            st.lists(st.sampled_from(here), min_size=SIZES[pool] - 1, max_size=SIZES[pool] - 1)
            | st.lists(st.sampled_from(clients), min_size=1, max_size=3)
        )
        if pool == "lobby":
            self._try(client, MakeClaim(pool, others))
        else:
            self._try(client, CreateProposal(pool, others))

    @precondition(lambda self: any(p in ("duo", "trio") for _, p in self.waiting))
    @rule(data=st.data(), add=st.booleans() | st.just(True))
    def pick(self, data: st.DataObject, add: bool) -> None:
        pool = data.draw(st.sampled_from(sorted({p for _, p in self.waiting} & {"duo", "trio"})))
        clients = self._waiting_in(pool)
        client = data.draw(st.sampled_from(clients))
        # Often pick back someone who picked this client, so complete sets do form.
        mode = self.core.clients[client].entries[pool].pool.mode
        assert isinstance(mode, MutualMode)
        fans = sorted(mode.picked_by.get(client, ())) or clients
        target = data.draw(st.sampled_from(fans) | st.sampled_from(clients))
        self._try(client, Pick(pool, target, add))

    @precondition(lambda self: self.proposals and self.regions)
    @rule(data=st.data(), answer=st.sampled_from(["accept", "accept", "decline", "cancel"]))
    def answer(self, data: st.DataObject, answer: str) -> None:
        proposal_id = data.draw(st.sampled_from(sorted(self.proposals)))
        involved = [c for c in self.proposals[proposal_id] if c in self.regions] or sorted(
            self.regions
        )
        client = data.draw(st.sampled_from(involved) | st.sampled_from(sorted(self.regions)))
        if answer == "cancel":
            self._try(client, CancelProposal(proposal_id))
        else:
            self._try(client, RespondProposal(proposal_id, answer == "accept"))

    @precondition(lambda self: self.mirror)
    @rule(data=st.data())
    def form(self, data: st.DataObject) -> None:
        assert self.delegate is not None
        assert self.mirror is not None
        ids = [*sorted(self.mirror), "gone"]
        group = st.lists(st.sampled_from(ids), min_size=2, max_size=2) | st.lists(
            st.sampled_from(ids), max_size=3
        )
        groups = data.draw(st.lists(group, max_size=3))
        formed = self._try(self.delegate, FormGroups("ranked", groups))
        assert len(formed.results) == len(groups)
        for result in formed.results:
            assert result.ok == (result.session_id is not None)
            if not result.ok:
                assert result.error["code"] in {"delegate.stale", "delegate.invalid_group"}

    # -- invariants -----------------------------------------------------------------------

    @invariant()
    def live_entries_match_the_model(self) -> None:
        live = {
            (entry.client.client_id, pool.name): entry.entry_id
            for pool in self.core.pools.values()
            for fifo in pool.buckets.values()
            for entry in fifo.values()
        }
        # An away client's entries are kept (paused), out of the buckets: none is lost.
        active = {k: v for k, v in self.waiting.items() if k[0] not in self.away}
        assert live == active
        paused = {
            (cid, name): entry.entry_id
            for cid in self.away
            for name, entry in self.core.clients[cid].entries.items()
        }
        assert paused == {k: v for k, v in self.waiting.items() if k[0] in self.away}
        assert all(self.core.clients[cid].entries[p].paused for cid, p in paused)
        assert not (set(live.values()) & self.used)

    @invariant()
    def mode_state_points_at_live_entries(self) -> None:
        waiting_in: dict[str, set[str]] = {}
        for client, pool_name in self.waiting:
            if client not in self.away:  # paused entries are out of every mode's view
                waiting_in.setdefault(pool_name, set()).add(client)
        for pool in self.core.pools.values():
            here = waiting_in.get(pool.name, set())
            mode = pool.mode
            if isinstance(mode, MutualMode):
                assert set(mode.picks) <= here
                assert all(targets <= here for targets in mode.picks.values())
            elif isinstance(mode, ProposeMode):
                for proposal in mode.proposals.values():
                    assert set(proposal.participants()) <= here
            elif isinstance(mode, ClaimMode):
                assert set(mode.watchers) <= here
            elif isinstance(mode, SkillMode):
                assert {e.client.client_id for e in mode.waiting.values()} == here
                assert sum(len(index) for index in mode.index.values()) == len(here)
            elif isinstance(mode, DelegatedMode):
                assert {e.client.client_id for e in mode.entries.values()} == here
                if self.mirror is not None:
                    assert self.mirror == {i: e.client.client_id for i, e in mode.entries.items()}
                    assert self.version == mode.version

    @invariant()
    def no_waiting_pair_accepts_each_other(self) -> None:
        """Every arrival, widening, fill timeout and resume was tried: no two waiting
        entries of the pairs pool accept each other, and no crowd bucket could fill."""
        skill = [c for c, p in self.waiting if p == "skill" and c not in self.away]
        for i, a in enumerate(skill):
            for b in skill[i + 1 :]:
                if self.regions[a] != self.regions[b]:
                    continue
                gap = abs(self.ratings[a] - self.ratings[b])
                wa = WIDENING.window(self.now - self.entered_at[(a, "skill")])
                wb = WIDENING.window(self.now - self.entered_at[(b, "skill")])
                assert gap > min(wa, wb), "an acceptable pair left waiting"
        crowd = sorted(
            self.entered_at[(c, p)] for c, p in self.waiting if p == "crowd" and c not in self.away
        )
        assert len(crowd) < 3
        assert len(crowd) < 2 or crowd[0] + 40 > self.now, "a filled crowd left waiting"


TestModes = ModesMachine.TestCase
TestModes.settings = settings(max_examples=120, stateful_step_count=60, deadline=None)
