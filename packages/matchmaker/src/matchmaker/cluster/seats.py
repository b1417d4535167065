"""Backfill across members, sans I/O: a session's open seats, filled at its pool's owner.

A session lives on its *host* (:mod:`.placement.hosting`: where most of its members are),
and its pool on the pool's owner, the same member while the session stays where it
formed and the live members do not change. While they are
the same, the host's core fills the seats as one process does. When they differ,
the host *mirrors* the opening at the owner (:class:`~.messages.Opening`, sent
again whenever the seats or the members change, :class:`~.messages.Unmirror`
once it is no longer the owner's to fill); the owner's core holds an entry that
fits and offers it (:class:`~.messages.Offer`); the host seats its client (a
proxy of it adopted here, if it is connected elsewhere) or declines, and
answers (:class:`~.messages.Seated`): the owner drops the entry as matched or
puts it back. The core decides every step (:mod:`matchmaker.core.backfill`);
this module only carries its notes between members.

When the members change, each opening goes where its pool went; a host that
died took its sessions with it (its mirrors are forgotten and their held
entries put back), an owner that died its held entries (their clients' homes
enter them again at the new owner, as for any entry).
"""

from __future__ import annotations

from collections.abc import Sequence

from matchmaker.cluster import codec
from matchmaker.cluster.messages import Moved, Offer, Opening, Seated, Told, Unmirror, Unseat
from matchmaker.cluster.ring import node_of, pool_key
from matchmaker.cluster.routes import (
    NOTHING,
    Action,
    Deliver,
    Post,
    Routes,
    pool_command,
    pool_spec,
)
from matchmaker.core.backfill import SeatOffered, mirror_origin
from matchmaker.core.events import Delivery, SessionFormed
from matchmaker.core.state import Session

__all__ = ["Seats"]


class Seats:
    """Backfill across members on the routing state: mirrors of openings, offers and
    their answers."""

    def __init__(self, routes: Routes) -> None:
        self.routes = routes

    # -- notes of this member's core --------------------------------------------------------

    def seats_changed(self, session_id: str) -> Sequence[Action]:
        """The opening of a session hosted here changed: mirror it where its pool is."""
        routes = self.routes
        view = routes.core.backfills.opening(session_id)
        target: str | None = None
        if view is not None:
            session = view[0]
            assert session.pool is not None
            target = routes.owner_of(pool_key(session.project_id, session.pool))
        old = routes.mirrored.pop(session_id, None)
        out: list[Action] = []
        if old is not None and old != target:
            out.append(Post(old, Unmirror(session_id)))
        if view is not None and target is not None and target != routes.node:
            out.append(Post(target, _opening(*view)))
            routes.mirrored[session_id] = target
        return out

    def seat_offered(self, offer: SeatOffered) -> Sequence[Action]:
        """This member's core holds an entry for a session hosted elsewhere: offer it."""
        client = self.routes.core.clients[offer.client_id]
        message = Offer(
            offer.session_id,
            offer.entry_id,
            client.client_id,
            client.project_id,
            client.credential,
            client.attributes,
            client.player_id,
            offer.public,
        )
        return [Post(self.routes.host_of(offer.session_id) or "", message)]

    # -- messages from other members --------------------------------------------------------

    def on_opening(self, sender: str, message: Opening, now_ms: int) -> Sequence[Action]:
        if self.routes.host_of(message.session) != sender:
            # Its host now (the session moved where its members are, or was re-hosted):
            # its offers go there.
            self.routes.hosted_at(message.session, sender)
        spec = pool_spec(message.spec)
        origin = mirror_origin(
            message.project, message.pool, spec, message.bucket, policy=message.policy
        )
        out: list[Delivery] = []
        members = [(client_id, attributes) for client_id, attributes in message.members]
        backfills = self.routes.core.backfills
        backfills.mirror(
            message.session,
            origin,
            members,
            seats=message.seats,
            opened_ms=message.opened_ms,
            now_ms=now_ms,
            out=out,
            region=message.region,
        )
        return [Deliver(out)] if out else NOTHING

    def on_unmirror(self, sender: str, message: Unmirror, now_ms: int) -> Sequence[Action]:
        if self.routes.host_of(message.session) == sender:
            self.routes.core.backfills.unmirror(message.session)
        return NOTHING

    def on_offer(self, sender: str, message: Offer, now_ms: int) -> Sequence[Action]:
        """An owner holds an entry for a session hosted here: seat its client, or decline."""
        routes = self.routes
        client_id = message.client
        home = node_of(client_id)
        state = routes.core.clients.get(client_id)
        adopted = None
        if state is None and home != routes.node and home in routes.live:
            # Seated here, it needs a proxy like any remote member; its home hears of it
            # from session.created (routing.py) and tells this member when it goes.
            adopted = routes.conversation(now_ms)
            adopted.adopt(
                client_id,
                message.project,
                message.credential,
                message.attributes,
                player_id=message.player_id,
            )
            routes.proxies[client_id] = (home or "", adopted)
            state = adopted.client
        out: list[Delivery] = []
        accepted = state is not None and routes.core.backfills.offered(
            message.session, state, message.public, out
        )
        if state is None:
            # Its client is gone: declined, and the owner's mirror, which gave it its last
            # seat, brought up to date (the core does so for every other refusal).
            routes.core.backfills.changed(message.session, out)
        if adopted is not None and not accepted:
            del routes.proxies[client_id]
            out.extend(adopted.disconnect(now_ms))
        # The newcomer's session.created goes through the owner, after its pool.entered.
        created = next((d for d in out if _created_for(d, client_id)), None)
        encoded = None if created is None else codec.encode_value(created[1])
        answer = Seated(message.session, message.entry, client_id, encoded)
        if created is not None:
            routes.relaying[message.session, client_id] = sender
        # The answer first: a note in ``out`` may re-mirror the opening, after it.
        actions: list[Action] = [Post(sender, answer)]
        rest = [d for d in out if d is not created]
        if rest:
            actions.append(Deliver(rest))
        return actions

    def on_seated(self, sender: str, message: Seated, now_ms: int) -> Sequence[Action]:
        """The host's answer to an offer: the entry leaves as matched and its client hears
        of its session (after its pool.entered, which went from here), or it is put back.
        Seated in an entry that left meanwhile, the client is taken out again, untold."""
        out: list[Delivery] = []
        accepted = message.created is not None
        live = self.routes.core.backfills.settle(message.entry, accepted, now_ms, out)
        actions: list[Action] = []
        if message.created is not None:
            if live:
                created = codec.decode_value(message.created)
                out.append(((message.client,), created))
                if node_of(message.client) == self.routes.node:  # its home: told with this
                    actions.append(Deliver(out))
                    return [*actions, *self.told(created)]
                actions.extend(self._moved(message.session, sender, message.client))
            else:
                actions.append(Post(sender, Unseat(message.session, message.client)))
        if out:
            actions.append(Deliver(out))
        return actions

    def _moved(self, session_id: str, host: str, client_id: str) -> Sequence[Action]:
        """The newcomer's ``session.created`` is about to go from here to its home: if
        ``host`` is not where the session's id says, its home is told so first
        (:class:`~.messages.Moved`), on the link that carries the event, so it sees the
        event came from the pool's owner, not the host, and sends the host ``Told``.
        (From the host, on another link, it could arrive after the event.)"""
        routes = self.routes
        home = routes.home_of(client_id)
        if home is None or home in {routes.node, host, node_of(session_id)}:
            return NOTHING
        return [Post(home, Moved(session_id, host))]

    def told(self, event: SessionFormed) -> Sequence[Action]:
        """A local client was just told of a session it was seated in by an offer (its
        ``session.created`` came through the pool's owner, not from the host): the host
        may tell it the session's next events now (:class:`~.messages.Told`)."""
        routes = self.routes
        host = routes.host_of(event.session_id)
        if host is None:
            return NOTHING
        if host == routes.node:
            routes.relaying.pop((event.session_id, event.you), None)
            out = routes.core.told(event.you, event.session_id)
            return [Deliver(out)] if out else NOTHING
        return [Post(host, Told(event.session_id, event.you))]

    def on_told(self, sender: str, message: Told, now_ms: int) -> Sequence[Action]:
        routes = self.routes
        routes.relaying.pop((message.session, message.client), None)
        if message.session not in routes.core.sessions:
            # Its session, just formed elsewhere, is on its way here (:mod:`.placement.hosting`):
            # the member is told already when it arrives.
            routes.told_early[message.session, message.client] = now_ms
        out = routes.core.told(message.client, message.session)
        return [Deliver(out)] if out else NOTHING

    def on_unseat(self, sender: str, message: Unseat, now_ms: int) -> Sequence[Action]:
        routes = self.routes
        client_id = message.client
        routes.relaying.pop((message.session, client_id), None)
        state = routes.core.clients.get(client_id)
        if state is None or message.session not in state.sessions:
            return NOTHING  # gone already
        out = routes.core.leave_session(client_id, message.session, now_ms)
        proxy = routes.proxies.get(client_id)
        if proxy is not None and not (state.sessions or state.entries or state.delegating):
            # A proxy adopted for the seat alone, which its home never heard of: dropped.
            del routes.proxies[client_id]
            out.extend(proxy[1].disconnect(now_ms))
        return [Deliver(out)]

    # -- failures and members' changes ------------------------------------------------------

    def lost(self, message: Offer, now_ms: int) -> Sequence[Action]:
        """Redis did not take an offer: its entry is put back."""
        out: list[Delivery] = []
        self.routes.core.backfills.settle(message.entry, False, now_ms, out)
        return [Deliver(out)] if out else NOTHING

    def expire(self) -> None:
        """A newcomer that left its session, or was disconnected, before its home said it
        was told is no longer followed."""
        routes = self.routes
        for key in [k for k in routes.relaying if not routes.core.awaits_told(k[1], k[0])]:
            del routes.relaying[key]

    def members_changed(self, now_ms: int) -> Sequence[Action]:
        """The live members changed (:meth:`.Failover.members_changed` has followed them):
        the mirrors of dead hosts are forgotten (their held entries put back) and each
        opening hosted here goes where its pool went."""
        routes = self.routes
        live, backfills = routes.live, routes.core.backfills
        released: list[Delivery] = []
        for session_id in backfills.mirrors():
            if routes.host_of(session_id) not in live:
                backfills.unmirror(session_id)
        for entry_id, session_id in backfills.held():
            if routes.host_of(session_id) not in live:
                backfills.settle(entry_id, False, now_ms, released)
        for key, node in list(routes.relaying.items()):
            if node not in live:
                # Its session.created died with the owner relaying it: what was kept for
                # the newcomer goes out now rather than never.
                del routes.relaying[key]
                released.extend(routes.core.told(key[1], key[0]))
        out: list[Action] = [Deliver(released)] if released else []
        for session_id, node in list(routes.mirrored.items()):
            if node not in live:
                del routes.mirrored[session_id]
        for session_id in backfills.hosted():
            session, _, _ = backfills.opening(session_id) or (None, 0, 0)
            assert session is not None
            assert session.pool is not None
            target = routes.owner_of(pool_key(session.project_id, session.pool))
            if routes.mirrored.get(session_id) != (None if target == routes.node else target):
                out.extend(self.seats_changed(session_id))  # its pool has another owner
        return out


def _created_for(delivery: Delivery, client_id: str) -> bool:
    recipients, event = delivery
    return type(event) is SessionFormed and list(recipients) == [client_id]


def _opening(session: Session, seats: int, opened_ms: int) -> Opening:
    """The message that mirrors a session's opening at its pool's owner."""
    origin = session.origin
    assert origin is not None
    assert session.pool is not None
    policy = origin.key[0] == "policy"
    # The parameters in full, a policy's too: the owner keys its pool by them.
    command = pool_command(session.pool, origin.spec, None, policy=False)
    members = [(client_id, dict(m.client.attributes)) for client_id, m in session.members.items()]
    return Opening(
        session.session_id,
        session.project_id,
        session.pool,
        policy,
        codec.encode_value(command),
        [list(pair) for pair in origin.bucket],
        members,
        seats,
        opened_ms,
        session.region,
    )
