"""The cluster's state machines with membership as Redis shows it, and Redis restarting.

:mod:`.test_routing_state_machine` tells each member the true live members. Here
each member decides them as :class:`~matchmaker.cluster.membership.Roster` does in
production, from a model of the registry: a key per member, renewed at every
heartbeat (a tick) and whenever the member looks, expiring :data:`MEMBER_TTL_MS`
after; an epoch. One more fault: Redis restarts and comes back empty (no keys, a new
epoch; in the lossy machines what was in the inboxes is gone too). Members that are
alive throughout must never be found dead for it: no connected client is told
``member_left {reason: disconnected}`` about a client still connected, and every
request (``session.send`` included) is answered; without losses, every client's
sessions are as their hosts hold them (the base machine's checks).
"""

from __future__ import annotations

import itertools

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from matchmaker.cluster.membership import MEMBER_TTL_MS, Roster
from matchmaker.core import Event
from matchmaker.core.commands import Send
from matchmaker.core.events import MemberLeft

from .test_routing_state_machine import Cluster, Member


class RegistryCluster(Cluster):
    """Members that find each other through a model of the Redis registry."""

    def __init__(self) -> None:
        self.beats: dict[str, int] = {}  # member -> when its key was last renewed (ms)
        self.epochs = itertools.count()
        self.epoch = b"0"
        self.rosters: dict[str, Roster] = {}
        super().__init__()
        for name in sorted(self.members):
            self.beats[name] = self.now_ms
            self.rosters[name] = Roster(name)
        for name in sorted(self.members):
            self.look(name)

    def look(self, name: str) -> tuple[frozenset[str], frozenset[str]]:
        """What ``Membership.poll`` does for ``name``: beat, read the registry, purge the
        dead; returns who joined and who died."""
        self.beats[name] = self.now_ms
        beating = [n for n, at in self.beats.items() if self.now_ms - at < MEMBER_TTL_MS]
        change = self.rosters[name].look(sorted(self.beats), beating, self.epoch, self.now_ms)
        for dead in change.purge:
            self.beats.pop(dead, None)
        return change.joined, change.died

    def notice(self, member: Member) -> None:
        joined, died = self.look(member.name)
        member.view = live = self.rosters[member.name].live
        local = list(member.clients)
        self.run(member, member.router.members_changed(live, joined, died, local, self.now_ms))

    def told_event(self, client_id: str, event: Event) -> None:
        if isinstance(event, MemberLeft) and event.reason == "disconnected":
            # Only a client that is gone (closed, or its process died) left this way.
            assert event.client_id not in self.home, (client_id, event)
        super().told_event(client_id, event)

    @precondition(lambda self: len(self.members) < 4)
    @rule()
    def join(self) -> None:
        """A process joins: its first look (``open_cluster``) before it serves."""
        name = next(self.names, None)
        if name is not None:
            self.rosters[name] = Roster(name)
            self.look(name)
            self.members[name] = Member(name, self.rosters[name].live)

    @precondition(lambda self: self.lossy or not self.busy_links())
    @rule()
    def redis_restarts_empty(self) -> None:
        """Redis is killed and started again without its data: no member's key, a new
        epoch, no inbox (without losses, only once nothing is in flight)."""
        self.beats.clear()
        self.epoch = str(next(self.epochs) + 1).encode()
        for link in list(self.links):
            self.links[link].clear()

    @precondition(lambda self: self.in_sessions())
    @rule(data=st.data())
    def send(self, data: st.DataObject) -> None:
        """``session.send`` with an id: answered (relayed, or refused) whatever happens."""
        client_id, session_id = data.draw(st.sampled_from(self.in_sessions()))
        self.request(client_id, Send(session_id, b'"hi"'))

    @precondition(lambda self: self.lossy or not self.busy_links())
    @rule()
    def tick(self) -> None:
        """A second: every live process renews its key (its heartbeat), then time passes."""
        for name in self.members:
            self.beats[name] = self.now_ms
        super().tick()


class LossyRegistryCluster(RegistryCluster):
    """The same, with messages lost (and Redis restarting with messages in flight)."""

    lossy = True


TestRegistryCluster = RegistryCluster.TestCase
TestRegistryCluster.settings = settings(max_examples=150, stateful_step_count=50, deadline=None)
TestLossyRegistryCluster = LossyRegistryCluster.TestCase
TestLossyRegistryCluster.settings = settings(
    max_examples=100, stateful_step_count=50, deadline=None
)
