"""Which member serves what, sans I/O: the cluster's routing state and every decision on it.

A :class:`Router` is to a member what a
:class:`~matchmaker.core.conversation.Conversation` is to a connection: it is fed
what happened (a local client's request or event, a message from another member,
a change of the live members, the passing of time, a message Redis lost) and
returns the :data:`actions <Action>` the member must carry out, in order: post a
message to a member, perform effects on a local client's connection, deliver
the core's events. It reads no clock and touches no socket; it calls the
process's core (synchronous, like itself) for what the cluster does to it.

Its state (a :class:`~.routes.Routes`, which it shares with the collaborators
that own the remote clients served here, :mod:`.serving`, the failure handling,
:mod:`.failover`, the backfill, :mod:`.seats`, where sessions are hosted,
:mod:`.placement.hosting`, and a drain, :mod:`.placement.drain`) holds:

- the *proxies*: remote clients served here, each through a conversation of its
  own (the same protocol rules and core calls as a local client's);
- for each local client, the *holders* (members holding a proxy of it), its
  entries *waiting* at other members, its *remote sessions* (hosted elsewhere, with
  their other members) and the forwarded requests *pending* an answer.

A pool (every pool of one name in a Project) and an ad-hoc room are owned by
one live member, chosen by rendezvous hashing (:mod:`.ring`); a session formed
there lives on the member most of its members are connected to, moved there at
once (:mod:`.placement.hosting`, which also re-hosts it when its host dies; :mod:`.placement.drain`
hands a stopping member's clients and sessions over). A request whose pool,
room or session lives elsewhere goes there as a :class:`~.messages.Command`;
the owner answers the home and routes the events. So matching stays one
synchronous core step on one process, and a group forms whole or not at all.
A backfill's open seats are filled where the session's pool is (:mod:`.seats`).

A dropped client stays away for the resume grace wherever its state is: its
home parks it and tells the holders (``Away``, later ``Back``, or ``Gone`` when
the grace ran out), which pause and resume it there as the core does locally.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from matchmaker.cluster import codec
from matchmaker.cluster.failover import Failover
from matchmaker.cluster.messages import (
    Answers,
    Away,
    Back,
    Command,
    Events,
    Forgot,
    Gone,
    Handover,
    Hold,
    Host,
    Message,
    Moved,
    Offer,
    Opening,
    PartyClosed,
    PartyWithdraw,
    Rehomed,
    Seated,
    Told,
    Unmirror,
    Unseat,
    Withdraw,
)
from matchmaker.cluster.parties import PartyRouting
from matchmaker.cluster.placement.drain import Drain, heir_of
from matchmaker.cluster.placement.hosting import Hosting
from matchmaker.cluster.ring import node_of
from matchmaker.cluster.routes import (
    ANSWER_TIMEOUT_MS,
    INTERNAL,
    NOTHING,
    Action,
    Deliver,
    Perform,
    Post,
    Routes,
    Waiting,
    unavailable,
)
from matchmaker.cluster.seats import Seats
from matchmaker.cluster.serving import Serving
from matchmaker.core import Delivery, Event
from matchmaker.core.backfill import SeatOffered, SeatsChanged
from matchmaker.core.commands import ClientCommand, EnterPool, LeavePool, Send
from matchmaker.core.conversation import Conversation, resume_refused
from matchmaker.core.effects import Effect, Refuse, ReplyWith, ResumeElsewhere
from matchmaker.core.engine import entry_limit
from matchmaker.core.events import (
    EnteredPool,
    EntryClosed,
    EntryExpired,
    EntryPoolClosed,
    EntryWithdrawn,
    MemberJoined,
    MemberLeft,
    PoolLeft,
    PoolNoDelegate,
    PublicMember,
    SessionFormed,
    SessionLeft,
)
from matchmaker.core.parties import PartyChanged
from matchmaker.errors import internal_error

__all__ = [
    "ANSWER_TIMEOUT_MS",
    "INTERNAL",
    "Action",
    "Deliver",
    "Perform",
    "Post",
    "Router",
    "Routes",
    "unavailable",
]

_log = logging.getLogger("matchmaker.cluster")

# The events about a client's entry, naming it by its id (the owner's: translated).
EntryEvent = EntryWithdrawn | EntryExpired | EntryPoolClosed | PoolNoDelegate


class Router:
    """A member's routing: fed what happened, returns what to do (see the module).

    Its state is one :class:`~.routes.Routes`, shared with the collaborators that own a
    job on it: :class:`~.serving.Serving` (remote clients served here),
    :class:`~.failover.Failover` (losses, timeouts, members' changes),
    :class:`~.seats.Seats` (backfill across members),
    :class:`~.placement.hosting.Hosting` (where sessions are hosted) and
    :class:`~.placement.drain.Drain` (a drain's hand-over). The router decides for local
    clients (their requests, what they are told, the answers and events members send
    them) and hands the rest to the collaborator whose job it is, by explicit calls.
    """

    def __init__(self, routes: Routes) -> None:
        self.routes = routes
        self.hosting = hosting = Hosting(routes)
        self.drain = drain = Drain(routes, hosting)
        self.failover = failover = Failover(routes, hosting)
        self.seats = seats = Seats(routes)
        self.serving = Serving(routes)
        self.parties = parties = PartyRouting(routes)
        # Each message type and its handler, as the conversation's commands have theirs.
        self._handlers: dict[type, Callable[[str, Any, int], Sequence[Action]]] = {
            Events: self._events,
            Command: self._command,
            Answers: self._answers,
            Gone: self._followed,
            Withdraw: self._followed,
            Away: self._followed,
            Back: self._followed,
            Hold: self._on_hold,
            PartyWithdraw: parties.on_withdraw,
            PartyClosed: parties.on_closed,
            Opening: seats.on_opening,
            Unmirror: seats.on_unmirror,
            Offer: seats.on_offer,
            Seated: seats.on_seated,
            Unseat: seats.on_unseat,
            Told: seats.on_told,
            Forgot: failover.on_forgot,
            Host: hosting.on_host,
            Moved: hosting.on_hosting,
            Handover: drain.on_handover,
            Rehomed: drain.on_rehomed,
        }

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
        routes = self.routes
        client = conversation.client
        if client is None or len(routes.live) == 1:
            return None  # alone, every owner is this member: not a single hash on the way
        if type(command) is EnterPool:
            command = self.parties.attach(client, command)  # a party held here: its view
        target = self._entry_node(client.client_id, command) or routes.target(client, command)
        if target is None:
            return None
        if type(command) is EnterPool and routes.over_entry_limit(client, command):
            refused = conversation.admit(command, request_id, now_ms)
            limit: list[Effect] = [Refuse(request_id, entry_limit(routes.core.limits))]
            return [Perform(client.client_id, refused or limit)]
        if target == routes.node:
            return None
        client_id = client.client_id
        refused = conversation.admit(command, request_id, now_ms)
        if refused is not None:
            return [Perform(client_id, refused)]
        if not sendable:
            return routes.refused(client_id, request_id)
        if type(command) is Send and command.seq is not None:
            # Taken here, where the client's ack lives; its session's host relays it as is.
            answered = conversation.sequence(command, request_id)
            if answered is not None:
                return [Perform(client_id, answered)]
        if type(command) is EnterPool:
            name = command.policy or command.pool or routes.default_policy(client) or ""
            old = routes.waiting.get(client_id, {}).get(name)
            # Already waiting there: the owner refuses this one (pool.already_entered), and
            # the entry stays the one entered first (unless that one is on its way out, or
            # is matched before this one arrives: :attr:`again`).
            if old is None or old.settling:
                routes.replace(client_id, name, Waiting(target, command, request_id))
            elif request_id is not None:
                routes.again[client_id, request_id] = (name, Waiting(target, command, request_id))
        elif type(command) is LeavePool:
            entry = routes.waiting.get(client_id, {}).get(command.pool)
            if entry is not None and entry.node == target:
                entry.leave(request_id)
        return [routes.send(client, target, command, request_id, now_ms)]

    def _entry_node(self, client_id: str, command: ClientCommand) -> str | None:
        """Where a ``pool.leave`` goes when its entry waits at another member: after its
        ``pool.enter``, to that member (its pool may have another owner by now, which
        never had the entry)."""
        if type(command) is not LeavePool:
            return None
        entry = self.routes.waiting.get(client_id, {}).get(command.pool)
        return entry.node if entry is not None and entry.node else None

    # -- what local clients are told ------------------------------------------------------

    def deliver_remote(self, recipients: Sequence[str], event: Event) -> Sequence[Action]:
        """Route an event to the members whose clients it addresses (not connected here)."""
        by_node: dict[str, list[str]] = {}
        home_of = self.routes.homes.get
        for client_id in recipients:
            node = home_of(client_id) or node_of(client_id)
            if node is not None and node != self.routes.node:
                by_node.setdefault(node, []).append(client_id)
        if not by_node:
            return NOTHING
        encoded = codec.encode_value(event)
        return [Post(node, Events(ids, encoded)) for node, ids in by_node.items()]

    def observe(self, recipients: Sequence[str], event: Event) -> Sequence[Action]:
        """Follow what local clients are told (their remote sessions and parties), and the
        core's notes about backfills (:mod:`.seats`). (Their entries at other members end
        by those members' events, followed as they arrive: :meth:`_entry_event`.)"""
        kind = type(event)
        if kind is SessionFormed:
            assert isinstance(event, SessionFormed)
            return self._on_session_created(event)
        if kind is SeatsChanged:
            assert isinstance(event, SeatsChanged)
            return self.seats.seats_changed(event.session_id)
        if kind is SeatOffered:
            assert isinstance(event, SeatOffered)
            return self.seats.seat_offered(event)
        if kind is PartyChanged:
            assert isinstance(event, PartyChanged)
            return self.parties.changed(event.party_id)
        if kind is MemberJoined or kind is MemberLeft:
            assert isinstance(event, MemberJoined | MemberLeft)
            for client_id in recipients:
                members = self.routes.remote_sessions.get(client_id, {}).get(event.session_id)
                if members is None:
                    continue
                if isinstance(event, MemberJoined):
                    shown = PublicMember(event.client_id, event.public, event.player_id)
                    members[event.client_id] = shown
                else:
                    members.pop(event.client_id, None)
        return NOTHING

    def _on_session_created(self, event: SessionFormed) -> Sequence[Action]:
        routes = self.routes
        client_id = event.you
        out: list[Action] = list(self.hosting.place(event))  # (before its host is looked up)
        host = routes.host_of(event.session_id)
        if event.pool is not None:
            routes.waiting.get(client_id, {}).pop(event.pool, None)
            # Matched in one pool: the entries it has with other owners are withdrawn too; the
            # host's core withdrew those it had, not one whose pool.enter was still on its way.
            for node in sorted(routes.holders.get(client_id, ())):
                out.append(Post(node, Withdraw(client_id)))
            if node_of(event.session_id) != routes.node:  # (the core that matched it did)
                out.extend(self.serving.withdraw(client_id))
            out.extend(self._withdrawing(client_id))
        if host != routes.node and host is not None and node_of(client_id) == routes.node:
            members = {m.client_id: m for m in event.members}
            routes.remote_sessions.setdefault(client_id, {})[event.session_id] = members
            if host not in routes.live:
                self.hosting.orphaned(event.session_id)
            out.extend(self._held_at(host, client_id))
        return out

    def _withdrawing(self, client_id: str) -> Sequence[Action]:
        """The client was matched: its entries at other members are on their way out (a
        ``Withdraw`` went to each member holding a proxy of it). Until they say so, they
        are not moved or entered again; one whose member died already is withdrawn here."""
        waiting = self.routes.waiting.get(client_id, {})
        for key, (_, entry) in self.routes.again.items():
            if key[0] == client_id:  # sent before the Withdraw: withdrawn if entered
                entry.withdraw()
        out: list[Delivery] = []
        for name, entry in list(waiting.items()):
            entry.withdraw()
            if not entry.node:
                del waiting[name]
                if entry.told is not None:  # (else its client was never told of it)
                    out.append(((client_id,), entry.withdrawal(name)))
        return [Deliver(out, remote=False)] if out else NOTHING

    def _held_at(self, host: str, client_id: str) -> Sequence[Action]:
        """A local client is a member of a session at ``host``, which holds a proxy of it
        (one seated by a backfill got it there without a request from here): ``host``
        follows it like every holder (told now if it is away or gone already)."""
        routes = self.routes
        if client_id not in routes.core.clients:
            return [Post(host, Gone(client_id))]
        routes.holders.setdefault(client_id, set()).add(host)
        return [Post(host, Away(client_id))] if client_id in routes.away else NOTHING

    # -- a local client's connection ------------------------------------------------------

    def client_gone(self, client_id: str) -> Sequence[Action]:
        """A local client disconnected for good (a clean close, or its resume grace ran
        out): every member holding a proxy of it drops it."""
        routes = self.routes
        holders = routes.holders.pop(client_id, ())
        if client_id in routes.handed:  # handed over by a drain: its heir speaks for it now
            routes.handed.discard(client_id)
            holders = ()
        out = [Post(node, Gone(client_id)) for node in holders]
        routes.away.discard(client_id)
        routes.remote_sessions.pop(client_id, None)
        routes.waiting.pop(client_id, None)
        routes.outgoing.pop(client_id, None)
        routes.strays.difference_update([k for k in routes.strays if k[0] == client_id])
        for key in [k for k in routes.pending if k[0] == client_id]:
            del routes.pending[key]
            routes.again.pop(key, None)
        return out

    def client_away(self, client_id: str) -> Sequence[Action]:
        """A local client's connection dropped and it is parked: the members holding a
        proxy of it pause it too (its entries there, its sessions' peers see ``away``)."""
        holders = self.routes.holders.get(client_id)
        if not holders:
            return NOTHING
        self.routes.away.add(client_id)
        return [Post(node, Away(client_id)) for node in holders]

    def client_attached(self, client_id: str, now_ms: int) -> Sequence[Action]:
        """A local client has a connection again: the members told it was away hear
        it is ``back`` (its entries there return to their pools)."""
        routes = self.routes
        out: list[Action] = []
        if client_id in routes.away:
            routes.away.discard(client_id)
            out.extend(Post(node, Back(client_id)) for node in routes.holders.get(client_id, ()))
        out.extend(
            self.failover.rehome(client_id, now_ms)
        )  # the members may have changed meanwhile
        return out

    def resume_elsewhere(
        self, effect: ResumeElsewhere, *, sendable: bool
    ) -> list[Effect] | ResumeElsewhere:
        """``hello`` resumes with a token of ``effect.issuer``: the resume to relay (to the
        issuer, or, when the issuer is no longer a member, to the member it handed its
        clients over to when it drained: the one its token hashes to, :mod:`.placement.drain`),
        else the refusal (a dead issuer took the client with it: ``resume.expired``)."""
        if not sendable:
            return [Refuse(effect.request_id, unavailable())]
        routes = self.routes
        if effect.issuer in routes.live:
            return effect
        resume = effect.hello.resume
        heir = None if resume is None else heir_of(resume.token, routes.live)
        if heir is None or heir == routes.node:
            return resume_refused(effect.request_id)  # (a token handed over here resumes here)
        return dataclasses.replace(effect, issuer=heir)

    # -- failures and members' changes ----------------------------------------------------

    def lost(self, message: Message, now_ms: int) -> Sequence[Action]:
        """Redis did not take ``message``: an offer's entry is put back (:mod:`.seats`), a
        forwarded request refused (:mod:`.failover`), a party entry passed on no longer
        followed (:mod:`.parties`)."""
        if type(message) is Offer:
            assert isinstance(message, Offer)
            return self.seats.lost(message, now_ms)
        self.parties.lost(message)
        return self.failover.lost(message, now_ms)

    def expire(self, now_ms: int) -> Sequence[Action]:
        """The time passed: newcomers no longer awaited are forgotten (:mod:`.seats`), and
        the forwarded requests whose answer did not come in time refused (:mod:`.failover`)."""
        self.seats.expire()
        return [*self.failover.expire(now_ms), *self.hosting.expire(now_ms)]

    def members_changed(
        self,
        live: Iterable[str],
        joined: Iterable[str],
        died: Iterable[str],
        local_clients: Iterable[str],
        now_ms: int,
    ) -> Sequence[Action]:
        """The live members are now ``live``: the failure handling follows them
        (:meth:`.Failover.members_changed`), then the openings follow their pools
        (:meth:`.Seats.members_changed`)."""
        self.routes.members_are(live)
        out = list(self.failover.members_changed(joined, died, local_clients, now_ms))
        out.extend(self.seats.members_changed(now_ms))
        out.extend(self.parties.moved(now_ms))
        return out

    # -- messages from other members ------------------------------------------------------

    def receive(self, sender: str, message: Message, now_ms: int) -> Sequence[Action]:
        """A message from member ``sender`` (not a tunnel's: those are :mod:`.handoff`'s).

        One sent by a member found dead since is ignored: what it answers or
        announces, and the proxy it would make, died with that member.
        """
        if sender in self.routes.departed:
            return NOTHING
        return self._handlers[type(message)](sender, message, now_ms)

    def _events(self, sender: str, message: Events, now_ms: int) -> Sequence[Action]:
        event = codec.decode_value(message.event)
        if isinstance(event, EntryEvent):
            return self._entry_event(message.to, event)
        out: list[Action] = [Deliver([(message.to, event)], remote=False)]
        if type(event) is SessionFormed:
            assert isinstance(event, SessionFormed)
            if event.pool is not None and sender != self.routes.host_of(event.session_id):
                # Relayed by the pool's owner for a client an offer seated: its host
                # waits for Told. (From the host, as every formed group's, none is due.)
                out.extend(self.seats.told(event))
        return out

    def _entry_event(self, recipients: Sequence[str], event: EntryEvent) -> Sequence[Action]:
        """An event about local clients' entry, from the member where it waits: each client
        hears it under the id it was told, or not at all (:meth:`.Routes.known_as`); one
        that closes a followed entry ends its following (not one entered since in its
        place, nor, for a party's, the holder's: :meth:`.PartyRouting.closed`)."""
        routes = self.routes
        closed = event.entry_id if isinstance(event, EntryClosed) else None
        heard: dict[str, list[str]] = {}
        out: list[Action] = []
        for client_id in recipients:
            known = routes.known_as(client_id, event.pool, event.entry_id)
            if known is not None:
                heard.setdefault(known, []).append(client_id)
            if closed is not None:
                routes.strays.discard((client_id, closed))
                gone = routes.gone_entry(client_id, event.pool, lambda e: e.remote_id == closed)
                if gone is not None:
                    out.extend(self.parties.closed(client_id, event.pool, gone))
        deliveries: list[Delivery] = [
            (ids, event if known == event.entry_id else dataclasses.replace(event, entry_id=known))
            for known, ids in heard.items()
        ]
        return [Deliver(deliveries, remote=False), *out] if deliveries else out

    def _command(self, home: str, message: Command, now_ms: int) -> Sequence[Action]:
        """A remote client's request: a party's entry may be passed on to its pool's owner,
        or bring the party's members with it (:mod:`.parties`); else served here."""
        relayed = self.parties.relay(home, message, now_ms)
        if relayed is not None:
            return relayed
        held = self.parties.members(message, now_ms)
        refusals_to = self.parties.refusals_to(home, message)
        return [*held, *self.serving.on_command(home, message, now_ms, refusals_to=refusals_to)]

    def _followed(
        self, sender: str, message: Away | Back | Gone | Withdraw, now_ms: int
    ) -> Sequence[Action]:
        """A remote client served here went away, came back, is gone or was matched
        elsewhere: its proxy follows, and so does the pool's owner of a party entry relayed
        from here."""
        if isinstance(message, Gone):
            out = list(self.serving.on_gone(sender, message, now_ms))
        elif isinstance(message, Withdraw):
            out = list(self.serving.on_withdraw(sender, message, now_ms))
        else:
            out = list(self.serving.on_paused(sender, message, now_ms))
        out.extend(self.parties.follow(message))
        return out

    def _on_hold(self, sender: str, message: Hold, now_ms: int) -> Sequence[Action]:
        """``sender`` holds a proxy of a local client now (a party member): it follows it."""
        return self._held_at(sender, message.client)

    def _answers(self, sender: str, message: Answers, now_ms: int) -> Sequence[Action]:
        """Answers to a local client's forwarded request (or, for a remote client whose
        party's entry this member passed on, to be relayed to its home)."""
        client_id = message.client
        routes = self.routes
        # Local: connected here, its id naming this member or, handed over by a drain,
        # the one that drained. Anyone else's answers go on to its home.
        local = client_id in routes.core.clients and client_id not in routes.proxies
        home = None if local else routes.home_of(client_id)
        if home is not None and home != routes.node:
            self.parties.answered(message)
            return [Post(home, message)]
        shown: list[Effect] = []
        moved = False  # an entry may have to move: its owner may have changed meanwhile
        for decoded in (_decode_answer(e) for e in message.effects):
            effect = decoded
            request_id = getattr(effect, "request_id", None)
            if request_id is not None and request_id != INTERNAL:
                # (An answer after expire() refused the request still goes out.)
                self.routes.pending.pop((client_id, request_id), None)
            if isinstance(effect, ReplyWith):
                entered, effect = self._answered(sender, client_id, effect)
                moved |= entered
            elif isinstance(effect, Refuse) and request_id != INTERNAL:
                self.routes.forget_entry(client_id, request_id)
                moved = True
            if request_id != INTERNAL:  # else the answer to a move: nobody asked
                shown.append(effect)
        out: list[Action] = [Perform(client_id, shown)] if shown else []
        if moved:
            out.extend(self.failover.rehome(client_id, now_ms))
        return out

    def _answered(self, sender: str, client_id: str, reply: ReplyWith) -> tuple[bool, ReplyWith]:
        """Follow what a reply from ``sender`` says of the client's entries and sessions:
        whether an entry was entered, and the reply its client is shown (a ``pool.left``
        names the entry by the id its client was told, though it moved since)."""
        routes = self.routes
        answer = reply.answer
        waiting = routes.waiting.get(client_id, {})
        if isinstance(answer, EnteredPool):
            outgoing = routes.outgoing.get(client_id, ())
            for entry in (waiting.get(answer.pool), *(e for n, e in outgoing if n == answer.pool)):
                if entry is not None and entry.answered_by(sender, reply):
                    entry.remote_id = answer.entry_id
                    if reply.request_id != INTERNAL:
                        entry.told = answer.entry_id
                    break
            else:
                again = routes.again.pop((client_id, reply.request_id or ""), None)
                if again is not None:  # entered again once the first entry matched
                    name, entry = again
                    entry.remote_id = entry.told = answer.entry_id
                    routes.replace(client_id, name, entry)
                elif reply.request_id == INTERNAL:  # moved after it matched: never told
                    routes.strays.add((client_id, answer.entry_id))
            return True, reply
        if isinstance(answer, PoolLeft) and reply.request_id != INTERNAL:
            left, asked = answer.entry_id, reply.request_id
            gone = routes.gone_entry(
                client_id,
                answer.pool,
                lambda e: e.remote_id == left or (e.leaving and e.leave_request == asked),
            )
            if gone is not None and gone.told is not None and gone.told != left:
                return False, ReplyWith(asked, PoolLeft(answer.pool, gone.told))
        elif isinstance(answer, SessionLeft):
            routes.remote_sessions.get(client_id, {}).pop(answer.session_id, None)
        return False, reply


def _decode_answer(value: list[Any]) -> Effect:
    """An answer from another member; one this member cannot read still answers the request
    (``server.internal``), so the client is never left waiting."""
    try:
        return codec.decode_effect(value)
    except Exception:
        _log.exception("cannot decode an answer from another member")
        request_id = value[1] if len(value) > 1 and isinstance(value[1], str) else None
        return Refuse(request_id, internal_error())
