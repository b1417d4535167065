"""Backfill across members, step by step: a session whose pool moved to another member.

The simulated members of the state machine (no Redis, no asyncio), driven by hand
so each message's order is the test's: members ``a`` and ``b`` form a session at
``a`` in pool ``squad`` (groups of three, two after a second), then ``c`` joins
and owns ``squad`` from then on, so the session's open seats are filled at ``c``
(the opening mirrored there, entries held and offered to ``a``). The hypothesis
machines (``test_routing_state_machine.py``) cover the interleavings.
"""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.cluster.messages import Offer, Opening, Seated, Unmirror
from matchmaker.cluster.ring import owner, pool_key
from matchmaker.core.commands import (
    Backfill,
    EnterPool,
    JoinSession,
    LeavePool,
    LeaveSession,
    Send,
)
from matchmaker.core.effects import Refuse, ReplyWith
from matchmaker.core.events import (
    Backfilled,
    EntryWithdrawn,
    MemberJoined,
    MemberLeft,
    MessageRelayed,
    PoolLeft,
    SessionFormed,
)
from matchmaker.core.state import PoolEntry
from matchmaker.model import RangeRule, Widen

from .test_routing_state_machine import BackfillCluster

WINDOW = RangeRule(within=100, widen=Widen(every_ms=1000, by=100, max=400))
SKILL = "skill0"  # an ad-hoc pool owned by a, then by c (as squad is)


class TwoMembers(BackfillCluster):
    initial = 2  # a and b


class Scene:
    """The members ``a``, ``b`` (and ``c`` once joined) and what their clients were told."""

    def __init__(self) -> None:
        self.cluster = TwoMembers()
        self.told: dict[str, list[Any]] = self.cluster.heard  # events narrowed by each test

    def client(self, member: str, rating: int = 1000) -> str:
        return self.cluster.connected(member, "eu", rating)

    def ask(self, client_id: str, command: Any) -> Any:
        """Send ``command`` and deliver every message; the answer (a reply's or an error
        code)."""
        self.cluster.request(client_id, command)
        self.drain()
        answers = list(self.cluster.answers[client_id].values())[-1]
        (answer,) = answers
        if isinstance(answer, Refuse):
            return answer.error.code
        assert isinstance(answer, ReplyWith)
        return answer.answer

    def drain(self) -> None:
        while links := self.cluster.busy_links():
            self.cluster.pass_one(links[0])

    def tick(self) -> None:
        self.cluster.tick()
        self.drain()

    def join_c(self) -> None:
        cluster = self.cluster
        cluster.join()
        for member in list(cluster.members.values()):
            cluster.notice(member)
        self.drain()
        assert owner(pool_key("p", "squad"), sorted(cluster.members)) == "c"
        assert owner(pool_key("p", SKILL), sorted(cluster.members)) == "c"

    def session_at_a(self, pool: dict[str, Any], ratings: tuple[int, int] = (1000, 1000)) -> str:
        """Clients of a and b matched in ``pool`` (owned by a) into a session of two."""
        x, y = self.client("a", ratings[0]), self.client("b", ratings[1])
        for client_id in (x, y):
            assert isinstance(self.ask(client_id, EnterPool(**pool)), object)
        self.tick()
        (session_id,) = self.cluster.views[x]
        assert session_id.startswith("sa-")
        self.x, self.y = x, y
        return session_id

    def seat_open_at_c(
        self, pool: dict[str, Any] | None = None, ratings: tuple[int, int] = (1000, 1000)
    ) -> str:
        """:meth:`session_at_a` (in ``squad`` by default), ``c`` joined, then one seat
        opened by ``x``: its opening mirrored at ``c``, the pool's owner from then on."""
        session_id = self.session_at_a(SQUAD if pool is None else pool, ratings)
        self.join_c()
        assert self.ask(self.x, Backfill(session_id, 1)) == Backfilled(session_id, [], 1)
        return session_id

    def members(self, session_id: str) -> set[str]:
        return set(self.cluster.members["a"].core.sessions[session_id].members)

    def last(self, client_id: str, kind: type) -> Any:
        return next(e for e in reversed(self.told.get(client_id, [])) if isinstance(e, kind))

    def check(self) -> None:
        """What the state machine checks once everything settled."""
        self.cluster.teardown()


def held(entry: PoolEntry) -> bool:
    """Whether ``entry`` is held for a backfill (read afresh: a step changes it)."""
    return entry.held


SQUAD: dict[str, Any] = {"policy": "squad"}
RANKED: dict[str, Any] = {
    "pool": SKILL,
    "create": True,
    "mode": "auto",
    "group_size": 3,
    "min_group_size": 2,
    "fill_timeout_ms": 1000,
    "filter": {"rating": WINDOW},
}


def test_a_seat_opened_before_the_pool_moved_is_filled_at_its_new_owner() -> None:
    scene = Scene()
    session_id = scene.session_at_a(SQUAD)
    answer = scene.ask(scene.x, Backfill(session_id, 1))
    assert answer == Backfilled(session_id, [], 1)
    scene.join_c()  # the opening follows the pool to c
    assert scene.cluster.members["c"].core.backfills.mirrors() == [session_id]
    z = scene.client("c")
    scene.ask(z, EnterPool(policy="squad"))
    created = scene.last(z, SessionFormed)
    assert created.session_id == session_id
    assert {m.client_id for m in created.members} == {scene.x, scene.y, z}
    for member in (scene.x, scene.y):
        assert scene.last(member, MemberJoined).client_id == z
    assert scene.members(session_id) == {scene.x, scene.y, z}
    c = scene.cluster.members["c"].core
    assert c.backfills.mirrors() == []  # filled: the mirror went with it
    assert not any(c.clients[z].entries)  # the entry left as matched, not withdrawn
    scene.check()


def test_a_newcomer_connected_to_a_third_member_is_followed_by_the_host() -> None:
    """z is b's client, its entry waits at c, the session is a's: a adopts a proxy of z,
    and when z leaves for good, a's session loses it."""
    scene = Scene()
    session_id = scene.seat_open_at_c()
    z = scene.client("b")
    scene.ask(z, EnterPool(policy="squad"))
    assert scene.last(z, SessionFormed).session_id == session_id
    assert "a" in scene.cluster.members["b"].router.routes.holders[z]
    cluster = scene.cluster
    member = cluster.members[cluster.home.pop(z)]
    conversation = member.clients.pop(z)
    cluster.deliver(member, conversation.disconnect(cluster.now_ms), remote=True)
    cluster.run(member, member.router.client_gone(z))
    scene.drain()
    assert scene.members(session_id) == {scene.x, scene.y}
    assert scene.last(scene.x, MemberLeft).client_id == z
    scene.check()


def test_the_rating_window_holds_at_the_new_owner() -> None:
    scene = Scene()
    session_id = scene.seat_open_at_c(RANKED, (1000, 1050))
    far = scene.client("c", 1600)  # 550 from 1050: beyond the widest window (400)
    scene.ask(far, EnterPool(**RANKED))
    for _ in range(6):  # every window at its widest
        scene.tick()
    assert session_id not in scene.cluster.views[far]
    assert scene.members(session_id) == {scene.x, scene.y}
    near = scene.client("b", 1100)
    scene.ask(near, EnterPool(**RANKED))
    assert scene.last(near, SessionFormed).session_id == session_id
    assert scene.members(session_id) == {scene.x, scene.y, near}
    scene.check()


def test_the_mirror_goes_when_the_session_ends() -> None:
    scene = Scene()
    session_id = scene.seat_open_at_c()
    assert scene.cluster.members["c"].core.backfills.mirrors() == [session_id]
    for member in (scene.x, scene.y):
        scene.ask(member, LeaveSession(session_id))
    assert scene.cluster.members["c"].core.backfills.mirrors() == []
    z = scene.client("c")
    scene.ask(z, EnterPool(policy="squad"))
    assert session_id not in scene.cluster.views[z]
    scene.check()


def test_an_offer_for_a_session_that_ended_meanwhile_puts_the_entry_back() -> None:
    scene = Scene()
    session_id = scene.seat_open_at_c()
    cluster = scene.cluster
    z = scene.client("c")
    cluster.request(z, EnterPool(policy="squad"))  # held at c, offered to a
    (offer,) = cluster.links["c", "a"]
    assert isinstance(offer, Offer)
    entry = cluster.members["c"].core.clients[z].entries["squad"]
    assert held(entry)
    for member in (scene.x, scene.y):  # the session ends before the offer arrives
        cluster.request(member, LeaveSession(session_id))
    while cluster.links["b", "a"]:
        cluster.pass_one(("b", "a"))
    assert session_id not in cluster.members["a"].core.sessions
    cluster.pass_one(("c", "a"))  # declined
    *_, closed, declined = cluster.links["a", "c"]
    assert isinstance(closed, Unmirror)
    assert isinstance(declined, Seated)
    assert declined.created is None
    scene.drain()
    assert not held(entry)
    assert entry.live
    assert entry in cluster.members["c"].core.pools[entry.pool.key].buckets[()].values()
    assert z not in scene.cluster.members["a"].router.routes.proxies
    scene.check()


def test_an_entry_that_leaves_while_it_is_offered_is_not_seated() -> None:
    """z leaves the pool while its held entry's offer is on its way: the host seats it
    (it cannot know), the owner finds the entry gone and has the host take z out again,
    before z is told: z left its pool and is in no session, as in one process."""
    scene = Scene()
    session_id = scene.seat_open_at_c()
    cluster = scene.cluster
    z = scene.client("c")
    cluster.request(z, EnterPool(policy="squad"))  # held at c, offered to a
    assert isinstance(cluster.links["c", "a"][0], Offer)
    cluster.request(z, LeavePool("squad"))  # c's own client in c's pool: answered at once
    (left,) = list(cluster.answers[z].values())[-1]
    assert isinstance(left, ReplyWith)
    assert isinstance(left.answer, PoolLeft)
    cluster.pass_one(("c", "a"))  # a seats z
    assert scene.members(session_id) == {scene.x, scene.y, z}
    scene.drain()  # c answers Unseat: a takes z out
    assert scene.members(session_id) == {scene.x, scene.y}
    assert session_id not in cluster.views[z]
    assert z not in cluster.members["a"].router.routes.proxies
    assert scene.last(scene.x, MemberLeft).client_id == z
    scene.check()


def test_the_hosts_death_puts_held_entries_back() -> None:
    scene = Scene()
    scene.seat_open_at_c()
    cluster = scene.cluster
    z = scene.client("c")
    cluster.request(z, EnterPool(policy="squad"))
    entry = cluster.members["c"].core.clients[z].entries["squad"]
    assert held(entry)
    cluster.members.pop("a")  # with its clients and its inbox
    for client_id in [c for c, home in cluster.home.items() if home == "a"]:
        del cluster.home[client_id]
    cluster.links.pop(("c", "a"))
    cluster.notice(cluster.members["c"])
    assert not held(entry)
    assert cluster.members["c"].core.backfills.mirrors() == []
    scene.check()


@pytest.mark.parametrize(
    ("who", "seats", "code"),
    [
        ("member", 2, "backfill.invalid"),
        ("member", -1, "backfill.invalid"),
        ("stranger", 1, "session.not_member"),
        ("unknown", 1, "session.not_found"),
        ("room", 1, "backfill.unsupported"),
    ],
)
def test_errors_are_those_of_one_process(who: str, seats: int, code: str) -> None:
    scene = Scene()
    session_id = scene.session_at_a(SQUAD)
    scene.join_c()
    asker = scene.y  # b's client: its request goes to a
    if who == "stranger":
        asker = scene.client("c")
    elif who == "unknown":
        session_id = "sa-999"
    elif who == "room":
        joined = scene.ask(asker, JoinSession("lobby", create=True, public=None))
        session_id = joined.session_id
    assert scene.ask(asker, Backfill(session_id, seats)) == code
    scene.check()


def test_the_opening_is_mirrored_whole() -> None:
    """What the owner gets: the members' attributes, the seats, the pool's parameters."""
    scene = Scene()
    session_id = scene.session_at_a(RANKED, (1000, 1050))
    scene.join_c()
    cluster = scene.cluster
    cluster.request(scene.x, Backfill(session_id, 1))
    (opening,) = [m for m in cluster.links["a", "c"] if isinstance(m, Opening)]
    assert (opening.session, opening.pool, opening.policy, opening.seats) == (
        session_id,
        SKILL,
        False,
        1,
    )
    assert {client_id: a["rating"] for client_id, a in opening.members} == {
        scene.x: 1000,
        scene.y: 1050,
    }
    scene.drain()
    scene.check()


def test_an_entry_offered_when_its_client_is_matched_elsewhere_is_withdrawn() -> None:
    """z's entry in squad is held at c and offered to a when z is matched in ``ranked`` at
    b; then the session at a ends, so a declines. One process would have withdrawn the
    entry at z's match: it is not put back in its pool."""
    scene = Scene()
    session_id = scene.seat_open_at_c()
    cluster = scene.cluster
    z, w = scene.client("b"), scene.client("b")
    assert owner(pool_key("p", "ranked"), sorted(cluster.members)) == "b"
    scene.ask(z, EnterPool(policy="ranked"))
    cluster.request(z, EnterPool(policy="squad"))
    cluster.pass_one(("b", "c"))  # held at c, offered to a
    cluster.pass_one(("c", "b"))  # z hears pool.entered
    assert isinstance(cluster.links["c", "a"][0], Offer)
    cluster.request(w, EnterPool(policy="ranked"))
    cluster.tick()  # z and w matched at b: the withdrawal goes to c
    assert scene.last(z, SessionFormed).pool == "ranked"
    for member in (scene.x, scene.y):  # the session at a ends before the offer arrives
        cluster.request(member, LeaveSession(session_id))
    while cluster.links["b", "a"]:
        cluster.pass_one(("b", "a"))
    scene.drain()
    assert not cluster.members["c"].core.clients[z].entries
    assert scene.last(z, EntryWithdrawn).pool == "squad"
    scene.check()


def test_an_offer_for_a_client_gone_meanwhile_keeps_the_seat_open_at_the_owner() -> None:
    """z (a's) leaves for good while c offers its held entry to a: a declines, and c's
    mirror, which gave z the last seat, is open again for the next arrival."""
    scene = Scene()
    session_id = scene.seat_open_at_c()
    cluster = scene.cluster
    z = scene.client("a")
    cluster.request(z, EnterPool(policy="squad"))
    cluster.pass_one(("a", "c"))  # held at c, offered to a
    assert cluster.members["c"].core.backfills.mirrors() == []  # its one seat is z's
    member = cluster.members[cluster.home.pop(z)]
    cluster.deliver(member, member.clients.pop(z).disconnect(cluster.now_ms), remote=True)
    cluster.run(member, member.router.client_gone(z))
    scene.drain()
    assert cluster.members["c"].core.backfills.mirrors() == [session_id]
    w = scene.client("c")
    scene.ask(w, EnterPool(policy="squad"))
    assert scene.last(w, SessionFormed).session_id == session_id
    scene.check()


@pytest.mark.parametrize("home", ["a", "b"])
def test_a_newcomer_hears_of_its_session_before_the_next_newcomer(home: str) -> None:
    """Two offers for one session cross the host's answer to the first: the first
    newcomer's ``session.created``, which goes through the owner, still comes before the
    ``member_joined`` of the second, which the host sends straight to it (the shrunk
    failure of ``--hypothesis-seed=29``)."""
    scene = Scene()
    session_id = scene.session_at_a(SQUAD)
    assert scene.ask(scene.x, LeaveSession(session_id)) is not None
    assert scene.ask(scene.y, Backfill(session_id, 2)) == Backfilled(session_id, [], 2)
    scene.join_c()
    first, second = scene.client(home), scene.client("a")
    scene.cluster.request(first, EnterPool(policy="squad"))
    scene.cluster.pass_one((home, "c"))  # offered to a
    scene.cluster.request(second, EnterPool(policy="squad"))  # offered before a answers
    scene.drain()
    about = [e for e in scene.told[first] if getattr(e, "session_id", None) == session_id]
    assert [type(e) for e in about] == [SessionFormed, MemberJoined]
    assert about[1].client_id == second
    assert scene.members(session_id) == {scene.y, first, second}
    scene.check()


@pytest.mark.parametrize("home", ["a", "b", "c"])
def test_a_newcomer_hears_the_sessions_messages_wherever_it_is_connected(home: str) -> None:
    """Seated by c's offer, z hears what members send next, whether it is connected to
    the host (a), to the owner relaying its ``session.created`` (c), or to neither (b)."""
    scene = Scene()
    session_id = scene.seat_open_at_c()
    z = scene.client(home)
    scene.ask(z, EnterPool(policy="squad"))
    assert scene.last(z, SessionFormed).session_id == session_id
    scene.cluster.request(scene.x, Send(session_id, b'"hi"'))
    scene.drain()
    assert scene.last(z, MessageRelayed).sender == scene.x
    assert scene.cluster.members["a"].router.routes.relaying == {}
    scene.check()


def test_a_newcomer_told_before_its_home_hears_where_the_session_went_still_hears_it() -> None:
    """The session formed at c (squad's owner) for two clients of b went to b; z, a's
    client, is seated by c's offer. z's ``session.created``, relayed by c, reaches a
    before any word from b: a still sees it came from the owner, not the host, and says
    so (``Told``), so b sends z the session's next messages and follows z no longer (the
    shrunk failure of a random run: the host kept ``relaying`` z for ever)."""
    scene = Scene()
    scene.join_c()
    cluster = scene.cluster
    x, y = scene.client("b"), scene.client("b")
    for client_id in (x, y):
        scene.ask(client_id, EnterPool(policy="squad"))
    scene.tick()
    (session_id,) = cluster.views[x]
    host = cluster.members["b"]
    assert session_id.startswith("sc-")
    assert session_id in host.core.sessions
    assert scene.ask(x, Backfill(session_id, 1)) == Backfilled(session_id, [], 1)
    z = scene.client("a")
    cluster.request(z, EnterPool(policy="squad"))
    while links := [link for link in cluster.busy_links() if link != ("b", "a")]:
        cluster.pass_one(links[0])  # b's messages to a last
    assert scene.last(z, SessionFormed).session_id == session_id
    scene.drain()
    assert host.router.routes.relaying == {}
    cluster.request(x, Send(session_id, b'"hi"'))
    scene.drain()
    assert scene.last(z, MessageRelayed).sender == x
    scene.check()


def test_a_newcomer_gone_before_it_was_told_is_not_followed_by_the_host() -> None:
    """z (b's) is seated at a by c's offer; a keeps z's session events until b says z
    was told. z leaves for good before its ``session.created`` (relayed by c) arrives: a
    forgets it at its next look, rather than keep the record until c dies."""
    scene = Scene()
    session_id = scene.seat_open_at_c()
    cluster = scene.cluster
    z = scene.client("b")
    cluster.request(z, EnterPool(policy="squad"))
    for link in (("b", "c"), ("c", "a")):  # forwarded to c, offered to a
        while cluster.links[link]:
            cluster.pass_one(link)
    host = cluster.members["a"]
    assert host.router.routes.relaying == {(session_id, z): "c"}
    member = cluster.members[cluster.home.pop(z)]
    cluster.deliver(member, member.clients.pop(z).disconnect(cluster.now_ms), remote=True)
    cluster.run(member, member.router.client_gone(z))
    scene.tick()
    assert scene.members(session_id) == {scene.x, scene.y}
    assert host.router.routes.relaying == {}
    scene.check()


def test_an_offer_redis_did_not_take_puts_the_entry_back() -> None:
    """c's offer to a is lost (Redis did not take it): z's entry is not left held for a
    seat a never heard of: it is back in its pool."""
    scene = Scene()
    session_id = scene.seat_open_at_c()
    cluster = scene.cluster
    owner_c = cluster.members["c"]
    z = scene.client("c")
    cluster.request(z, EnterPool(policy="squad"))  # held at c, offered to a
    offer = cluster.links["c", "a"].pop()
    assert isinstance(offer, Offer)
    entry = owner_c.core.clients[z].entries["squad"]
    assert held(entry)
    cluster.run(owner_c, owner_c.router.lost(offer, cluster.now_ms))
    assert not held(entry)
    assert entry in owner_c.core.pools[entry.pool.key].buckets[()].values()
    assert z not in scene.members(session_id)
    cluster.lossy = True  # checked as LossyBackfillCluster is: a loss may leave a seat open
    scene.check()
