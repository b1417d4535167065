"""A hypothesis state machine over the cluster's routers, without Redis or asyncio.

Several members, each a :class:`~matchmaker.core.engine.Matchmaker` and a
:class:`~matchmaker.cluster.routing.Router`, exchange the messages their routers
post through simulated inboxes: one FIFO per (sender, receiver), as a Redis Stream
keeps one writer's entries in order, delivered in any interleaving across senders.
Clients connect to any member and enter and leave pools, leave their sessions and
ask for backfills (``session.backfill``) of the sessions they are in, a plain pool's
and one with a widening rating window; members join, die and
notice the changes at different times; messages are delivered out of order
across links and (in :class:`LossyCluster`) lost, the sender told as Redis would
tell it, or not told at all.

Once every member has noticed the last change and every message is delivered,
the cluster must look like one process (:class:`Cluster`): every request was
answered once (a ``cluster.unavailable`` refusal by timeout may precede a late
answer); each connected client waits in exactly the pools its answers and events
say (the one-process model), each such entry in the core of the pool's owner and
nowhere else; every member of a formed session was told of it once, and what
each member was told of its members (``session.created``, ``member_joined``,
``member_left``) is the session's membership at its host; no entry is left held
for a backfill; an open backfill has no waiting entry of its bucket that one
process would have seated; and no session of the rating pool holds two players
farther apart than its widest window. With losses, every request is still answered.
"""

from __future__ import annotations

import itertools
import os
import random
from collections import defaultdict, deque
from collections.abc import Sequence
from unittest.mock import patch

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from matchmaker.cluster.messages import Command, Message
from matchmaker.cluster.ring import owner, pool_key
from matchmaker.cluster.routing import (
    ANSWER_TIMEOUT_MS,
    INTERNAL,
    Action,
    Deliver,
    Perform,
    Post,
    Router,
    Routes,
)
from matchmaker.config import Limits
from matchmaker.core import Delivery, Event, Matchmaker, parties
from matchmaker.core.commands import (
    Backfill,
    ClientCommand,
    CreateParty,
    EnterPool,
    Greet,
    JoinParty,
    LeaveParty,
    LeavePool,
    LeaveSession,
    Send,
)
from matchmaker.core.conversation import Conversation
from matchmaker.core.effects import Effect, Refuse, ReplyWith
from matchmaker.core.events import (
    EnteredPool,
    EntryExpired,
    EntryPoolClosed,
    EntryWithdrawn,
    MemberJoined,
    MemberLeft,
    MessageRelayed,
    PoolLeft,
    SessionFormed,
    SessionLeft,
)
from matchmaker.core.parties import PartyCreated, PartyEntered, PartyInfo, PartyLeft
from matchmaker.directory import ProjectDirectory
from matchmaker.model import MatchmakingPolicy, Project, RangeRule, Team, Widen

POLICIES = (
    MatchmakingPolicy(name="duo", mode="auto", group_size=2, default=True),
    MatchmakingPolicy(name="trio", mode="auto", group_size=3),
    MatchmakingPolicy(name="pair", mode="auto", group_size=2),
    # Groups of two form after a second (a seat open for a backfill).
    MatchmakingPolicy(
        name="squad", mode="auto", group_size=3, min_group_size=2, fill_timeout_ms=1000
    ),
    MatchmakingPolicy(
        name="ranked",
        mode="auto",
        group_size=3,
        min_group_size=2,
        fill_timeout_ms=1000,
        filter={"rating": RangeRule(within=100, widen=Widen(every_ms=1000, by=100, max=400))},
    ),
    # Two against two: a party of two plays on one team.
    MatchmakingPolicy(name="teams", mode="auto", group_size=4, teams=(Team("a", 2), Team("b", 2))),
)
RATINGS = [1000, 1100, 1300, 1600]
WIDEST = 400  # the ranked policy's widest window
PROJECT = Project(id="p", policies=POLICIES)
DIRECTORY = ProjectDirectory([PROJECT])
POOLS = [policy.name for policy in POLICIES]
LIMITS = Limits(control_burst=1_000_000, max_sessions_per_client=1000)
NAMES = ["a", "b", "c", "d", "e", "f"]


class Member:
    """One process: its core, its router, its connected clients' conversations."""

    def __init__(self, name: str, live: frozenset[str]) -> None:
        self.name = name
        self.view = live  # the live members as this one last noticed them
        self.core = Matchmaker(LIMITS, node=name)
        self.clients: dict[str, Conversation] = {}
        routes = Routes(
            name, self.core, live, project=lambda client: PROJECT, conversation=self.conversation
        )
        self.router = Router(routes)

    def conversation(self, now_ms: int) -> Conversation:
        return Conversation(self.core, DIRECTORY, require_declared=False, now_ms=now_ms)


class Cluster(RuleBasedStateMachine):
    """Members exchanging their routers' messages; no losses."""

    lossy = False
    entered: Sequence[str | None] = (*POOLS, None)  # the pools clients enter (None: default)
    initial = 3  # members at the start

    def __init__(self) -> None:
        super().__init__()
        # Party codes drawn from a seeded source, not ``secrets``: a code's holder after a
        # membership change is the ring's, and Hypothesis replays an example only if the
        # same steps route it the same way.
        self.minting = patch.object(parties, "secrets", random.Random(0))
        self.minting.start()
        self.now_ms = 1_000_000
        self.members: dict[str, Member] = {}
        self.names = iter(NAMES)
        live = frozenset(itertools.islice(self.names, self.initial))
        for name in sorted(live):
            self.members[name] = Member(name, live)
        self.links: dict[tuple[str, str], deque[Message]] = defaultdict(deque)
        self.home: dict[str, str] = {}  # connected clients' members
        self.requests = itertools.count(1)
        # Per client: request id -> the answers it got; the pools it waits in (the model).
        self.answers: dict[str, dict[str, list[Effect]]] = {}
        self.waiting: dict[str, set[str]] = {}
        self.told: dict[tuple[str, str], int] = defaultdict(int)  # (client, session) -> times
        self.heard: dict[str, list[Event]] = defaultdict(list)  # client -> every event, in order
        # Per client, the (pool, entry id)s it was told it waits with (pool.entered,
        # party.entered) and those it heard end: it hears of an entry only under an id it
        # was told, whatever moved meanwhile, and of its end once.
        self.entry_ids: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self.ended: dict[str, set[tuple[str, str]]] = defaultdict(set)
        # When (in the order clients are told things) each waiting entry was entered and
        # each client last matched: one process withdraws a matched client's other entries.
        self.clock = itertools.count()
        self.entered_at: dict[tuple[str, str], int] = {}
        self.matched_at: dict[str, int] = {}
        self.sessions: dict[str, set[str]] = {}  # session id -> its members
        # Per connected client: its sessions and their members, as its events tell them.
        self.views: dict[str, dict[str, set[str]]] = {}
        # Errors without a request id, per client; sends without one: (sender, session,
        # data, the other members it was sent to as the sender saw them).
        self.errors: dict[str, list[Refuse]] = defaultdict(list)
        self.unnumbered: list[tuple[str, str, bytes, set[str]]] = []
        # Parties: each client's, as its answers say; the codes created; the requests that
        # entered a party; per (client, pool) the party entry it waits with; per party entry,
        # the sessions and teams its members were told they play in.
        self.party_of: dict[str, str] = {}
        self.codes: list[str] = []
        self.party_requests: set[str] = set()
        self.party_entry: dict[tuple[str, str], str] = {}
        self.party_sessions: dict[str, set[str]] = defaultdict(set)
        self.party_teams: dict[str, set[str | None]] = defaultdict(set)

    # -- the shell, as node.py and the data plane are -----------------------------------------

    def run(self, member: Member, actions: Sequence[Action]) -> None:
        for action in actions:
            match action:
                case Post(node=node, message=message):
                    if node in member.router.routes.departed:  # not written: as if Redis refused it
                        self.run(member, member.router.lost(message, self.now_ms))
                    elif node in self.members:
                        self.links[member.name, node].append(message)
                case Perform(client_id=client_id, effects=effects):
                    if client_id in member.clients:
                        self.perform(member, client_id, effects)
                case Deliver(deliveries=deliveries, remote=remote):
                    self.deliver(member, deliveries, remote=remote)

    def perform(self, member: Member, client_id: str, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Refuse) and effect.request_id is None:
                self.errors[client_id].append(effect)  # about a send without an id
            elif isinstance(effect, ReplyWith | Refuse):
                assert effect.request_id is not None
                self.answers[client_id][effect.request_id].append(effect)
                if isinstance(effect, ReplyWith):
                    self.answered(client_id, effect)
            elif isinstance(effect, tuple):
                self.deliver(member, [effect], remote=True)

    def answered(self, client_id: str, reply: ReplyWith) -> None:
        answer = reply.answer
        if isinstance(answer, EnteredPool):
            self.entry_ids[client_id].add((answer.pool, answer.entry_id))
            self.waiting[client_id].add(answer.pool)
            self.entered_at[client_id, answer.pool] = next(self.clock)
            if reply.request_id in self.party_requests:
                self.party_entry[client_id, answer.pool] = answer.entry_id
        elif isinstance(answer, PartyInfo):  # created or joined
            self.party_of[client_id] = answer.party_id
            if isinstance(answer, PartyCreated):
                self.codes.append(answer.code)
        elif isinstance(answer, PartyLeft):
            self.party_of.pop(client_id, None)
        elif isinstance(answer, PoolLeft):
            if answer.entry_id:  # ("": its member died before it heard of the entry)
                self.heard_end(client_id, answer.pool, answer.entry_id)
            self.waiting[client_id].discard(answer.pool)
        elif isinstance(answer, SessionLeft):
            self.views[client_id].pop(answer.session_id, None)
            self.told.pop((client_id, answer.session_id), None)

    def deliver(self, member: Member, deliveries: list[Delivery], *, remote: bool) -> None:
        for recipients, event in deliveries:
            elsewhere = []
            for client_id in recipients:
                if client_id in member.clients:
                    self.told_event(client_id, event)
                else:
                    elsewhere.append(client_id)
            self.run(member, member.router.observe(recipients, event))
            if elsewhere and remote:
                self.run(member, member.router.deliver_remote(elsewhere, event))

    def told_event(self, client_id: str, event: Event) -> None:
        self.heard[client_id].append(event)
        if isinstance(event, SessionFormed):
            self.told[client_id, event.session_id] += 1
            self.sessions[event.session_id] = {m.client_id for m in event.members}
            self.views[client_id][event.session_id] = {m.client_id for m in event.members}
            ids = [m.client_id for m in event.members]
            assert len(ids) == len(set(ids)), (event.session_id, ids)  # nobody twice
            placed = [c for team in (event.teams or {}).values() for c in team]
            assert len(placed) == len(set(placed)), event
            assert set(placed) <= set(ids), event
            if event.pool is not None:
                self.waiting[client_id].discard(event.pool)
                self.matched_at[client_id] = next(self.clock)
                entry_id = self.party_entry.pop((client_id, event.pool), None)
                if entry_id is not None:
                    self.party_sessions[entry_id].add(event.session_id)
                    teams = (event.teams or {}).items()
                    self.party_teams[entry_id].add(
                        next((name for name, team in teams if client_id in team), None)
                    )
        elif isinstance(event, PartyEntered):
            self.entry_ids[client_id].add((event.pool, event.entry_id))
            self.waiting[client_id].add(event.pool)
            self.entered_at[client_id, event.pool] = next(self.clock)
            self.party_entry[client_id, event.pool] = event.entry_id
        elif isinstance(event, MemberJoined):
            self.views[client_id].setdefault(event.session_id, set()).add(event.client_id)
        elif isinstance(event, MemberLeft):
            self.views[client_id].get(event.session_id, set()).discard(event.client_id)
        elif isinstance(event, EntryWithdrawn | EntryExpired | EntryPoolClosed):
            self.heard_end(client_id, event.pool, event.entry_id)
            self.waiting[client_id].discard(event.pool)
            self.party_entry.pop((client_id, event.pool), None)

    def heard_end(self, client_id: str, pool: str, entry_id: str) -> None:
        """``client_id`` hears its entry ``entry_id`` in ``pool`` ended (left, withdrawn,
        expired or closed): once, and one it was told of, unless a message was lost (its
        ``pool.entered`` may be). (Not checked yet for an entry its own member minted: one
        moved into its member's own core is known there by a new id, which nothing
        translates.)"""
        entry = (pool, entry_id)
        if not self.lossy and not entry_id.startswith(f"e{self.home.get(client_id)}-"):
            assert entry in self.entry_ids[client_id], (client_id, entry, self.entry_ids[client_id])
        assert entry not in self.ended[client_id], (client_id, entry)
        self.ended[client_id].add(entry)

    def request(self, client_id: str, command: ClientCommand) -> None:
        member = self.members[self.home[client_id]]
        conversation = member.clients[client_id]
        request_id = str(next(self.requests))
        self.answers[client_id][request_id] = []
        if isinstance(command, EnterPool) and command.party_id is not None:
            self.party_requests.add(request_id)
        forwarded = member.router.forward(
            conversation, command, request_id, self.now_ms, sendable=True
        )
        if forwarded is None:
            self.perform(member, client_id, conversation.receive(command, request_id, self.now_ms))
        else:
            self.run(member, forwarded)

    def pass_one(self, link: tuple[str, str]) -> None:
        message = self.links[link].popleft()
        receiver = self.members.get(link[1])
        if receiver is not None:
            actions = receiver.router.receive(link[0], message, self.now_ms)
            self.run(receiver, actions)

    def notice(self, member: Member) -> None:
        live = frozenset(self.members)
        joined, died = live - member.view, member.view - live
        member.view = live
        actions = member.router.members_changed(
            live, joined, died, list(member.clients), self.now_ms
        )
        self.run(member, actions)

    def busy_links(self) -> list[tuple[str, str]]:
        return sorted(link for link, queue in self.links.items() if queue)

    # -- rules --------------------------------------------------------------------------------

    @rule(data=st.data(), region=st.sampled_from(["eu", "us"]), rating=st.sampled_from(RATINGS))
    def connect(self, data: st.DataObject, region: str, rating: int) -> None:
        self.connected(data.draw(st.sampled_from(sorted(self.members))), region, rating)

    def connected(self, name: str, region: str, rating: int) -> str:
        """A new client of member ``name``; its id."""
        member = self.members[name]
        conversation = member.conversation(self.now_ms)
        hello = Greet(1, project="p", attributes={"region": region, "rating": rating})
        (welcome,) = conversation.receive(hello, "hello", self.now_ms)
        assert isinstance(welcome, ReplyWith)
        assert conversation.client is not None
        client_id = conversation.client.client_id
        member.clients[client_id] = conversation
        self.home[client_id] = member.name
        self.answers[client_id] = {}
        self.waiting[client_id] = set()
        self.views[client_id] = {}
        self.run(member, member.router.client_attached(client_id, self.now_ms))
        return client_id

    @precondition(lambda self: self.home)
    @rule(data=st.data())
    def enter(self, data: st.DataObject) -> None:
        client_id = data.draw(st.sampled_from(sorted(self.home)))
        pool = data.draw(st.sampled_from(self.entered))
        self.request(client_id, EnterPool(policy=pool))

    @precondition(lambda self: self.home)
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        client_id = data.draw(st.sampled_from(sorted(self.home)))
        pool = data.draw(st.sampled_from(sorted({p or "duo" for p in self.entered})))
        self.request(client_id, LeavePool(pool))

    @precondition(lambda self: self.home)
    @rule(data=st.data())
    def create_party(self, data: st.DataObject) -> None:
        self.request(data.draw(st.sampled_from(sorted(self.home))), CreateParty())

    @precondition(lambda self: self.home and self.codes)
    @rule(data=st.data())
    def join_party(self, data: st.DataObject) -> None:
        """A client joins a party by the code its creator read out."""
        client_id = data.draw(st.sampled_from(sorted(self.home)))
        self.request(client_id, JoinParty(data.draw(st.sampled_from(self.codes))))

    def in_parties(self) -> list[str]:
        return sorted(c for c in self.home if c in self.party_of)

    @precondition(lambda self: self.in_parties())
    @rule(data=st.data())
    def leave_party(self, data: st.DataObject) -> None:
        client_id = data.draw(st.sampled_from(self.in_parties()))
        self.request(client_id, LeaveParty(self.party_of[client_id]))

    @precondition(lambda self: self.in_parties())
    @rule(data=st.data())
    def enter_party(self, data: st.DataObject) -> None:
        """A party member enters its party (refused unless it leads, and where one of its
        members waits already, alone or with it: ``pool.already_entered``): the others
        are told ``party.entered``, not answered."""
        client_id = data.draw(st.sampled_from(self.in_parties()))
        pool = data.draw(st.sampled_from(self.entered))
        party_id = self.party_of[client_id]
        self.request(client_id, EnterPool(policy=pool, party_id=party_id))

    def in_sessions(self) -> list[tuple[str, str]]:
        return sorted((c, s) for c in self.home for s in self.views[c])

    @precondition(lambda self: self.in_sessions())
    @rule(data=st.data(), seats=st.integers(0, 2))
    def backfill(self, data: st.DataObject, seats: int) -> None:
        """A member asks for ``seats`` more members (0 cancels; too many is refused)."""
        client_id, session_id = data.draw(st.sampled_from(self.in_sessions()))
        self.request(client_id, Backfill(session_id, seats))

    @precondition(lambda self: self.in_sessions())
    @rule(data=st.data())
    def leave_session(self, data: st.DataObject) -> None:
        client_id, session_id = data.draw(st.sampled_from(self.in_sessions()))
        self.request(client_id, LeaveSession(session_id))

    @precondition(lambda self: self.home)
    @rule(data=st.data())
    def disconnect(self, data: st.DataObject) -> None:
        """A clean close: the client leaves its pools and sessions everywhere."""
        client_id = data.draw(st.sampled_from(sorted(self.home)))
        member = self.members[self.home.pop(client_id)]
        conversation = member.clients.pop(client_id)
        self.deliver(member, conversation.disconnect(self.now_ms), remote=True)
        self.run(member, member.router.client_gone(client_id))

    @precondition(lambda self: self.busy_links())
    @rule(data=st.data())
    def deliver_one(self, data: st.DataObject) -> None:
        self.pass_one(data.draw(st.sampled_from(self.busy_links())))

    @precondition(lambda self: len(self.members) < 4)
    @rule()
    def join(self) -> None:
        name = next(self.names, None)
        if name is not None:
            self.members[name] = Member(name, frozenset({*self.members, name}))

    @precondition(lambda self: self.in_sessions())
    @rule(data=st.data())
    def send(self, data: st.DataObject) -> None:
        """A member relays a message (with a request id: every one is answered, relayed or
        refused, even when the session's host dies meanwhile)."""
        client_id, session_id = data.draw(st.sampled_from(self.in_sessions()))
        self.request(client_id, Send(session_id, b'"hi"'))

    @precondition(lambda self: self.in_sessions())
    @rule(data=st.data())
    def send_unnumbered(self, data: st.DataObject) -> None:
        """A member relays a message without a request id (nothing answers it): it reaches
        the other members, or, if its host died before relaying it, its sender is told."""
        client_id, session_id = data.draw(st.sampled_from(self.in_sessions()))
        payload = f'"u{next(self.requests)}"'.encode()
        others = self.views[client_id][session_id] - {client_id}
        self.unnumbered.append((client_id, session_id, payload, others))
        member = self.members[self.home[client_id]]
        conversation = member.clients[client_id]
        command = Send(session_id, payload)
        forwarded = member.router.forward(conversation, command, None, self.now_ms, sendable=True)
        if forwarded is None:
            self.perform(member, client_id, conversation.receive(command, None, self.now_ms))
        else:
            self.run(member, forwarded)

    def check_unnumbered(self) -> None:
        """No send is dropped without an answer: every message sent without an id reached
        the other members still connected and in the session, or its sender was told it may
        be lost (an error about that session)."""
        for client_id, session_id, payload, others in self.unnumbered:
            if client_id not in self.home:
                continue
            present = [o for o in others if o in self.home and session_id in self.views[o]]
            heard = [
                o
                for o in present
                if any(isinstance(e, MessageRelayed) and e.data == payload for e in self.heard[o])
            ]
            told = any(
                (e.error.details or {}).get("session_id") == session_id
                for e in self.errors[client_id]
            )
            assert not present or heard or told, (client_id, session_id, payload)

    def hosts_of_spread_sessions(self) -> list[str]:
        """The members hosting a session with a member connected to another member."""
        return sorted(
            member.name
            for member in self.members.values()
            for session in member.core.sessions.values()
            if any(self.home.get(c, member.name) != member.name for c in session.members)
        )

    @precondition(lambda self: len(self.members) > 1 and self.hosts_of_spread_sessions())
    @rule(data=st.data())
    def host_dies(self, data: st.DataObject) -> None:
        """The fault of a host dying while members of its sessions live elsewhere: they
        stay in their session (re-hosted where they are), see at most a member leave that
        died with it, and every send is answered."""
        self.kill(data.draw(st.sampled_from(self.hosts_of_spread_sessions())))

    @precondition(lambda self: len(self.members) > 1)
    @rule(data=st.data())
    def die(self, data: st.DataObject) -> None:
        """A member dies with its clients; what was written to its inbox is gone."""
        self.kill(data.draw(st.sampled_from(sorted(self.members))))

    def kill(self, name: str) -> None:
        member = self.members.pop(name)
        for client_id in member.clients:
            del self.home[client_id]
        for link in [link for link in self.links if link[1] == name]:
            del self.links[link]

    @rule(data=st.data())
    def notice_change(self, data: st.DataObject) -> None:
        self.notice(self.members[data.draw(st.sampled_from(sorted(self.members)))])

    @precondition(lambda self: self.lossy or not self.busy_links())
    @rule()
    def tick(self) -> None:
        """A second passes; without losses, only once every message arrived (a message is
        never late by the answer timeout: the timeout is for what Redis lost)."""
        self.now_ms += 1000
        for member in list(self.members.values()):
            self.run(member, member.router.expire(self.now_ms))
            # The plane's timer: entry TTLs, and the rating windows' and backfills' widening.
            self.deliver(member, member.core.expire(self.now_ms), remote=True)

    @precondition(lambda self: self.lossy and self.busy_links())
    @rule(data=st.data(), told=st.booleans())
    def lose_one(self, data: st.DataObject, told: bool) -> None:
        """Redis loses a message: the sender's write failed (``told``), or it vanished."""
        sender, receiver = data.draw(st.sampled_from(self.busy_links()))
        message = self.links[sender, receiver].popleft()
        if told and sender in self.members:
            member = self.members[sender]
            self.run(member, member.router.lost(message, self.now_ms))
            # A request Redis did not take is refused at once, not at the timeout (a re-entry
            # after a member's change answers nobody).
            if (
                isinstance(message, Command)
                and message.client in member.clients
                and message.request_id not in {None, INTERNAL}
            ):
                assert self.answers[message.client][message.request_id or ""]

    # -- once everything settled -------------------------------------------------------------

    def settle(self) -> None:
        for member in list(self.members.values()):
            self.notice(member)
        for _ in range(ANSWER_TIMEOUT_MS // 1000 + 2):
            while links := self.busy_links():
                self.pass_one(links[0])
            # As the membership loop does at every heartbeat: a proxy made by a message of
            # a member that died unseen is dropped at the next look.
            for member in list(self.members.values()):
                self.notice(member)
            self.tick()
        assert not self.busy_links()

    def teardown(self) -> None:
        try:
            self.settle()
        finally:
            self.minting.stop()
        self.check_answers()
        self.check_parties()
        if not self.lossy:
            self.check_one_process()
            self.check_sessions()
            self.check_unnumbered()
            self.check_backfills()

    def check_answers(self) -> None:
        for member in self.members.values():  # all answered: no repeated enter awaited
            assert not member.router.routes.again, (member.name, member.router.routes.again)
        for client_id in self.home:
            for request_id, answers in self.answers[client_id].items():
                assert answers, f"request {request_id} of {client_id} was never answered"
                timed_out = [a for a in answers[:-1] if _code(a) == "cluster.unavailable"]
                assert len(answers) == 1 + len(timed_out), (request_id, answers)

    def check_parties(self) -> None:
        """The members of a party entry matched together play in one session, on one team."""
        for entry_id, sessions in self.party_sessions.items():
            assert len(sessions) == 1, (entry_id, sessions)
            assert len(self.party_teams[entry_id]) == 1, (entry_id, self.party_teams[entry_id])

    def check_one_process(self) -> None:
        """Each connected client waits where the model says, at the pool's owner only; its
        member follows no entry of it elsewhere that it does not wait with."""
        live = sorted(self.members)
        held: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for member in self.members.values():
            for live_pool in member.core.pools.values():
                for fifo in live_pool.buckets.values():
                    for entry in fifo.values():
                        for client_id in entry.holders():  # a party's members too
                            # Once per pool (alone or in its party): no session holds it twice.
                            assert (live_pool.name, member.name) not in held[client_id], client_id
                            held[client_id].add((live_pool.name, member.name))
        for client_id in self.home:
            where = held.get(client_id, set())
            assert {pool for pool, _ in where} == self.waiting[client_id], client_id
            matched = self.matched_at.get(client_id, -1)
            for pool in self.waiting[client_id]:
                assert self.entered_at[client_id, pool] > matched, (client_id, pool)
            for pool, member_name in where:
                assert member_name == owner(pool_key("p", pool), live), (client_id, pool)
            # Its member follows (would move, or enter again) no entry it does not wait with.
            home = self.members.get(self.home[client_id])  # (None: killed by a test's hand)
            followed = set(home.router.routes.waiting.get(client_id, {})) if home else set()
            assert followed <= self.waiting[client_id], (client_id, followed)
        assert set(held) <= set(self.home)

    def check_sessions(self) -> None:
        """Each connected client was told once of each session it is in, and its view of
        the members is the host's; the host is a live member (where most of the members
        are connected, as their homes computed it), even when the one that hosted it
        died with members alive elsewhere: no live client's session is ended."""
        for client_id, home in self.home.items():
            if home not in self.members:
                continue  # (a test that killed its member by hand)
            for session_id, view in self.views[client_id].items():
                hosts = [m for m in self.members.values() if session_id in m.core.sessions]
                assert len(hosts) <= 1, (session_id, [m.name for m in hosts])
                assert self.told[client_id, session_id] == 1, (client_id, session_id)
                assert hosts, (client_id, session_id)
                session = hosts[0].core.sessions[session_id]
                assert set(session.members) == view, (client_id, session_id)
            # Nobody connected is said to have left by disconnecting (its session ended),
            # unless it never heard of the session (its news died with the host).
            for event in self.heard[client_id]:
                if isinstance(event, MemberLeft) and event.reason == "disconnected":
                    left = event.client_id
                    if self.told[left, event.session_id]:
                        assert self.home.get(left) not in self.members, (client_id, event)

    def check_backfills(self) -> None:
        """Nothing is held; no open backfill leaves a waiting entry it would take in one
        process; no rating session spans more than the widest window."""
        live = sorted(self.members)
        for member in self.members.values():
            # Every newcomer seated by an offer was told of its session, or is gone.
            assert not member.router.routes.relaying, (member.name, member.router.routes.relaying)
            for client in member.core.clients.values():
                assert not any(e.held for e in client.entries.values()), client.client_id
            for session_id in member.core.backfills.hosted():
                view = member.core.backfills.opening(session_id)
                assert view is not None
                session, seats, opened_ms = view
                assert seats > 0
                assert session.origin is not None
                assert session.pool is not None
                pool_owner = self.members[owner(pool_key("p", session.pool), live)]
                pool = pool_owner.core.pools.get(session.origin.key)
                if pool is None or pool.spec != session.origin.spec:
                    continue
                waiting = pool.buckets.get(session.origin.bucket, {}).values()
                fits = [
                    e.client.client_id
                    for e in waiting
                    if e.client.client_id not in session.members
                    and pool.mode.fits(e, session, opened_ms, self.now_ms)
                ]
                assert not fits, (session_id, fits)
            for session in member.core.sessions.values():
                if session.pool == "ranked":
                    ratings = [m.client.attributes["rating"] for m in session.members.values()]
                    assert max(ratings) - min(ratings) <= WIDEST, (session.session_id, ratings)  # type: ignore[operator]


def _code(effect: Effect) -> str | None:
    return effect.error.code if isinstance(effect, Refuse) else None


class LossyCluster(Cluster):
    """The same, with messages lost: every request is still answered."""

    lossy = True


class BackfillCluster(Cluster):
    """The same, in the pools of three (a plain one and the rating one), where sessions
    lose members and ask for backfills while members join and die; clients enter both
    pools, leave them and enter again meanwhile."""

    entered = ("squad", "ranked")
    initial = 1  # the first join moves about half the pools from a session's host

    @precondition(lambda self: self.in_sessions())
    @rule(data=st.data())
    def backfill_one(self, data: st.DataObject) -> None:
        """A member asks for one more (as often as for any other count)."""
        self.backfill(data, 1)

    def open_pools(self) -> list[str]:
        """The pools of the open backfills."""
        return sorted(
            {
                view[0].pool or ""
                for member in self.members.values()
                for session_id in member.core.backfills.hosted()
                if (view := member.core.backfills.opening(session_id)) is not None
            }
        )

    @precondition(lambda self: self.open_pools())
    @rule(data=st.data(), rating=st.sampled_from(RATINGS))
    def arrive_for_a_seat(self, data: st.DataObject, rating: int) -> None:
        """A client arrives in the pool of an open backfill."""
        pool = data.draw(st.sampled_from(self.open_pools()))
        client_id = self.connected(data.draw(st.sampled_from(sorted(self.members))), "eu", rating)
        self.request(client_id, EnterPool(policy=pool))

    @precondition(lambda self: len(self.members) < 4)
    @rule()
    def join_noticed(self) -> None:
        """A member joins and everyone notices at once: a third of the pools move, and
        the sessions formed in them have their seats filled at the new owner."""
        self.join()
        for member in list(self.members.values()):
            self.notice(member)

    @rule(data=st.data(), rating=st.sampled_from(RATINGS), pool=st.sampled_from(entered))
    def arrive(self, data: st.DataObject, rating: int, pool: str) -> None:
        """A client connects and enters a pool at once (so groups and backfills come often)."""
        client_id = self.connected(data.draw(st.sampled_from(sorted(self.members))), "eu", rating)
        self.request(client_id, EnterPool(policy=pool))


class LossyBackfillCluster(BackfillCluster):
    """The backfill machine with messages lost (openings, offers, answers): every request
    is still answered."""

    lossy = True


TestCluster = Cluster.TestCase
TestCluster.settings = settings(max_examples=200, stateful_step_count=50, deadline=None)
#: CI runs the backfill machines on Hypothesis's fixed seed, so a red run means a change
#: broke them, and a local run keeps exploring. (The failure of ``--hypothesis-seed=29``,
#: a newcomer told of a later newcomer before its own session, is fixed and has its
#: deterministic test in ``test_routing_backfill.py``.)
FIXED_IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
TestBackfillCluster = BackfillCluster.TestCase
TestBackfillCluster.settings = settings(
    max_examples=1000, stateful_step_count=80, deadline=None, derandomize=FIXED_IN_CI
)
TestLossyCluster = LossyCluster.TestCase
TestLossyCluster.settings = settings(max_examples=100, stateful_step_count=50, deadline=None)
TestLossyBackfillCluster = LossyBackfillCluster.TestCase
TestLossyBackfillCluster.settings = settings(
    max_examples=300, stateful_step_count=80, deadline=None, derandomize=FIXED_IN_CI
)
