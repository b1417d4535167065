"""Sessions hosted where their players are, sans I/O: placed at formation, re-hosted on death.

A group matches at its pool's owner (one synchronous core step), but the
session then lives on the member most of its members are connected to
(:func:`~matchmaker.cluster.ring.host`): the owner moves it there at once (:class:`Host`)
and tells the other members' homes where it went (:class:`Moved`),
both before any member hears of it, so every request about it goes straight
to its host. A session whose members share one process thus relays there, with
no hop through Redis, and depends on no other process.

When a host dies while members live elsewhere, the session is not ended: each
surviving member's home computes the same new host among the surviving homes
and sends it what it knows (its own clients in full, the others by id), and
routes the session there from then on. The members whose home died with the host
get ``member_left {reason: disconnected}``; the others are told nothing: their
sequence numbers and replay buffers are their homes', which did not move. A
member named by another home but never spoken for by its own within
:data:`~matchmaker.cluster.routes.ANSWER_TIMEOUT_MS` is taken out (its home no longer had it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matchmaker.cluster import codec
from matchmaker.cluster.messages import Host, Moved, Told
from matchmaker.cluster.ring import host, node_of
from matchmaker.cluster.routes import (
    ANSWER_TIMEOUT_MS,
    NOTHING,
    UNANSWERED_MS,
    Action,
    Deliver,
    Perform,
    Post,
    Routes,
    pool_command,
    pool_spec,
)
from matchmaker.core import Delivery
from matchmaker.core.backfill import mirror_origin
from matchmaker.core.effects import Refuse
from matchmaker.core.events import Event, MemberLeft, SessionFormed
from matchmaker.core.placement import moves
from matchmaker.core.sessions import UNTOLD_CAP
from matchmaker.core.state import Origin, Session
from matchmaker.errors import MatchmakerError

__all__ = ["Hosting"]


class Hosting:
    """Where sessions are hosted, on the routing state: placing, installing, re-hosting."""

    def __init__(self, routes: Routes) -> None:
        self.routes = routes

    # -- at formation -----------------------------------------------------------------------

    def place(self, event: SessionFormed) -> Sequence[Action]:
        """A group just formed here (the first member's ``session.created``, before any
        member's home hears of it): move the session where most of its members are."""
        routes = self.routes
        session_id = event.session_id
        session = routes.core.sessions.get(session_id)
        first = event.members[0].client_id if event.members else None
        if session is None or event.pool is None or event.you != first:
            return NOTHING  # a room, or a backfill's newcomer: stays where it is
        if node_of(session_id) != routes.node:
            return NOTHING
        homes = [routes.home_of(m.client_id) or routes.node for m in event.members]
        target = host(session_id, homes)
        if target == routes.node or target not in routes.live:
            return NOTHING
        return self.move(session, target, homes, fresh=True)

    def move(
        self, session: Session, target: str, homes: list[str], *, fresh: bool = False
    ) -> list[Action]:
        """Move ``session`` (hosted here) to ``target``; ``homes``: where each of its
        members is connected (in its members' order), each told where it went; ``fresh``:
        just formed, its members not all told of it yet (those connected here were)."""
        routes = self.routes
        session_id = session.session_id
        members = [
            [cid, m.public, m.client.player_id, [m.client.credential, m.client.attributes], home]
            for (cid, m), home in zip(session.members.items(), homes, strict=True)
        ]
        origin = _origin(session)
        message = Host(session_id, session.project_id, session.pool, origin, members, fresh)
        moves.release(routes.core, session)
        routes.hosted_at(session_id, target)
        out: list[Action] = [Post(target, message)]
        if fresh:  # those connected here were told of it (before it moved)
            out.extend(
                Post(target, Told(session_id, cid))
                for cid, home in zip(session.members, homes, strict=True)
                if home == routes.node
            )
        told = Moved(session_id, target)
        out.extend(Post(home, told) for home in sorted(set(homes) - {target, routes.node}))
        return out

    # -- messages from other members --------------------------------------------------------

    def on_host(self, sender: str, message: Host, now_ms: int) -> Sequence[Action]:
        """Host ``message.session`` here, with the members it names."""
        routes = self.routes
        core = routes.core
        session_id = message.session
        session = moves.host_here(core, session_id, message.project, message.pool, _decode(message))
        fresh = message.fresh
        seated = [self._seat(session, row, now_ms, fresh=fresh) for row in message.members]
        gone = [row[0] for row, there in zip(message.members, seated, strict=True) if not there]
        routes.hosts.pop(session_id, None)
        out: list[Delivery] = []
        # Gone before the session came here: its members never heard it left.
        told = {c for c in gone if fresh or node_of(c) == routes.node}
        for client_id in sorted(told):
            out.extend(_tell(session, MemberLeft(session_id, client_id, "disconnected")))
        for client_id in session.members:
            known = routes.remote_sessions.get(client_id, {}).pop(session_id, None)
            # Hosted here before this member saw the old host die: its clients hear here
            # of the members that died with it (the sender left them out).
            for other in sorted(set(known or ()) - set(session.members) - told):
                out.append(((client_id,), MemberLeft(session_id, other, "disconnected")))
        moves.drop_if_empty(core, session)
        return [Deliver(out)] if out else NOTHING

    def _seat(self, session: Session, row: list[Any], now_ms: int, *, fresh: bool) -> bool:
        """A member of ``session``, hosted here (through a proxy if it is connected
        elsewhere); its ``identity`` ``None``: its home has not spoken for it yet. False:
        it is gone (it left, or its process died)."""
        client_id, public, player_id, identity = row[:4]
        routes = self.routes
        # Its home, when it is not the member its id names (handed over by a drain).
        home = row[4] if len(row) > 4 else node_of(client_id) or ""
        key = (session.session_id, client_id)
        state = routes.core.clients.get(client_id)
        if client_id in session.members:
            if identity is not None and routes.unconfirmed.pop(key, None) is not None:
                assert state is not None
                moves.confirm_identity(state, identity[0], identity[1])
            return True
        if state is None:
            # Its home found dead here: gone. One not live yet may have joined unnoticed
            # (the member that formed the session knew it): seated, and dropped at the
            # next look if it died unseen (:meth:`.Failover.members_changed`).
            if not home or home == routes.node or home in routes.departed:
                return False
            credential, attributes = identity if identity is not None else (None, {})
            conversation = routes.conversation(now_ms)
            conversation.adopt(
                client_id, session.project_id, credential, attributes, player_id=player_id
            )
            routes.proxies[client_id] = (home, conversation)
            routes.rehome(client_id, home)
            state = conversation.client
            assert state is not None
        if identity is None and home != routes.node:
            routes.unconfirmed[key] = now_ms
        # Just formed: what the session says waits until its home told it of the session.
        untold = fresh and routes.told_early.pop(key, None) is None
        moves.seat(session, state, public, untold)
        return True

    def on_hosting(self, sender: str, message: Moved, now_ms: int) -> Sequence[Action]:
        routes = self.routes
        routes.hosted_at(message.session, message.host)
        if message.host not in routes.live:
            self.orphaned(message.session)
        return NOTHING

    # -- failures ---------------------------------------------------------------------------

    def rehost(self, dead: str, now_ms: int, *, ended: bool = False) -> Sequence[Action]:
        """Member ``dead`` died: the sessions it hosted for local clients go to the member
        most of their surviving members are connected to (every surviving home computes
        the same one); the members that died with it are told gone. ``ended``: ``dead``
        lives but forgot this member's clients (:class:`Forgot`), ending the
        sessions it hosted for them: they are told every other member left."""
        routes = self.routes
        out: list[Action] = list(self._unanswered(dead))
        moves: dict[str, tuple[str, str, dict[str, list[Any]]]] = {}
        for client_id, sessions in routes.remote_sessions.items():
            state = routes.core.clients.get(client_id)
            for session_id in [s for s in sessions if routes.host_of(s) == dead]:
                others = sessions[session_id]  # (every member, this client too)
                gone = [o for o in others if routes.home_of(o) not in routes.live or ended]
                for other in sorted(o for o in gone if o != client_id):
                    del others[other]
                    left = MemberLeft(session_id, other, "disconnected")
                    out.append(Deliver([((client_id,), left)], remote=False))
                if ended:
                    del sessions[session_id]
                    continue
                if state is None:
                    continue
                homes = [routes.home_of(member) or "" for member in others]
                target = host(session_id, homes)
                _, _, members = moves.setdefault(session_id, (target, state.project_id, {}))
                for member, shown in others.items():
                    # This member's own clients still in the session it speaks for in full.
                    mine = routes.core.clients.get(member)
                    if mine is None or session_id not in routes.remote_sessions.get(member, {}):
                        identity = None
                    else:
                        identity = [mine.credential, mine.attributes]
                    if identity is not None or member not in members:
                        members[member] = [member, shown.public, shown.player_id, identity]
                if target != routes.node:
                    routes.holders.setdefault(client_id, set()).add(target)
                routes.hosted_at(session_id, target)
        for session_id, (target, project, members) in moves.items():
            message = Host(session_id, project, None, None, list(members.values()))
            if target == routes.node:
                out.extend(self.on_host(routes.node, message, now_ms))
            else:
                out.append(Post(target, message))
        return out

    def _unanswered(self, dead: str) -> Sequence[Action]:
        """The local clients that sent ``dead`` a ``session.send`` without a request id in
        the last seconds are told (an ``error`` without an id): it may have died unrelayed."""
        routes = self.routes
        out: list[Action] = []
        for key, (at, _) in list(routes.unanswered.items()):
            if at == dead:
                del routes.unanswered[key]
                out.append(Perform(key[0], [Refuse(None, _maybe_lost(key[1]))]))
        return out

    def orphaned(self, session_id: str) -> None:
        """A local client learnt of a session whose host is already dead (its death was
        noticed before the news came): re-hosted at the next :meth:`expire`."""
        self.routes.orphans.add(session_id)

    def expire(self, now_ms: int) -> Sequence[Action]:
        """Members of re-hosted sessions never spoken for by their home are taken out;
        sessions found orphaned are re-hosted."""
        routes = self.routes
        orphans, routes.orphans = routes.orphans, set()
        dead = {routes.host_of(s) for s in orphans} - routes.live - {None}
        rehosted: list[Action] = []
        for node in sorted(n for n in dead if n is not None):
            rehosted.extend(self.rehost(node, now_ms))
        old = [k for k, (_, sent) in routes.unanswered.items() if now_ms - sent > UNANSWERED_MS]
        for key in old:
            del routes.unanswered[key]
        early = routes.told_early
        for key in [k for k, since in early.items() if now_ms - since > ANSWER_TIMEOUT_MS]:
            del early[key]
        late = [k for k, since in routes.unconfirmed.items() if now_ms - since > ANSWER_TIMEOUT_MS]
        out: list[Delivery] = []
        for key in late:
            del routes.unconfirmed[key]
            proxy = routes.proxies.pop(key[1], None)
            if proxy is not None:
                out.extend(proxy[1].disconnect(now_ms))
        return [*rehosted, Deliver(out)] if out else rehosted


def _maybe_lost(session_id: str) -> MatchmakerError:
    return MatchmakerError(
        "the process hosting this session died: what you sent it just before may be lost",
        code="cluster.unavailable",
        details={"session_id": session_id},
    )


def _tell(session: Session, event: Event) -> list[Delivery]:
    """``event`` for every member of ``session``: now, or once it was told of the session."""
    now: list[str] = []
    for client_id, member in session.members.items():
        if member.untold is None or len(member.untold) >= UNTOLD_CAP:
            now.append(client_id)
        else:
            member.untold.append(event)
    return [(now, event)] if now else []


def _origin(session: Session) -> list[Any] | None:
    """A session's pool, as :class:`Host` carries it (what a backfill fills from)."""
    origin = session.origin
    if origin is None or session.pool is None:
        return None
    command = pool_command(session.pool, origin.spec, None, policy=False)
    bucket = [list(pair) for pair in origin.bucket]
    return [origin.key[0] == "policy", codec.encode_value(command), bucket]


def _decode(message: Host) -> Origin | None:
    if message.origin is None or message.pool is None:
        return None
    policy, spec, bucket = message.origin
    return mirror_origin(message.project, message.pool, pool_spec(spec), bucket, policy=policy)
