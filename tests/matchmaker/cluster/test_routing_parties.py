"""Parties across members, step by step, on the simulated members of the state machine (no
Redis, no asyncio): a party held on one member, its members connected to others, its entry
waiting at the pool's owner, as one process would have it."""

from __future__ import annotations

from typing import Any

from matchmaker.cluster.ring import owner, pool_key
from matchmaker.core.commands import CreateParty, EnterPool, JoinParty, LeaveParty
from matchmaker.core.effects import Refuse, ReplyWith
from matchmaker.core.events import EnteredPool, EntryExpired, EntryWithdrawn, SessionFormed
from matchmaker.core.parties import PartyEntered, PartyInfo, PartyMemberLeft

from .test_routing_state_machine import Cluster

TRIO = EnterPool(policy="trio")  # groups of three


class Three(Cluster):
    initial = 3  # a, b and c


class Scene:
    """Three members; ``owner`` owns the trio pool, ``holder`` and ``other`` do not."""

    def __init__(self) -> None:
        self.cluster = Three()
        names = sorted(self.cluster.members)
        self.owner = owner(pool_key("p", "trio"), names)
        self.holder, self.other = (name for name in names if name != self.owner)

    def client(self, member: str) -> str:
        return self.cluster.connected(member, "eu", 1000)

    def ask(self, client_id: str, command: Any) -> Any:
        """Send ``command``, deliver every message; the answer (a reply's, or the code)."""
        self.cluster.request(client_id, command)
        self.drain()
        (answer,) = list(self.cluster.answers[client_id].values())[-1]
        if isinstance(answer, Refuse):
            return answer.error.code
        assert isinstance(answer, ReplyWith)
        return answer.answer

    def drain(self) -> None:
        while links := self.cluster.busy_links():
            self.cluster.pass_one(links[0])

    def heard(self, client_id: str, kind: type) -> list[Any]:
        return [e for e in self.cluster.heard.get(client_id, []) if isinstance(e, kind)]

    def party(self, leader: str, *others: str) -> PartyInfo:
        created = self.ask(leader, CreateParty())
        assert isinstance(created, PartyInfo)
        for other in others:
            joined = self.ask(other, JoinParty(created.code))
            assert isinstance(joined, PartyInfo), joined
        return created

    def sessions(self, *clients: str) -> set[frozenset[str]]:
        """The sessions ``clients`` were told of, each as its members."""
        return {
            frozenset(m.client_id for m in event.members)
            for client in clients
            for event in self.heard(client, SessionFormed)
        }


def test_a_party_held_on_one_member_waits_at_the_pools_owner_and_plays_there() -> None:
    scene = Scene()
    leader, friend = scene.client(scene.holder), scene.client(scene.other)
    party = scene.party(leader, friend)
    assert party.party_id.startswith(f"p{scene.holder}-")
    entered = scene.ask(leader, EnterPool(policy="trio", party_id=party.party_id))
    assert scene.heard(friend, PartyEntered) == [
        PartyEntered(party.party_id, "trio", entered.entry_id)
    ]
    pool_owner = scene.cluster.members[scene.owner].core
    assert [
        e.seats
        for fifo in next(iter(pool_owner.pools.values())).buckets.values()
        for e in fifo.values()
    ] == [2]
    solo = scene.client(scene.owner)
    scene.ask(solo, TRIO)
    assert scene.sessions(leader, friend, solo) == {frozenset({leader, friend, solo})}


def test_a_change_at_the_holder_withdraws_the_entry_at_the_owner_for_all() -> None:
    scene = Scene()
    leader, friend, third = (scene.client(m) for m in (scene.holder, scene.owner, scene.other))
    party = scene.party(leader, friend)
    entered = scene.ask(leader, EnterPool(policy="trio", party_id=party.party_id))
    scene.ask(friend, LeaveParty(party.party_id))
    withdrawn = EntryWithdrawn("trio", entered.entry_id, "party_changed")
    for member in (leader, friend):
        assert scene.heard(member, EntryWithdrawn) == [withdrawn]
    assert scene.cluster.members[scene.owner].core.pools == {}
    # A joiner makes it two again; entered as it is now, a solo completes it.
    assert isinstance(scene.ask(third, JoinParty(party.code)), PartyInfo)
    scene.ask(leader, EnterPool(policy="trio", party_id=party.party_id))
    solo = scene.client(scene.other)
    scene.ask(solo, TRIO)
    assert scene.sessions(leader, third, solo) == {frozenset({leader, third, solo})}


def test_a_leader_elsewhere_enters_through_the_holder_and_the_entry_moves_with_its_pool() -> None:
    scene = Scene()
    creator, leader, friend = (scene.client(m) for m in (scene.holder, scene.other, scene.other))
    party = scene.party(creator, leader, friend)
    scene.ask(creator, LeaveParty(party.party_id))
    assert scene.heard(leader, PartyMemberLeft)[-1].leader == leader
    assert scene.ask(friend, EnterPool(policy="trio", party_id=party.party_id)) == (
        "party.not_leader"
    )
    entered = scene.ask(leader, EnterPool(policy="trio", party_id=party.party_id))
    assert scene.heard(friend, PartyEntered)[-1].entry_id == entered.entry_id
    # The pool's owner dies: the holder enters the party again at the new owner.
    cluster = scene.cluster
    del cluster.members[scene.owner]
    for link in [link for link in cluster.links if link[1] == scene.owner]:
        del cluster.links[link]
    for member in list(cluster.members.values()):
        cluster.notice(member)
    scene.drain()
    solo = scene.client(scene.holder)
    scene.ask(solo, TRIO)
    assert scene.sessions(leader, friend, solo) == {frozenset({leader, friend, solo})}


def test_a_members_home_dying_withdraws_the_party_at_the_owner() -> None:
    scene = Scene()
    leader, friend = scene.client(scene.holder), scene.client(scene.other)
    party = scene.party(leader, friend)
    entered = scene.ask(leader, EnterPool(policy="trio", party_id=party.party_id))
    cluster = scene.cluster
    del cluster.members[scene.other]  # friend's member dies, with friend
    for link in [link for link in cluster.links if link[1] == scene.other]:
        del cluster.links[link]
    for member in list(cluster.members.values()):
        cluster.notice(member)
    scene.drain()
    assert EntryWithdrawn("trio", entered.entry_id, "party_changed") in scene.heard(
        leader, EntryWithdrawn
    )
    assert scene.heard(leader, PartyMemberLeft) == [
        PartyMemberLeft(party.party_id, friend, "disconnected", leader)
    ]
    assert all(not m.core.pools for m in cluster.members.values())


def joined_and_noticed(cluster: Cluster) -> str:
    """A fourth member joins and every member notices before any message moves: the teams
    pool moves from b to it (d)."""
    names = sorted(cluster.members)
    cluster.join()
    (joiner,) = set(cluster.members) - set(names)
    key = pool_key("p", "teams")
    assert (owner(key, names), owner(key, sorted(cluster.members))) == ("b", joiner)
    for member in list(cluster.members.values()):
        cluster.notice(member)
    return joiner


def waits_at(cluster: Cluster, client_id: str) -> set[tuple[str, str]]:
    """Where ``client_id`` waits: (pool, member) for each entry holding it, its party's too."""
    return {
        (pool.name, member.name)
        for member in cluster.members.values()
        for pool in member.core.pools.values()
        for fifo in pool.buckets.values()
        for entry in fifo.values()
        if client_id in entry.holders()
    }


def test_a_party_changed_while_its_entry_moves_with_its_pool_is_not_entered_again() -> None:
    """The leader's home moves the party's entry once its owner answers; the party changed
    meanwhile, so the entry is on its way out (the owner withdraws it): not entered again
    at the new owner for the party as it was, behind its members' backs."""
    scene = Scene()
    cluster = scene.cluster
    leader, friend = scene.client("a"), scene.client("a")
    party = scene.party(leader, friend)
    cluster.request(leader, EnterPool(policy="teams", party_id=party.party_id))
    cluster.request(friend, LeaveParty(party.party_id))  # before b has the entry
    joined_and_noticed(cluster)
    scene.drain()
    (entered,) = list(cluster.answers[leader].values())[-1]
    assert isinstance(entered, ReplyWith)
    assert isinstance(entered.answer, EnteredPool)
    withdrawn = EntryWithdrawn("teams", entered.answer.entry_id, "party_changed")
    assert scene.heard(leader, EntryWithdrawn) == [withdrawn]
    assert waits_at(cluster, leader) == waits_at(cluster, friend) == set()


def test_a_partys_entry_sent_to_a_former_owner_is_served_there_and_moved_by_its_home() -> None:
    """The leader's home sends its solo entry and then its party's to b, which owned the pool
    when it sent them and has seen d join since: b refuses the party's (the leader waits
    alone there) rather than passing it on to d, so the move of the solo entry leaves it
    at b and enters it at d, where it waits once."""
    scene = Scene()
    cluster = scene.cluster
    leader = scene.client("a")
    party = scene.party(leader)
    cluster.request(leader, EnterPool(policy="teams"))
    cluster.request(leader, EnterPool(policy="teams", party_id=party.party_id))
    joiner = joined_and_noticed(cluster)
    scene.drain()
    entered, refused = [answers for answers in cluster.answers[leader].values()][-2:]
    assert isinstance(entered[0], ReplyWith)
    assert [r.error.code for r in refused if isinstance(r, Refuse)] == ["pool.already_entered"]
    assert waits_at(cluster, leader) == {("teams", joiner)}


def led_from_c(scene: Scene) -> tuple[str, str, PartyInfo]:
    """A party held on a, led by a client of c (its creator left), with a client of b."""
    creator, leader, friend = scene.client("a"), scene.client("c"), scene.client("b")
    party = scene.party(creator, leader, friend)
    scene.ask(creator, LeaveParty(party.party_id))
    assert scene.heard(leader, PartyMemberLeft)[-1].leader == leader
    return leader, friend, party


def test_a_party_entry_refused_at_the_owner_is_not_entered_when_its_pool_moves() -> None:
    """The holder passes a remote leader's party entry on to the pool's owner, which refuses
    it (the leader waits there alone): when the pool moves, the holder does not enter it
    at the new owner, where the leader's solo entry moves."""
    scene = Scene()
    cluster = scene.cluster
    leader, friend, party = led_from_c(scene)
    scene.ask(leader, EnterPool(policy="teams"))
    refused = scene.ask(leader, EnterPool(policy="teams", party_id=party.party_id))
    assert refused == "pool.already_entered"
    joiner = joined_and_noticed(cluster)
    scene.drain()
    assert scene.heard(friend, PartyEntered) == []
    assert waits_at(cluster, leader) == {("teams", joiner)}
    assert waits_at(cluster, friend) == set()


def test_a_party_entry_matched_at_the_owner_is_not_entered_again_when_its_pool_moves() -> None:
    """The holder passes a remote leader's party entry on to the pool's owner, where it
    matches: when the pool moves, the holder does not enter it at the new owner."""
    scene = Scene()
    cluster = scene.cluster
    leader, friend, party = led_from_c(scene)
    scene.ask(leader, EnterPool(policy="teams", party_id=party.party_id))
    solos = [scene.client("b"), scene.client("b")]
    for solo in solos:
        scene.ask(solo, EnterPool(policy="teams"))
    assert scene.sessions(leader, friend, *solos) == {frozenset({leader, friend, *solos})}
    joined_and_noticed(cluster)
    scene.drain()
    assert waits_at(cluster, leader) == waits_at(cluster, friend) == set()


def test_a_remote_leaders_home_follows_its_party_entry_as_the_holder_moves_it() -> None:
    """The holder enters a remote leader's party entry again when its pool moves; its
    answer (through the holder) tells the leader's home the entry's new id, so when the
    party changes and the new owner withdraws that entry, the home lets go of it too, and
    the leader hears the withdrawal under the id it was told (not the moved entry's)."""
    scene = Scene()
    cluster = scene.cluster
    leader, friend, party = led_from_c(scene)
    entered = scene.ask(leader, EnterPool(policy="teams", party_id=party.party_id))
    assert isinstance(entered, EnteredPool)
    joiner = joined_and_noticed(cluster)
    scene.drain()
    assert waits_at(cluster, leader) == {("teams", joiner)}
    assert not entered.entry_id.startswith(f"e{joiner}-")
    scene.ask(friend, LeaveParty(party.party_id))
    (withdrawn,) = scene.heard(leader, EntryWithdrawn)
    assert withdrawn == EntryWithdrawn("teams", entered.entry_id, "party_changed")
    assert waits_at(cluster, leader) == set()
    assert not cluster.members["c"].router.routes.waiting.get(leader)


def test_a_remote_leaders_party_matched_as_it_enters_is_told_entered_first() -> None:
    """The owner answers a party entry the holder passed on to the leader's home itself,
    ahead of the session the entry completes (only a refusal goes back through the
    holder): the leader hears ``pool.entered``, then ``session.created``, even when the
    owner's messages to its home arrive before the holder's."""
    scene = Scene()
    cluster = scene.cluster
    leader, friend, party = led_from_c(scene)
    solos = [scene.client("b"), scene.client("b")]  # b owns the teams pool
    for solo in solos:
        scene.ask(solo, EnterPool(policy="teams"))
    cluster.request(leader, EnterPool(policy="teams", party_id=party.party_id))
    while links := cluster.busy_links():
        cluster.pass_one(("b", "c") if ("b", "c") in links else links[0])
    assert scene.sessions(leader, friend, *solos) == {frozenset({leader, friend, *solos})}
    (entered,) = list(cluster.answers[leader].values())[-1]
    assert isinstance(entered, ReplyWith)
    assert isinstance(entered.answer, EnteredPool)
    assert cluster.entered_at[leader, "teams"] < cluster.matched_at[leader]
    assert waits_at(cluster, leader) == set()


def test_a_remote_leaders_party_entry_withdrawn_by_a_change_stays_out_when_its_pool_moves() -> None:
    """The holder passed a remote leader's party entry on; the party changes, so the owner
    withdraws it: when the pool moves, the holder does not enter it again at the new owner."""
    scene = Scene()
    cluster = scene.cluster
    leader, friend, party = led_from_c(scene)
    scene.ask(leader, EnterPool(policy="teams", party_id=party.party_id))
    scene.ask(friend, LeaveParty(party.party_id))
    assert [e.reason for e in scene.heard(leader, EntryWithdrawn)] == ["party_changed"]
    joined_and_noticed(cluster)
    scene.drain()
    assert waits_at(cluster, leader) == set()


def test_a_party_changed_while_its_away_leaders_entry_is_to_be_entered_again_is_withdrawn() -> None:
    """The pool's owner died while the leader was away, so its home waits for it to be back
    to enter the party's entry again; the party changes meanwhile: the home withdraws the
    entry for every member (as the owner would have), and enters nothing once it is back."""
    scene = Scene()
    cluster = scene.cluster
    leader, friend = scene.client("a"), scene.client("c")
    party = scene.party(leader, friend)
    entered = scene.ask(leader, EnterPool(policy="teams", party_id=party.party_id))
    home = cluster.members["a"]
    cluster.deliver(home, home.core.suspend(leader), remote=True)
    cluster.run(home, home.router.client_away(leader))
    cluster.kill("b")  # the teams pool's owner
    for member in list(cluster.members.values()):
        cluster.notice(member)
    scene.drain()
    scene.ask(friend, LeaveParty(party.party_id))
    withdrawn = EntryWithdrawn("teams", entered.entry_id, "party_changed")
    assert scene.heard(leader, EntryWithdrawn) == scene.heard(friend, EntryWithdrawn) == [withdrawn]
    cluster.deliver(home, home.core.resume(leader, cluster.now_ms), remote=True)
    cluster.run(home, home.router.client_attached(leader, cluster.now_ms))
    scene.drain()
    assert waits_at(cluster, leader) == set()
    assert not home.router.routes.waiting.get(leader)


def test_a_party_entry_the_holder_could_not_pass_on_is_not_entered_when_its_pool_moves() -> None:
    """Redis does not take the holder's message passing a remote leader's party entry on
    (the leader's request times out, refused): when the pool moves, the holder does not
    enter at the new owner an entry that waits nowhere."""
    scene = Scene()
    cluster = scene.cluster
    leader, friend, party = led_from_c(scene)
    cluster.request(leader, EnterPool(policy="teams", party_id=party.party_id))
    cluster.pass_one(("c", "a"))  # to the holder, which passes it on to b
    holder = cluster.members["a"]
    passed_on = cluster.links["a", "b"].popleft()
    cluster.run(holder, holder.router.lost(passed_on, cluster.now_ms))
    joined_and_noticed(cluster)
    scene.drain()
    assert waits_at(cluster, leader) == waits_at(cluster, friend) == set()
    assert scene.heard(friend, PartyEntered) == []


def test_a_party_entry_passed_on_that_expired_is_not_entered_again_when_its_pool_moves() -> None:
    """The holder passes a remote leader's party entry on to the pool's owner, where it
    expires (its members are told so): the leader's home tells the holder, which enters
    it nowhere when the pool moves, as one process would not."""
    scene = Scene()
    cluster = scene.cluster
    leader, friend, party = led_from_c(scene)
    scene.ask(leader, EnterPool(policy="teams", party_id=party.party_id, ttl_ms=2000))
    holder = cluster.members["a"].router.parties
    assert set(holder.relayed) == {(leader, "teams")}
    for _ in range(3):
        cluster.tick()
        scene.drain()
    assert [e.pool for e in scene.heard(leader, EntryExpired)] == ["teams"]
    assert holder.relayed == {}
    joined_and_noticed(cluster)
    scene.drain()
    assert waits_at(cluster, leader) == waits_at(cluster, friend) == set()
    cluster.teardown()


def test_a_later_party_entry_stays_followed_when_the_one_before_it_closes() -> None:
    """The leader enters its party again (through the holder) before its home hears that
    the first entry expired: the holder still follows the second, and moves it with its
    pool."""
    scene = Scene()
    cluster = scene.cluster
    leader, friend, party = led_from_c(scene)
    scene.ask(leader, EnterPool(policy="teams", party_id=party.party_id, ttl_ms=2000))
    for _ in range(2):
        cluster.tick()  # expired at b, not heard of yet
    cluster.request(leader, EnterPool(policy="teams", party_id=party.party_id))
    scene.drain()
    assert [e.pool for e in scene.heard(leader, EntryExpired)] == ["teams"]
    joiner = joined_and_noticed(cluster)
    scene.drain()
    assert waits_at(cluster, leader) == waits_at(cluster, friend) == {("teams", joiner)}
    cluster.teardown()
