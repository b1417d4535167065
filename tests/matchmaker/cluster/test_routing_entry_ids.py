"""Entry ids across moves: a client hears of its entry under the id it was told.

Each owner mints its own entry ids, so an entry moved to its pool's new owner (by its
client's member, or by a party's holder) waits there under another id. One process
never moves an entry: its client hears ``pool.left``, ``pool.withdrawn`` and the like
under the id of its ``pool.entered``, once. The simulated members of the state machine,
driven by hand as in ``test_routing_failover.py``: ``trio`` is ``a``'s, then ``c``'s once
``c`` joins.
"""

from __future__ import annotations

from matchmaker.cluster.ring import owner, pool_key
from matchmaker.core.commands import EnterPool, LeavePool
from matchmaker.core.effects import ReplyWith
from matchmaker.core.events import EntryWithdrawn, PoolLeft, SessionFormed

from .test_routing_failover import Scene


def _moved(member: str) -> tuple[Scene, str, str]:
    """A client of ``member`` waits in ``trio`` (at a), then c joins and the entry moves
    there: the scene, the client and the id it was told."""
    scene = Scene()
    x = scene.client(member)
    scene.cluster.request(x, EnterPool(policy="trio"))
    scene.drain()
    told = scene.entry_id(x, "trio")
    assert told.startswith("ea-")
    scene.join_c()
    scene.drain()
    assert scene.waits(x) == {("trio", "c")}  # under c's id now
    return scene, x, told


def test_a_moved_entry_is_left_under_the_id_its_client_was_told() -> None:
    """x (b's) waits in ``trio`` at a; b moves it to c when c joins. x's ``pool.leave``
    is answered ``pool.left`` naming the entry x was told of, not c's id for it."""
    scene, x, told = _moved("b")
    scene.cluster.request(x, LeavePool("trio"))
    scene.drain()
    (left,) = scene.answers(x)
    assert isinstance(left, ReplyWith)
    assert left.answer == PoolLeft("trio", told)
    assert scene.waits(x) == set()
    scene.check()


def test_an_entry_moved_out_of_its_clients_own_member_keeps_its_id() -> None:
    """x (a's) waits in ``trio`` in a's own core; a moves it to c when c joins, and x's
    ``pool.leave`` still names the entry x was told of."""
    scene, x, told = _moved("a")
    scene.cluster.request(x, LeavePool("trio"))
    scene.drain()
    (left,) = scene.answers(x)
    assert isinstance(left, ReplyWith)
    assert left.answer == PoolLeft("trio", told)
    scene.check()


def test_a_moved_entry_is_withdrawn_under_the_id_its_client_was_told() -> None:
    """x (b's) waits in ``trio``, moved to c; x is matched in ``pair``: c withdraws the
    moved entry, and x hears it withdrawn once, under the id it was told."""
    scene, x, told = _moved("b")
    cluster = scene.cluster
    pair = owner(pool_key("p", "pair"), sorted(cluster.members))
    cluster.request(x, EnterPool(policy="pair"))
    cluster.request(scene.client(pair), EnterPool(policy="pair"))
    scene.drain()
    assert any(isinstance(e, SessionFormed) for e in scene.told[x])
    withdrawn = [e for e in scene.told[x] if isinstance(e, EntryWithdrawn)]
    assert withdrawn == [EntryWithdrawn("trio", told, "matched")]
    assert scene.waits(x) == set()
    scene.check()
