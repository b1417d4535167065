"""A member found dead while it lives (it stalled, or lost Redis, past the member TTL),
step by step: when it is back, its peer tells it so (``Forgot``) and it forgets the
peer's clients likewise, so every client of a session the two shared is told that
session ended, none left with its sends refused and nobody told why."""

from __future__ import annotations

from matchmaker.cluster.messages import Forgot
from matchmaker.cluster.ring import owner, pool_key
from matchmaker.cluster.routing import Post
from matchmaker.core.commands import EnterPool, Send
from matchmaker.core.effects import Refuse, ReplyWith
from matchmaker.core.events import MemberLeft, SessionFormed

from .test_routing_failover import Scene


def _found_dead_and_back(scene: Scene, member: str, by: str) -> None:
    """``by`` finds ``member`` dead (its key expired) and, once it beats again, back."""
    cluster = scene.cluster
    peer = cluster.members[by]
    alone = frozenset(peer.view - {member})
    cluster.run(peer, peer.router.members_changed(alone, (), (member,), [*peer.clients], 0))
    peer.view = frozenset({*alone, member})
    joined = peer.router.members_changed(peer.view, (member,), (), [*peer.clients], 0)
    assert Post(member, Forgot()) in joined
    cluster.run(peer, joined)
    scene.drain()


def _pair(scene: Scene, host: str, other: str) -> tuple[str, str, str]:
    """A client of each member matched in ``pair`` (hosted by ``host``): theirs, and the
    session's id."""
    cluster = scene.cluster
    x, y = scene.client(host), scene.client(other)
    cluster.request(x, EnterPool(policy="pair"))
    cluster.request(y, EnterPool(policy="pair"))
    scene.drain()
    created = scene.told[y][-1]
    assert isinstance(created, SessionFormed)
    return x, y, created.session_id


def test_a_member_found_dead_while_alive_tells_its_clients_their_sessions_ended() -> None:
    """x (at the host of the pool) and y (at the other member) are matched; the host
    finds y's member dead: x is told y left, and once y's member is back it is told so
    and tells y that x left. y's sends then are refused, never silently dropped."""
    scene = Scene(2)
    cluster = scene.cluster
    host = owner(pool_key("p", "pair"), sorted(cluster.members))
    other = next(name for name in sorted(cluster.members) if name != host)
    x, y, session = _pair(scene, host, other)

    _found_dead_and_back(scene, other, by=host)

    assert MemberLeft(session, y, "disconnected") in scene.told[x]
    # The feature: y hears its session ended (before this, it was told nothing).
    assert MemberLeft(session, x, "disconnected") in scene.told[y]
    assert session not in cluster.views[y] or cluster.views[y][session] == {y}
    cluster.request(y, Send(session, b'"hi"'))
    scene.drain()
    (answer,) = scene.answers(y)
    assert isinstance(answer, Refuse)
    assert answer.error.code == "session.not_member"
    # The two members agree again: a new pair across them is matched and relays.
    _, w, fresh = _pair(scene, host, other)
    cluster.request(w, Send(fresh, b'"hi"'))
    scene.drain()
    (relayed,) = scene.answers(w)
    assert isinstance(relayed, ReplyWith)
