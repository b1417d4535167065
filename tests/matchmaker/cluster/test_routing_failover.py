"""Failover step by step: an entry that is withdrawn or left while its owner changes.

The simulated members of the state machine (no Redis, no asyncio), driven by hand
so each message's order is the test's. With members ``a`` and ``b``, pool ``trio``
is ``a``'s; once ``c`` joins it is ``c``'s. Pool ``ranked`` is ``b``'s while ``b``
lives, ``a``'s after. In one process a matched client waits in no pool, and a left
entry stays left; the cluster must agree whatever its members do meanwhile. The
hypothesis machines (``test_routing_state_machine.py``) cover the interleavings.
"""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.cluster.messages import Command, Withdraw
from matchmaker.cluster.ring import owner, pool_key
from matchmaker.core.commands import EnterPool, LeavePool
from matchmaker.core.effects import Effect, Refuse, ReplyWith
from matchmaker.core.events import EnteredPool, EntryWithdrawn, PoolLeft, SessionFormed

from .test_routing_state_machine import Cluster


class TwoMembers(Cluster):
    initial = 2  # a and b; c joins in some tests


class ThreeMembers(Cluster):
    initial = 3


class Scene:
    """The members and what their clients were told."""

    def __init__(self, initial: int = 2) -> None:
        self.cluster = ThreeMembers() if initial == 3 else TwoMembers()
        self.told: dict[str, list[Any]] = self.cluster.heard  # events narrowed by each test

    def client(self, member: str) -> str:
        return self.cluster.connected(member, "eu", 1000)

    def answers(self, client_id: str) -> list[Effect]:
        """The answers of ``client_id``'s last request."""
        return list(self.cluster.answers[client_id].values())[-1]

    def drain(self) -> None:
        while links := self.cluster.busy_links():
            self.cluster.pass_one(links[0])

    def join_c(self) -> None:
        """``c`` joins and every member notices, before any message is delivered."""
        cluster = self.cluster
        cluster.join()
        for member in list(cluster.members.values()):
            cluster.notice(member)
        assert owner(pool_key("p", "trio"), sorted(cluster.members)) == "c"

    def kill(self, name: str) -> None:
        """``name`` dies with its clients and its inbox; the others notice."""
        cluster = self.cluster
        cluster.members.pop(name)
        for client_id in [c for c, home in cluster.home.items() if home == name]:
            del cluster.home[client_id]
        for link in [link for link in cluster.links if link[1] == name]:
            del cluster.links[link]
        for member in list(cluster.members.values()):
            cluster.notice(member)

    def waits(self, client_id: str) -> set[tuple[str, str]]:
        """Where ``client_id`` has an entry: (pool, member)."""
        return {
            (name, member.name)
            for member in self.cluster.members.values()
            if (state := member.core.clients.get(client_id)) is not None
            for name in state.entries
        }

    def last_withdrawn(self, client_id: str) -> Any:
        return next(e for e in reversed(self.told[client_id]) if isinstance(e, EntryWithdrawn))

    @staticmethod
    def entry_id_of(answer: Effect) -> str:
        assert isinstance(answer, ReplyWith)
        assert isinstance(answer.answer, EnteredPool)
        return answer.answer.entry_id

    def entry_id(self, client_id: str, pool: str) -> str:
        """The id in ``client_id``'s ``pool.entered`` for ``pool``."""
        (entry_id,) = (
            answer.answer.entry_id
            for answers in self.cluster.answers[client_id].values()
            for answer in answers
            if isinstance(answer, ReplyWith)
            and isinstance(answer.answer, EnteredPool)
            and answer.answer.pool == pool
        )
        return entry_id

    def check(self) -> None:
        """What the state machine checks once everything settled."""
        self.cluster.teardown()


def test_a_client_matched_while_its_other_owner_dies_is_not_entered_again() -> None:
    """x (a's) waits in ``ranked`` at b and is matched in ``duo`` at a; b dies before
    the withdrawal reaches it. One process would have withdrawn the ``ranked`` entry:
    x is told so and waits nowhere, instead of being entered again at a."""
    scene = Scene(3)
    cluster = scene.cluster
    x, y = scene.client("a"), scene.client("a")
    assert owner(pool_key("p", "ranked"), sorted(cluster.members)) == "b"
    cluster.request(x, EnterPool(policy="ranked"))
    scene.drain()
    (entered,) = scene.answers(x)
    assert isinstance(entered, ReplyWith)
    assert isinstance(entered.answer, EnteredPool)
    assert scene.waits(x) == {("ranked", "b")}
    cluster.request(x, EnterPool(policy="duo"))
    cluster.request(y, EnterPool(policy="duo"))  # matched at a at once
    assert isinstance(scene.told[x][-1], SessionFormed)
    assert any(isinstance(m, Withdraw) for m in cluster.links["a", "b"])
    scene.kill("b")  # before the withdrawal reached it
    scene.drain()
    assert scene.waits(x) == set()
    withdrawn = [e for e in scene.told[x] if isinstance(e, EntryWithdrawn)]
    assert withdrawn == [EntryWithdrawn("ranked", entered.answer.entry_id, "matched")]
    scene.check()


def test_an_entry_entered_again_while_the_matched_one_is_withdrawn_keeps_both_followed() -> None:
    """x enters ``ranked`` (at b) again after its match, before b withdrew the first entry,
    and b dies: x is told the first was withdrawn, and its new enter is refused."""
    scene = Scene(3)
    cluster = scene.cluster
    x, y = scene.client("a"), scene.client("a")
    cluster.request(x, EnterPool(policy="ranked"))
    scene.drain()
    (entered,) = scene.answers(x)
    assert isinstance(entered, ReplyWith)
    assert isinstance(entered.answer, EnteredPool)
    cluster.request(x, EnterPool(policy="duo"))
    cluster.request(y, EnterPool(policy="duo"))  # matched at a at once
    cluster.request(x, EnterPool(policy="ranked"))  # after b's withdrawal, not yet read
    scene.kill("b")
    scene.drain()
    withdrawn = [e for e in scene.told[x] if isinstance(e, EntryWithdrawn)]
    assert withdrawn == [EntryWithdrawn("ranked", entered.answer.entry_id, "matched")]
    (refused,) = scene.answers(x)
    assert isinstance(refused, Refuse)
    assert refused.error.code == "cluster.unavailable"
    assert scene.waits(x) == set()
    scene.check()


def test_an_enter_repeated_and_entered_after_the_match_is_followed_when_its_owner_dies() -> None:
    """x enters ``pair`` twice; its owner matches the first entry, then enters the
    second (the first is gone: no ``pool.already_entered``), and dies before x's
    member's withdrawal, sent behind the second enter, arrives. x was told the second
    entry is in: its member follows it, and tells x it was withdrawn, as the withdrawal
    would have (the shrunk failure of ``--hypothesis-seed=2016``: x was told nothing)."""
    scene = Scene(3)
    cluster = scene.cluster
    pool_owner = owner(pool_key("p", "pair"), sorted(cluster.members))
    home = next(name for name in sorted(cluster.members) if name != pool_owner)
    x, y = scene.client(home), scene.client(pool_owner)
    cluster.request(x, EnterPool(policy="pair"))
    cluster.request(x, EnterPool(policy="pair"))  # refused, unless the first matched
    cluster.pass_one((home, pool_owner))  # the first waits
    cluster.request(y, EnterPool(policy="pair"))  # matched with x at once
    while cluster.links[pool_owner, home]:  # x hears of the first and of its session
        cluster.pass_one((pool_owner, home))
    assert isinstance(scene.told[x][-1], SessionFormed)
    cluster.pass_one((home, pool_owner))  # the second: entered (x's withdrawal follows)
    assert [type(m) for m in cluster.links[home, pool_owner]] == [Withdraw]
    cluster.members.pop(pool_owner)  # dies with its inbox, unnoticed yet
    del cluster.links[home, pool_owner]
    cluster.pass_one((pool_owner, home))  # what it sent before: the second is in
    first, second = (answers[0] for answers in cluster.answers[x].values())
    second_id = scene.entry_id_of(second)
    assert second_id != scene.entry_id_of(first)
    for member in list(cluster.members.values()):
        cluster.notice(member)
    scene.drain()
    assert scene.last_withdrawn(x) == EntryWithdrawn("pair", second_id, "matched")
    assert scene.waits(x) == set()
    scene.check()


def test_a_repeated_enter_whose_member_dies_unanswered_is_refused_at_once() -> None:
    """x waits in ``pair`` and enters it again; the owner dies before answering: the
    repeated enter is refused when the death is noticed (not at the answer timeout), and
    the entry x has is entered again at the next owner."""
    scene = Scene(3)
    cluster = scene.cluster
    pool_owner = owner(pool_key("p", "pair"), sorted(cluster.members))
    home = next(name for name in sorted(cluster.members) if name != pool_owner)
    x = scene.client(home)
    cluster.request(x, EnterPool(policy="pair"))
    scene.drain()
    cluster.request(x, EnterPool(policy="pair"))  # on its way
    scene.kill(pool_owner)
    (refused,) = scene.answers(x)
    assert isinstance(refused, Refuse)
    assert refused.error.code == "cluster.unavailable"
    assert cluster.members[home].router.routes.again == {}
    scene.drain()
    assert scene.waits(x) == {("pair", owner(pool_key("p", "pair"), sorted(cluster.members)))}
    scene.check()


def test_an_entry_that_reaches_the_host_after_the_match_is_withdrawn() -> None:
    """x (a's) waits in ``squad`` at c and enters ``trio`` (c's too); c matches it in
    ``squad`` before the ``pool.enter`` arrives, so c's core had no ``trio`` entry to
    withdraw: a has c withdraw it, as one process would (entered before the match)."""
    scene = Scene(3)
    cluster = scene.cluster
    live = sorted(cluster.members)
    assert owner(pool_key("p", "squad"), live) == owner(pool_key("p", "trio"), live) == "c"
    x, y = scene.client("a"), scene.client("b")
    cluster.request(x, EnterPool(policy="squad"))
    scene.drain()
    cluster.request(x, EnterPool(policy="trio"))  # on its way to c
    cluster.request(y, EnterPool(policy="squad"))
    cluster.pass_one(("b", "c"))
    cluster.tick()  # c forms a group of two in squad
    scene.drain()
    assert scene.last_withdrawn(x) == EntryWithdrawn("trio", scene.entry_id(x, "trio"), "matched")
    assert scene.waits(x) == set()
    scene.check()


def test_a_client_matched_while_its_other_pool_moves_is_not_entered_again() -> None:
    """The same when the other pool moves to a member that joins: the entry is
    withdrawn where it is, not moved."""
    scene = Scene()
    cluster = scene.cluster
    x, y = scene.client("b"), scene.client("b")
    cluster.request(x, EnterPool(policy="trio"))  # a's
    scene.drain()
    cluster.request(x, EnterPool(policy="ranked"))  # b's: matched at b
    cluster.request(y, EnterPool(policy="ranked"))
    cluster.tick()  # groups of two after a second
    assert any(isinstance(e, SessionFormed) for e in scene.told[x])
    scene.join_c()  # trio is c's now; b's withdrawal has not reached a
    scene.drain()
    assert scene.waits(x) == set()
    assert [e.pool for e in scene.told[x] if isinstance(e, EntryWithdrawn)] == ["trio"]
    scene.check()


def test_a_move_leaves_the_entry_it_moves_not_one_entered_since() -> None:
    """x (b's) waits in ``trio`` at a and enters it again; a matches the first entry
    before the second enter arrives, so enters it (nothing to refuse it for). c joins,
    and b, not told of the match yet, moves the first entry to c: its leave at a, behind
    the second enter, names the first, and does not take the second, which x was told
    is in. x's withdrawal, behind both, withdraws the second, and x is told so, as when
    a dies (the failure of a random run: the second was gone untold, and b followed it
    for ever); the entry the move made at c, after the first matched, x never hears of
    (it was told of no such entry)."""
    scene = Scene()
    cluster = scene.cluster
    x, y, z = scene.client("b"), scene.client("a"), scene.client("a")
    cluster.request(x, EnterPool(policy="trio"))  # a's
    scene.drain()
    cluster.request(x, EnterPool(policy="trio"))  # refused, unless the first matched
    cluster.request(y, EnterPool(policy="trio"))
    cluster.request(z, EnterPool(policy="trio"))  # matched at a with x's first entry
    assert [type(m) for m in cluster.links["b", "a"]] == [Command]  # the second, on its way
    scene.join_c()  # trio is c's now: b moves the first entry there
    scene.drain()
    first, second = (scene.entry_id_of(answers[0]) for answers in cluster.answers[x].values())
    assert first != second
    withdrawn = [e for e in scene.told[x] if isinstance(e, EntryWithdrawn)]
    assert withdrawn == [EntryWithdrawn("trio", second, "matched")]
    assert scene.waits(x) == set()
    assert cluster.members["b"].router.routes.waiting.get(x, {}) == {}
    assert not cluster.members["b"].router.routes.strays
    scene.check()


def test_a_moved_entry_moves_again_once_its_new_member_said_which_it_is() -> None:
    """``pool27`` is a's, then c's once c joins, then d's once d joins. x (b's) waits
    there at a; b moves it to c and, d joining before c answered the move, moves it
    again only once c did: the leave it sends c then names the entry c entered for the
    move, not the one x's repeated enter made there after that one matched."""
    scene = Scene()
    cluster = scene.cluster
    adhoc = EnterPool(pool="pool27", create=True, mode="auto", group_size=3)
    x = scene.client("b")
    cluster.request(x, adhoc)
    scene.drain()
    scene.join_c()
    assert owner(pool_key("p", "pool27"), sorted(cluster.members)) == "c"
    cluster.request(x, adhoc)  # refused, unless the moved entry matched
    cluster.join()  # d: pool27 is d's; only b sees it yet
    assert owner(pool_key("p", "pool27"), sorted(cluster.members)) == "d"
    cluster.notice(cluster.members["b"])
    cluster.pass_one(("b", "c"))  # the move: entered at c
    y, z = scene.client("c"), scene.client("c")
    cluster.request(y, adhoc)
    cluster.request(z, adhoc)  # matched at c with x's moved entry
    scene.drain()
    first, second = (scene.entry_id_of(answers[0]) for answers in cluster.answers[x].values())
    assert first != second
    assert EntryWithdrawn("pool27", second, "matched") in scene.told[x]
    assert scene.waits(x) == set()
    assert cluster.members["b"].router.routes.waiting.get(x, {}) == {}
    scene.check()


@pytest.mark.parametrize("answered", [False, True], ids=["enter travelling", "entered"])
def test_an_entry_left_while_its_pool_moves_stays_left(answered: bool) -> None:
    """x (b's) enters ``trio`` at a and leaves it; c joins (``trio`` is c's now) before
    a heard the leave (and, ``answered`` false, the enter). The leave follows the entry
    to a: left there, it is entered nowhere else."""
    scene = Scene()
    cluster = scene.cluster
    x = scene.client("b")
    cluster.request(x, EnterPool(policy="trio"))
    if answered:
        scene.drain()
    cluster.request(x, LeavePool("trio"))
    scene.join_c()
    scene.drain()
    (left,) = scene.answers(x)
    assert isinstance(left, ReplyWith)
    assert isinstance(left.answer, PoolLeft)
    assert scene.waits(x) == set()
    scene.check()


def test_an_entry_left_after_its_pool_moved_is_left_where_it_waits() -> None:
    """x's ``pool.enter`` is still on its way to a when b sees c join and x leaves: the
    leave goes after the enter (to a), not to c, which never had the entry."""
    scene = Scene()
    cluster = scene.cluster
    x = scene.client("b")
    cluster.request(x, EnterPool(policy="trio"))
    scene.join_c()
    cluster.request(x, LeavePool("trio"))
    scene.drain()
    entered, left = (answers[0] for answers in cluster.answers[x].values())
    assert isinstance(entered, ReplyWith)
    assert isinstance(entered.answer, EnteredPool)
    assert isinstance(left, ReplyWith), left
    assert left.answer == PoolLeft("trio", entered.answer.entry_id)
    assert scene.waits(x) == set()
    scene.check()


def test_a_leave_whose_entry_s_owner_dies_is_answered_left() -> None:
    """x's leave is on its way to the member holding its entry when that member dies:
    the entry died with it, so the leave is answered (``pool.left``) and nothing is
    entered again."""
    scene = Scene(3)
    cluster = scene.cluster
    x = scene.client("a")
    cluster.request(x, EnterPool(policy="ranked"))  # b's
    scene.drain()
    (entered,) = scene.answers(x)
    assert isinstance(entered, ReplyWith)
    assert isinstance(entered.answer, EnteredPool)
    cluster.request(x, LeavePool("ranked"))
    scene.kill("b")
    scene.drain()
    (left,) = scene.answers(x)
    assert isinstance(left, ReplyWith), left
    assert left.answer == PoolLeft("ranked", entered.answer.entry_id)
    assert scene.waits(x) == set()
    scene.check()


def test_a_leave_that_timed_out_is_answered_when_its_entry_s_member_is_found_dead() -> None:
    """b dies unnoticed with x's entry; x's leave times out (``cluster.unavailable``) and x
    enters again (that too to b). When b's death is noticed, the entry died with it: the
    leave's late answer is ``pool.left``, the enter is refused, and x waits nowhere."""
    scene = Scene(3)
    cluster = scene.cluster
    x = scene.client("a")
    cluster.request(x, EnterPool(policy="ranked"))  # b's
    scene.drain()
    cluster.members.pop("b")  # nobody notices yet: what is sent to b is lost
    cluster.request(x, LeavePool("ranked"))
    for _ in range(4):
        cluster.tick()
    (refused,) = scene.answers(x)
    assert isinstance(refused, Refuse)
    assert refused.error.code == "cluster.unavailable"
    cluster.request(x, EnterPool(policy="ranked"))
    for member in list(cluster.members.values()):
        cluster.notice(member)
    scene.drain()
    (_, (entered,)), (leave_id, left), (_, again) = cluster.answers[x].items()
    assert isinstance(entered, ReplyWith)
    assert isinstance(entered.answer, EnteredPool)
    assert left[1:] == [ReplyWith(leave_id, PoolLeft("ranked", entered.answer.entry_id))]
    assert [_code(a) for a in again] == ["cluster.unavailable"]
    assert scene.waits(x) == set()
    scene.check()


def _code(effect: Effect) -> str | None:
    return effect.error.code if isinstance(effect, Refuse) else None
