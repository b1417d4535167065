"""A draining member hands its clients and sessions over to the survivors, sans I/O.

On ``SIGTERM`` a member of a cluster does not take its games with it: before its
connections close, each of its clients is handed over to a surviving member, its
*heir* (rendezvous hashing of its resume token over the survivors, so that every
member finds it from the token alone): who it is, its
outbox (resume token, ``seq``, replay buffer), the members holding a proxy of it,
its sessions (:class:`Handover`). The heir keeps it parked for the
resume grace, as if its connection had dropped there, so the client's resuming
``hello`` (with the token it has) resumes it on whichever member the load balancer
sends it to: at the heir itself, or relayed there (:mod:`~matchmaker.cluster.handoff`). Each session
hosted here moves (:class:`Host`) to where most of its members are now
connected, their heirs counted for them; the members holding proxies of its
clients are told their new home (:class:`Rehomed`). Nothing goes
through a shared store: the state travels over the cluster's own streams, before
this member leaves it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from matchmaker.cluster.messages import Away, Handover, Rehomed
from matchmaker.cluster.placement.hosting import Hosting
from matchmaker.cluster.ring import host, owner
from matchmaker.cluster.routes import NOTHING, Action, Deliver, Post, Routes
from matchmaker.core.events import PublicMember
from matchmaker.core.placement import moves
from matchmaker.core.resume import token_digest

__all__ = ["Drain", "heir_of"]


def heir_of(token: str, members: Iterable[str]) -> str | None:
    """The member a draining one hands the client holding resume ``token`` over to: every
    member finds it from the token alone (rendezvous hashing of its digest over the
    survivors: the digest is what the drain knows and sends)."""
    members = sorted(members)
    return owner(token_digest(token), members) if members else None


class Drain:
    """Handing this member's clients and sessions over, and taking others' over."""

    def __init__(self, routes: Routes, hosting: Hosting) -> None:
        self.routes = routes
        self.hosting = hosting

    def hand_over(self, now_ms: int) -> Sequence[Action]:
        """This member drains: every local client and hosted session goes to a survivor
        (nothing when there is none: the clients then resume nowhere, as on one process)."""
        routes = self.routes
        core = routes.core
        survivors = sorted(routes.live - {routes.node})
        if not survivors:
            return NOTHING
        outboxes = core.resumption.outboxes
        heirs = {
            c: owner(o.token_digest, survivors) for c, o in outboxes.items() if c in core.clients
        }
        moves: list[tuple[str, str, list[str]]] = []  # session id, its new host, its homes
        for session in list(core.sessions.values()):
            if session.room is not None:
                continue  # a room's owner changes with the members anyway: it ends here
            homes = [heirs.get(c) or routes.home_of(c) or routes.node for c in session.members]
            moves.append((session.session_id, host(session.session_id, homes), homes))
        out: list[Action] = []
        for client_id, heir in heirs.items():
            state, outbox = core.clients[client_id], outboxes[client_id]
            holders = routes.holders.get(client_id, set()) - {routes.node}
            sessions: dict[str, list[Any]] = {
                session_id: [routes.host_of(session_id) or "", sorted(members)]
                for session_id, members in routes.remote_sessions.get(client_id, {}).items()
            }
            for session_id, target, _ in moves:
                if client_id in core.sessions[session_id].members and target != heir:
                    sessions[session_id] = [target, sorted(core.sessions[session_id].members)]
            message = Handover(
                client_id,
                state.project_id,
                state.credential,
                state.attributes,
                state.player_id,
                outbox.token_digest,
                outbox.seq,
                list(outbox.frames),
                sorted(holders | {str(at) for at, _ in sessions.values()}),
                sessions,
                ack=state.ack,
            )
            out.append(Post(heir, message))
            out.extend(Post(h, Rehomed(client_id, heir)) for h in sorted(holders - {heir}))
            routes.handed.add(client_id)
        for session_id, target, homes in moves:
            out.extend(self.hosting.move(core.sessions[session_id], target, homes))
        return out

    def on_handover(self, sender: str, message: Handover, now_ms: int) -> Sequence[Action]:
        """A draining member hands its client over: kept here, parked for the grace, until
        it resumes with its token (the proxy this member held of it becomes the client)."""
        routes = self.routes
        core = routes.core
        client_id = message.client
        proxy = routes.proxies.pop(client_id, None)
        state = None if proxy is None else proxy[1].client
        if state is None:
            conversation = routes.conversation(now_ms)
            conversation.adopt(
                client_id,
                message.project,
                message.credential,
                message.attributes,
                player_id=message.player_id,
            )
            state = conversation.client
            assert state is not None
        moves.carry_ack(state, message.ack)
        routes.homes.pop(client_id, None)
        core.resumption.handed_over(
            client_id,
            message.project,
            message.token_digest,
            seq=message.seq,
            frames=message.frames,
            now_ms=now_ms,
        )
        holders = set(message.holders) - {routes.node}
        routes.holders[client_id] = holders
        remote = routes.remote_sessions.setdefault(client_id, {})
        for session_id, (at, members) in message.sessions.items():
            if at != routes.node:
                remote[session_id] = {m: PublicMember(m, None, None) for m in members}
                routes.hosted_at(session_id, at)
        routes.away.add(client_id)
        out: list[Action] = [Deliver(core.suspend(client_id))]
        out.extend(Post(node, Away(client_id)) for node in sorted(holders))
        return out

    def on_rehomed(self, sender: str, message: Rehomed, now_ms: int) -> Sequence[Action]:
        """A client served here through a proxy was handed over to ``message.home``."""
        routes = self.routes
        proxy = routes.proxies.get(message.client)
        if proxy is not None:
            routes.proxies[message.client] = (message.home, proxy[1])
            routes.rehome(message.client, message.home)
        return NOTHING
