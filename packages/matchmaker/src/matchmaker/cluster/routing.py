"""Which member serves what, sans I/O: the cluster's routing state and every decision on it.

A :class:`Router` is to a member what a
:class:`~matchmaker.core.conversation.Conversation` is to a connection: it is fed
what happened (a local client's request or event, a message from another member,
a change of the live members, the passing of time, a message Redis lost) and
returns the :data:`actions <Action>` the member must carry out, in order: post a
message to a member, perform effects on a local client's connection, deliver
the core's events. It reads no clock and touches no socket; it calls the
process's core (synchronous, like itself) for what the cluster does to it.

It owns:

- the *proxies*: remote clients served here, each through a conversation of its
  own (the same protocol rules and core calls as a local client's);
- for each local client, the *holders* (members holding a proxy of it), its
  entries *waiting* at other members, its *remote sessions* (hosted elsewhere, with
  their other members) and the forwarded requests *pending* an answer.

A pool (every pool of one name in a Project) and an ad-hoc room are owned by
one live member, chosen by rendezvous hashing (:mod:`.ring`); a session lives on
the member that formed it (its id names that member). A request whose pool,
room or session lives elsewhere goes there as a :class:`~.messages.Command`;
the owner answers the home and routes the events. So matching stays one
synchronous core step on one process, and a group forms whole or not at all.
A backfill's open seats are filled where the session's pool is (:mod:`.seats`).

A dropped client stays away for the resume grace wherever its state is: its
home parks it and tells the holders (``Away``, later ``Back``, or ``Gone`` when
the grace ran out), which pause and resume it there as the core does locally.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from matchmaker.cluster import codec
from matchmaker.cluster.messages import (
    Answers,
    Away,
    Back,
    Command,
    Events,
    Forgot,
    Gone,
    Message,
    Offer,
    Opening,
    Seated,
    Told,
    Unmirror,
    Unseat,
    Withdraw,
)
from matchmaker.cluster.ring import node_of
from matchmaker.cluster.routes import (
    ANSWER_TIMEOUT_MS,
    INTERNAL,
    NOTHING,
    Action,
    Deliver,
    Perform,
    Post,
    Waiting,
    unavailable,
)
from matchmaker.cluster.seats import Seats
from matchmaker.core import Delivery, Event
from matchmaker.core.backfill import SeatOffered, SeatsChanged
from matchmaker.core.commands import ClientCommand, EnterPool, LeavePool
from matchmaker.core.conversation import Conversation, resume_refused
from matchmaker.core.effects import Close, Effect, Refuse, ReplyWith, ResumeElsewhere
from matchmaker.core.engine import entry_limit
from matchmaker.core.events import (
    EnteredPool,
    EntryClosed,
    EntryWithdrawn,
    MemberJoined,
    MemberLeft,
    PoolLeft,
    SessionFormed,
    SessionLeft,
)
from matchmaker.errors import internal_error

__all__ = [
    "ANSWER_TIMEOUT_MS",
    "INTERNAL",
    "Action",
    "Deliver",
    "Perform",
    "Post",
    "Router",
    "unavailable",
]

_log = logging.getLogger("matchmaker.cluster")


class Router(Seats):
    """A member's routing: fed what happened, returns what to do (see the module)."""

    # -- a local client's request ---------------------------------------------------------

    def forward(
        self,
        conversation: Conversation,
        command: ClientCommand,
        request_id: str | None,
        now_ms: int,
        *,
        sendable: bool,
    ) -> Sequence[Action] | None:
        """Route ``command`` to the member that owns its pool, room or session.

        ``None``: it is this member's (or no member's), the local conversation
        handles it. Otherwise what to do now (the answer comes back later). While
        nothing can be sent (``sendable`` false: Redis is unreachable or the outbox
        full) such a request is refused at once with ``cluster.unavailable``.
        """
        client = conversation.client
        if client is None or len(self.live) == 1:
            return None  # alone, every owner is this member: not a single hash on the way
        target = self._entry_node(client.client_id, command) or self._target(client, command)
        if target is None:
            return None
        if type(command) is EnterPool and self._over_entry_limit(client, command):
            refused = conversation.admit(command, request_id, now_ms)
            limit: list[Effect] = [Refuse(request_id, entry_limit(self.core.limits))]
            return [Perform(client.client_id, refused or limit)]
        if target == self.node:
            return None
        client_id = client.client_id
        refused = conversation.admit(command, request_id, now_ms)
        if refused is not None:
            return [Perform(client_id, refused)]
        if not sendable:
            return self._refused(client_id, request_id)
        if type(command) is EnterPool:
            name = command.policy or command.pool or self._default_policy(client) or ""
            old = self.waiting.get(client_id, {}).get(name)
            # Already waiting there: the owner refuses this one (pool.already_entered), and
            # the entry stays the one entered first (unless that one is on its way out, or
            # is matched before this one arrives: :attr:`again`).
            if old is None or old.settling:
                self._replace(client_id, name, Waiting(target, command, request_id))
            elif request_id is not None:
                self.again[client_id, request_id] = (name, Waiting(target, command, request_id))
        elif type(command) is LeavePool:
            entry = self.waiting.get(client_id, {}).get(command.pool)
            if entry is not None and entry.node == target:
                entry.leave(request_id)
        return [self._forward(client, target, command, request_id, now_ms)]

    def _entry_node(self, client_id: str, command: ClientCommand) -> str | None:
        """Where a ``pool.leave`` goes when its entry waits at another member: after its
        ``pool.enter``, to that member (its pool may have another owner by now, which
        never had the entry)."""
        if type(command) is not LeavePool:
            return None
        entry = self.waiting.get(client_id, {}).get(command.pool)
        return entry.node if entry is not None and entry.node else None

    # -- what local clients are told ------------------------------------------------------

    def deliver_remote(self, recipients: Sequence[str], event: Event) -> Sequence[Action]:
        """Route an event to the members whose clients it addresses (not connected here)."""
        by_node: dict[str, list[str]] = {}
        for client_id in recipients:
            node = node_of(client_id)
            if node is not None and node != self.node:
                by_node.setdefault(node, []).append(client_id)
        if not by_node:
            return NOTHING
        encoded = codec.encode_value(event)
        return [Post(node, Events(ids, encoded)) for node, ids in by_node.items()]

    def observe(self, recipients: Sequence[str], event: Event) -> Sequence[Action]:
        """Follow what local clients are told (their remote sessions and waiting entries),
        and the core's notes about backfills (:mod:`.seats`)."""
        kind = type(event)
        if kind is SessionFormed:
            assert isinstance(event, SessionFormed)
            return self._on_session_created(event)
        if kind is SeatsChanged:
            assert isinstance(event, SeatsChanged)
            return self.seats_changed(event.session_id)
        if kind is SeatOffered:
            assert isinstance(event, SeatOffered)
            return self.seat_offered(event)
        if kind is MemberJoined or kind is MemberLeft:
            assert isinstance(event, MemberJoined | MemberLeft)
            for client_id in recipients:
                others = self.remote_sessions.get(client_id, {}).get(event.session_id)
                if others is None:
                    continue
                if kind is MemberJoined:
                    others.add(event.client_id)
                else:
                    others.discard(event.client_id)
        elif isinstance(event, EntryClosed):
            closed = event.entry_id  # (not one entered again since, in its place)
            for client_id in recipients:
                self._gone_entry(client_id, event.pool, lambda e: e.remote_id == closed)
        return NOTHING

    def _on_session_created(self, event: SessionFormed) -> Sequence[Action]:
        client_id = event.you
        host = node_of(event.session_id)
        out: list[Action] = []
        if event.pool is not None:
            self.waiting.get(client_id, {}).pop(event.pool, None)
            # Matched in one pool: the entries it has with other owners are withdrawn too; the
            # host's core withdrew those it had, not one whose pool.enter was still on its way.
            for node in sorted(self.holders.get(client_id, ())):
                out.append(Post(node, Withdraw(client_id)))
            if host != self.node:
                out.extend(self._withdraw(client_id))
            out.extend(self._withdrawing(client_id))
        if host != self.node and host is not None and node_of(client_id) == self.node:
            others = {m.client_id for m in event.members if m.client_id != client_id}
            self.remote_sessions.setdefault(client_id, {})[event.session_id] = others
            out.extend(self._held_at(host, client_id))
        return out

    def _withdrawing(self, client_id: str) -> Sequence[Action]:
        """The client was matched: its entries at other members are on their way out (a
        ``Withdraw`` went to each member holding a proxy of it). Until they say so, they
        are not moved or entered again; one whose member died already is withdrawn here."""
        waiting = self.waiting.get(client_id, {})
        for key, (_, entry) in self.again.items():
            if key[0] == client_id:  # sent before the Withdraw: withdrawn if entered
                entry.withdraw()
        out: list[Delivery] = []
        for name, entry in list(waiting.items()):
            entry.withdraw()
            if not entry.node:
                del waiting[name]
                out.append(((client_id,), entry.withdrawal(name)))
        return [Deliver(out, remote=False)] if out else NOTHING

    def _held_at(self, host: str, client_id: str) -> Sequence[Action]:
        """A local client is a member of a session at ``host``, which holds a proxy of it
        (one seated by a backfill got it there without a request from here): ``host``
        follows it like every holder (told now if it is away or gone already)."""
        if client_id not in self.core.clients:
            return [Post(host, Gone(client_id))]
        self.holders.setdefault(client_id, set()).add(host)
        return [Post(host, Away(client_id))] if client_id in self._away else NOTHING

    def _withdraw(self, client_id: str) -> Sequence[Action]:
        """The client was matched elsewhere: withdraw its entries held here (one held for
        a backfill elsewhere too: seated meanwhile, its host takes it out again, as for an
        entry left while it is offered)."""
        state = self.core.clients.get(client_id)
        if state is None:
            return NOTHING
        out: list[Delivery] = []
        for name in list(state.entries):
            entry_id, dropped = self.core.leave_pool(client_id, name)
            out.extend(dropped)
            out.append(((client_id,), EntryWithdrawn(name, entry_id, "matched")))
        return [Deliver(out)]

    # -- a local client's connection ------------------------------------------------------

    def client_gone(self, client_id: str) -> Sequence[Action]:
        """A local client disconnected for good (a clean close, or its resume grace ran
        out): every member holding a proxy of it drops it."""
        out = [Post(node, Gone(client_id)) for node in self.holders.pop(client_id, ())]
        self._away.discard(client_id)
        self.remote_sessions.pop(client_id, None)
        self.waiting.pop(client_id, None)
        self.outgoing.pop(client_id, None)
        for key in [k for k in self.pending if k[0] == client_id]:
            del self.pending[key]
            self.again.pop(key, None)
        return out

    def client_away(self, client_id: str) -> Sequence[Action]:
        """A local client's connection dropped and it is parked: the members holding a
        proxy of it pause it too (its entries there, its sessions' peers see ``away``)."""
        holders = self.holders.get(client_id)
        if not holders:
            return NOTHING
        self._away.add(client_id)
        return [Post(node, Away(client_id)) for node in holders]

    def client_attached(self, client_id: str, now_ms: int) -> Sequence[Action]:
        """A local client has a connection again: the members told it was away hear
        it is ``back`` (its entries there return to their pools)."""
        out: list[Action] = []
        if client_id in self._away:
            self._away.discard(client_id)
            out.extend(Post(node, Back(client_id)) for node in self.holders.get(client_id, ()))
        out.extend(self._rehome(client_id, now_ms))  # the members may have changed meanwhile
        return out

    def resume_elsewhere(self, effect: ResumeElsewhere, *, sendable: bool) -> list[Effect] | None:
        """``hello`` resumes with a token of ``effect.issuer``: ``None`` when the connection
        is to be relayed there, else the refusal (an issuer that is not a live member
        took the client with it: ``resume.expired``)."""
        if not sendable:
            return [Refuse(effect.request_id, unavailable())]
        if effect.issuer not in self.live:
            return resume_refused(effect.request_id)
        return None

    # -- messages from other members ------------------------------------------------------

    def receive(self, sender: str, message: Message, now_ms: int) -> Sequence[Action]:
        """A message from member ``sender`` (not a tunnel's: those are :mod:`.handoff`'s).

        One sent by a member found dead since is ignored: what it answers or
        announces, and the proxy it would make, died with that member.
        """
        if sender in self.departed:
            return NOTHING
        return _HANDLERS[type(message)](self, sender, message, now_ms)

    def _events(self, sender: str, message: Events, now_ms: int) -> Sequence[Action]:
        event = codec.decode_value(message.event)
        out: list[Action] = [Deliver([(message.to, event)], remote=False)]
        if type(event) is SessionFormed:
            assert isinstance(event, SessionFormed)
            if event.pool is not None and sender != node_of(event.session_id):
                # Relayed by the pool's owner for a client an offer seated: its host
                # waits for Told. (From the host, as every formed group's, none is due.)
                out.extend(self.told(event))
        return out

    def _serve(self, home: str, message: Command, now_ms: int) -> Sequence[Action]:
        """Run a forwarded request through the proxy conversation of its client."""
        client_id = message.client
        proxy = self.proxies.get(client_id)
        if proxy is None:
            conversation = self._conversation(now_ms)
            # The proxy is registered like a local client, so the core's rules (one entry
            # per pool, limits) and its events apply to it unchanged.
            conversation.adopt(
                client_id,
                message.project,
                message.credential,
                message.attributes,
                player_id=message.player_id,
            )
            proxy = self.proxies[client_id] = (home, conversation)
        request_id = message.request_id
        try:
            command = codec.decode_value(message.command)
            effects = proxy[1].receive(command, request_id, now_ms)
        except Exception:
            _log.exception("unhandled error on a forwarded request")
            effects = [Refuse(request_id, internal_error())]
        out: list[Action] = []
        answers = [e for e in effects if isinstance(e, ReplyWith | Refuse | Close)]
        # The answer first: the home member must see pool.entered before session.created.
        if answers:
            encoded = [codec.encode_effect(e) for e in answers]
            out.append(Post(home, Answers(client_id, encoded)))
        deliveries = [e for e in effects if isinstance(e, tuple)]
        if deliveries:
            out.append(Deliver(deliveries))
        # The proxy stays until its client disconnects (or its home dies): a mode may keep
        # state for it (a watch, a delegate) beyond entries and sessions.
        return out

    def _answers(self, sender: str, message: Answers, now_ms: int) -> Sequence[Action]:
        """Answers to a local client's forwarded request."""
        client_id = message.client
        shown: list[Effect] = []
        moved = False  # an entry may have to move: its owner may have changed meanwhile
        for effect in (_decode_answer(e) for e in message.effects):
            request_id = getattr(effect, "request_id", None)
            if request_id is not None and request_id != INTERNAL:
                # (An answer after expire() refused the request still goes out.)
                self.pending.pop((client_id, request_id), None)
            if isinstance(effect, ReplyWith):
                moved |= self._answered(sender, client_id, effect)
            elif isinstance(effect, Refuse) and request_id != INTERNAL:
                self._forget_entry(client_id, request_id)
                moved = True
            if request_id != INTERNAL:  # else the answer to a move: nobody asked
                shown.append(effect)
        out: list[Action] = [Perform(client_id, shown)] if shown else []
        if moved:
            out.extend(self._rehome(client_id, now_ms))
        return out

    def _answered(self, sender: str, client_id: str, reply: ReplyWith) -> bool:
        """Follow what a reply from ``sender`` says of the client's entries and sessions;
        whether an entry was entered."""
        answer = reply.answer
        waiting = self.waiting.get(client_id, {})
        if isinstance(answer, EnteredPool):
            outgoing = self.outgoing.get(client_id, ())
            for entry in (waiting.get(answer.pool), *(e for n, e in outgoing if n == answer.pool)):
                if entry is not None and entry.node == sender and entry.asked == reply.request_id:
                    entry.remote_id = answer.entry_id
                    if reply.request_id != INTERNAL:
                        entry.told = answer.entry_id
                    break
            else:
                again = self.again.pop((client_id, reply.request_id or ""), None)
                if again is not None:  # entered again once the first entry matched
                    name, entry = again
                    entry.remote_id = entry.told = answer.entry_id
                    self._replace(client_id, name, entry)
            return True
        if isinstance(answer, PoolLeft) and reply.request_id != INTERNAL:
            left, asked = answer.entry_id, reply.request_id
            self._gone_entry(
                client_id,
                answer.pool,
                lambda e: e.remote_id == left or (e.leaving and e.leave_request == asked),
            )
        elif isinstance(answer, SessionLeft):
            self.remote_sessions.get(client_id, {}).pop(answer.session_id, None)
        return False

    def _gone(self, sender: str, message: Gone, now_ms: int) -> Sequence[Action]:
        proxy = self.proxies.pop(message.client, None)
        return NOTHING if proxy is None else [Deliver(proxy[1].disconnect(now_ms))]

    def _withdrawn(self, sender: str, message: Withdraw, now_ms: int) -> Sequence[Action]:
        return self._withdraw(message.client)

    def _paused(self, sender: str, message: Away | Back, now_ms: int) -> Sequence[Action]:
        """A remote client served here went away or came back: pause or resume it in the
        core, as its home did."""
        client_id, away = message.client, type(message) is Away
        state = self.core.clients.get(client_id)
        if client_id not in self.proxies or state is None or state.away == away:
            return NOTHING
        if away:
            return [Deliver(self.core.suspend(client_id))]
        return [Deliver(self.core.resume(client_id, now_ms))]


def _decode_answer(value: list[Any]) -> Effect:
    """An answer from another member; one this member cannot read still answers the request
    (``server.internal``), so the client is never left waiting."""
    try:
        return codec.decode_effect(value)
    except Exception:
        _log.exception("cannot decode an answer from another member")
        request_id = value[1] if len(value) > 1 and isinstance(value[1], str) else None
        return Refuse(request_id, internal_error())


# Each message type and its handler, as the conversation's commands have theirs.
_HANDLERS: dict[type, Callable[[Router, str, Any, int], Sequence[Action]]] = {
    Events: Router._events,
    Command: Router._serve,
    Answers: Router._answers,
    Gone: Router._gone,
    Withdraw: Router._withdrawn,
    Away: Router._paused,
    Back: Router._paused,
    Opening: Router._opening,
    Unmirror: Router._unmirror,
    Offer: Router._offer,
    Seated: Router._seated,
    Unseat: Router._unseat,
    Told: Router._told,
    Forgot: Router._forgot,
}
