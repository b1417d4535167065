"""Sessions hosted where their players are, step by step (the simulated members of the
state machine, no Redis): a pair on one member whose pool another member owns is hosted
and relays on its own member, and survives the owner's death; a session whose host dies
while members live elsewhere goes on, re-hosted; a send without an id that the dead host
may have dropped is answered with an error naming the session; a session moved to a member
that has not noticed a joiner yet keeps the joiner's client."""

from __future__ import annotations

from matchmaker.cluster.ring import owner, pool_key
from matchmaker.core.commands import EnterPool, Send
from matchmaker.core.effects import ReplyWith
from matchmaker.core.events import MemberLeft, MessageRelayed, Relayed, SessionFormed

from .test_routing_failover import Scene


def _session(scene: Scene, client_id: str) -> str:
    created = next(e for e in scene.told[client_id] if isinstance(e, SessionFormed))
    return created.session_id


def test_a_pair_on_one_member_is_hosted_there_and_outlives_its_pools_owner() -> None:
    scene = Scene(3)
    cluster = scene.cluster
    pool_owner = owner(pool_key("p", "pair"), sorted(cluster.members))
    home = next(name for name in sorted(cluster.members) if name != pool_owner)
    x, y = scene.client(home), scene.client(home)
    cluster.request(x, EnterPool(policy="pair"))
    cluster.request(y, EnterPool(policy="pair"))
    scene.drain()
    session = _session(scene, x)
    assert session.startswith(f"s{pool_owner}-")  # formed by the pool's owner...
    assert session in cluster.members[home].core.sessions  # ...hosted where both are
    assert session not in cluster.members[pool_owner].core.sessions
    scene.kill(pool_owner)
    scene.drain()
    cluster.request(x, Send(session, b'"hi"'))
    assert not cluster.busy_links()  # relayed on the pair's member, nothing sent on
    (answer,) = scene.answers(x)
    assert isinstance(answer, ReplyWith)
    assert answer.answer == Relayed()
    assert scene.told[y][-1] == MessageRelayed(session, x, b'"hi"')
    assert not any(isinstance(e, MemberLeft) for e in scene.told[x] + scene.told[y])
    scene.check()


def test_a_session_whose_host_dies_goes_on_where_its_members_are() -> None:
    """x on a, y on b, z on c in a trio (c's pool: a tie, c hosts it). c dies: x and y
    are told z left and nothing else, and keep relaying in the same session, hosted on
    a or b; a send without an id x made just before c died is answered with an error."""
    scene = Scene(3)
    cluster = scene.cluster
    assert owner(pool_key("p", "trio"), sorted(cluster.members)) == "c"
    x, y, z = scene.client("a"), scene.client("b"), scene.client("c")
    for client_id in (x, y, z):
        cluster.request(client_id, EnterPool(policy="trio"))
    scene.drain()
    session = _session(scene, x)
    assert session in cluster.members["c"].core.sessions
    member = cluster.members["a"]
    unnumbered = Send(session, b'"lost?"')
    cluster.run(
        member,
        member.router.forward(member.clients[x], unnumbered, None, cluster.now_ms, sendable=True)
        or (),
    )
    scene.kill("c")
    scene.drain()
    (error,) = cluster.errors[x]
    assert error.error.code == "cluster.unavailable"
    assert error.error.details == {"session_id": session}
    for client_id in (x, y):
        left = [e for e in scene.told[client_id] if isinstance(e, MemberLeft)]
        assert left == [MemberLeft(session, z, "disconnected")]
    (host,) = [m for m in cluster.members.values() if session in m.core.sessions]
    assert host.name in {"a", "b"}
    assert set(host.core.sessions[session].members) == {x, y}
    cluster.request(y, Send(session, b'"on"'))
    scene.drain()
    assert scene.told[x][-1] == MessageRelayed(session, y, b'"on"')
    scene.check()


def test_a_session_moved_to_a_member_that_has_not_noticed_a_joiner_keeps_its_client() -> None:
    """d joins; c (the trio pool's owner) hears from it at once, b not yet. x on d, y and z
    on b make a trio at c, which moves it to b (most of its members): b seats x, whose
    home it has not seen join yet, rather than take it for dead and tell y and z it left."""
    scene = Scene(3)
    cluster = scene.cluster
    cluster.join()  # d: nobody noticed yet
    assert owner(pool_key("p", "trio"), sorted(cluster.members)) == "c"
    x, y, z = scene.client("d"), scene.client("b"), scene.client("b")
    for client_id in (x, y, z):
        cluster.request(client_id, EnterPool(policy="trio"))
    scene.drain()
    session = _session(scene, x)
    assert set(cluster.members["b"].core.sessions[session].members) == {x, y, z}
    for member in list(cluster.members.values()):
        cluster.notice(member)
    scene.drain()
    assert set(cluster.members["b"].core.sessions[session].members) == {x, y, z}
    assert not any(isinstance(e, MemberLeft) for c in (x, y, z) for e in scene.told[c])
    scene.check()
