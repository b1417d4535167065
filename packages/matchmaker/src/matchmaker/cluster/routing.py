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

A dropped client stays away for the resume grace wherever its state is: its
home parks it and tells the holders (``Away``, later ``Back``, or ``Gone`` when
the grace ran out), which pause and resume it there as the core does locally.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from matchmaker.cluster import codec
from matchmaker.cluster.messages import (
    Answers,
    Away,
    Back,
    Command,
    Events,
    Gone,
    Message,
    Withdraw,
)
from matchmaker.cluster.ring import node_of, owner, pool_key, room_key
from matchmaker.core import Delivery, Event, Matchmaker
from matchmaker.core import commands as core_commands
from matchmaker.core.commands import EnterPool, JoinSession, LeavePool
from matchmaker.core.conversation import Conversation, resume_refused
from matchmaker.core.effects import Close, Effect, Refuse, Reply, ResumeElsewhere
from matchmaker.core.engine import entry_limit
from matchmaker.core.events import (
    EntryClosed,
    MemberJoined,
    MemberLeft,
    PoolEntered,
    PoolLeft,
    PoolWithdrawn,
    SessionCreated,
    SessionLeft,
)
from matchmaker.core.state import ClientState
from matchmaker.errors import MatchmakerError, internal_error
from matchmaker.model import Project

__all__ = [
    "ANSWER_TIMEOUT_S",
    "INTERNAL",
    "Action",
    "Deliver",
    "Perform",
    "Post",
    "Router",
    "unavailable",
]

_log = logging.getLogger("matchmaker.cluster")

# Pool and room owners remembered (a bound: ad-hoc pool and room names are the clients').
OWNER_CACHE = 65_536
# A re-entered entry (its owner died) answers to this request id, which no client can send.
INTERNAL = "\x00cluster"
# A forwarded request not answered within this long (its answer was lost in a Redis outage)
# is refused with cluster.unavailable, so no request is left waiting.
ANSWER_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class Post:
    """Write ``message`` to member ``node``'s inbox (if Redis loses it: :meth:`Router.lost`)."""

    node: str
    message: Message


@dataclass(frozen=True, slots=True)
class Perform:
    """Carry out ``effects`` on a local client's connection, if it is still open."""

    client_id: str
    effects: list[Effect]


@dataclass(frozen=True, slots=True)
class Deliver:
    """Deliver the core's ``deliveries`` to local recipients; with ``remote``, route the
    others to their members (through :meth:`Router.deliver_remote`)."""

    deliveries: list[Delivery]
    remote: bool = True


Action = Post | Perform | Deliver
_NOTHING: tuple[Action, ...] = ()


def unavailable() -> MatchmakerError:
    return MatchmakerError(
        "the cluster's Redis cannot be reached; try again", code="cluster.unavailable"
    )


class Router:
    """This member's routing state: proxies of remote clients, and where local clients'
    entries, sessions and requests are."""

    def __init__(
        self,
        node: str,
        core: Matchmaker,
        live: Iterable[str],
        *,
        project: Callable[[ClientState], Project],
        conversation: Callable[[float], Conversation],
    ) -> None:
        """``project(client)`` is the client's Project as of now (raises a
        ``MatchmakerError`` if it has none); ``conversation(now)`` a new conversation
        with ``core``, for a proxy."""
        self.node = node
        self.core = core
        self.live: frozenset[str] = frozenset(live)
        self._project = project
        self._conversation = conversation
        # Remote clients served here: id -> (their home member, their proxy conversation).
        self.proxies: dict[str, tuple[str, Conversation]] = {}
        # Local clients: the members holding a proxy of them.
        self.holders: dict[str, set[str]] = {}
        # Local clients away (parked) whose holders were told so.
        self._away: set[str] = set()
        # Local clients: sessions hosted elsewhere -> the other members' ids.
        self.remote_sessions: dict[str, dict[str, set[str]]] = {}
        # Local clients: pool name -> (owner, the pool.enter, its request id) while waiting there.
        self.waiting: dict[str, dict[str, tuple[str, EnterPool, str | None]]] = {}
        # Members found dead, until seen again (a Redis restart can make live ones look dead).
        self.departed: set[str] = set()
        # Forwarded requests awaiting their answer: (client id, request id) -> when sent.
        self.pending: dict[tuple[str, str], float] = {}
        # Owners by ring key among the current live members (emptied when they change).
        self._owners: dict[str, str] = {}

    # -- a local client's request ---------------------------------------------------------

    def forward(
        self,
        conversation: Conversation,
        command: core_commands.Command,
        request_id: str | None,
        now: float,
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
        target = self._target(client, command)
        if target is None:
            return None
        if type(command) is EnterPool and self._over_entry_limit(client, command):
            refused = conversation.admit(command, request_id, now)
            limit: list[Effect] = [Refuse(request_id, entry_limit(self.core.limits))]
            return [Perform(client.client_id, refused or limit)]
        if target == self.node:
            return None
        client_id = client.client_id
        refused = conversation.admit(command, request_id, now)
        if refused is not None:
            return [Perform(client_id, refused)]
        if not sendable:
            return self._refused(client_id, request_id)
        if type(command) is EnterPool:
            name = command.policy or command.pool or self._default_policy(client) or ""
            # Already waiting there: the owner refuses this one (pool.already_entered), and
            # the entry stays the one entered first.
            self.waiting.setdefault(client_id, {}).setdefault(name, (target, command, request_id))
        return [self._forward(client, target, command, request_id, now)]

    def _over_entry_limit(self, client: ClientState, command: EnterPool) -> bool:
        """Whether a new entry would pass ``max_pools_per_client`` counting the client's
        entries at every owner (each owner's core only sees those in its own pools)."""
        waiting = self.waiting.get(client.client_id)
        if not waiting:
            return False  # all its entries are here: the core counts them
        name = command.policy or command.pool or self._default_policy(client)
        if name in waiting or name in client.entries:
            return False  # pool.already_entered, from whoever owns it
        limit = self.core.limits.max_pools_per_client
        return len(client.entries) + len(waiting) >= limit

    def _forward(
        self,
        client: ClientState,
        target: str,
        command: core_commands.Command,
        request_id: str | None,
        now: float,
    ) -> Post:
        client_id = client.client_id
        self.holders.setdefault(client_id, set()).add(target)
        if request_id is not None and request_id != INTERNAL:
            self.pending[client_id, request_id] = now
        message = Command(
            client_id,
            client.project_id,
            client.credential,
            client.attributes,
            request_id,
            codec.encode_value(command),
        )
        return Post(target, message)

    def _target(self, client: ClientState, command: core_commands.Command) -> str | None:
        """The member that owns what ``command`` is about; ``None``: no member in particular.

        A request naming a pool (``pool.enter``, ``pool.leave`` and every mode's
        request) goes to the pool's owner, ``session.join`` to the room's owner,
        and one naming a session or a proposal to the member that minted its id.
        """
        project_id = client.project_id
        if type(command) is EnterPool:
            name = command.policy or command.pool or self._default_policy(client)
            return None if name is None else self._owner(pool_key(project_id, name))
        if type(command) is JoinSession:
            return self._owner(room_key(project_id, command.session))
        for field in ("session_id", "proposal_id"):
            minted = getattr(command, field, None)
            if isinstance(minted, str):
                node = node_of(minted)
                return node if node in self.live else None
        pool = getattr(command, "pool", None)
        return self._owner(pool_key(project_id, pool)) if isinstance(pool, str) else None

    def _owner(self, key: str) -> str:
        """``owner(key, live)``, hashed once per key while the members stay the same."""
        owners = self._owners
        found = owners.get(key)
        if found is None:
            if len(owners) >= OWNER_CACHE:
                owners.clear()
            found = owners[key] = owner(key, self.live)
        return found

    def _default_policy(self, client: ClientState) -> str | None:
        try:
            project = self._project(client)
        except MatchmakerError:
            return None
        default = project.default_policy()
        return None if default is None else default.name

    def _refused(self, client_id: str, request_id: str | None) -> Sequence[Action]:
        """``cluster.unavailable`` for a request that cannot be sent (or was lost)."""
        if request_id == INTERNAL:
            return _NOTHING
        return [Perform(client_id, [Refuse(request_id, unavailable())])]

    # -- what local clients are told ------------------------------------------------------

    def deliver_remote(self, recipients: Sequence[str], event: Event) -> Sequence[Action]:
        """Route an event to the members whose clients it addresses (not connected here)."""
        by_node: dict[str, list[str]] = {}
        for client_id in recipients:
            node = node_of(client_id)
            if node is not None and node != self.node:
                by_node.setdefault(node, []).append(client_id)
        if not by_node:
            return _NOTHING
        encoded = codec.encode_value(event)
        return [Post(node, Events(ids, encoded)) for node, ids in by_node.items()]

    def observe(self, recipients: Sequence[str], event: Event) -> Sequence[Action]:
        """Follow what local clients are told: their remote sessions and waiting entries."""
        kind = type(event)
        if kind is SessionCreated:
            assert isinstance(event, SessionCreated)
            return self._on_session_created(event)
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
            for client_id in recipients:
                self.waiting.get(client_id, {}).pop(event.pool, None)
        return _NOTHING

    def _on_session_created(self, event: SessionCreated) -> Sequence[Action]:
        client_id = event.you
        host = node_of(event.session_id)
        out: list[Action] = []
        if event.pool is not None:
            self.waiting.get(client_id, {}).pop(event.pool, None)
            # Matched in one pool: the entries it has with other owners are withdrawn too.
            for node in self.holders.get(client_id, set()) - {host}:
                out.append(Post(node, Withdraw(client_id)))
            if host != self.node:
                out.extend(self._withdraw(client_id))
        if host != self.node:
            others = {m.client_id for m in event.members if m.client_id != client_id}
            self.remote_sessions.setdefault(client_id, {})[event.session_id] = others
        return out

    def _withdraw(self, client_id: str) -> Sequence[Action]:
        """The client was matched elsewhere: withdraw its entries held here."""
        state = self.core.clients.get(client_id)
        if state is None:
            return _NOTHING
        out: list[Delivery] = []
        for name in list(state.entries):
            entry_id, dropped = self.core.leave_pool(client_id, name)
            out.extend(dropped)
            out.append(((client_id,), PoolWithdrawn(name, entry_id, "matched")))
        return [Deliver(out)]

    # -- a local client's connection ------------------------------------------------------

    def client_gone(self, client_id: str) -> Sequence[Action]:
        """A local client disconnected for good (a clean close, or its resume grace ran
        out): every member holding a proxy of it drops it."""
        out = [Post(node, Gone(client_id)) for node in self.holders.pop(client_id, ())]
        self._away.discard(client_id)
        self.remote_sessions.pop(client_id, None)
        self.waiting.pop(client_id, None)
        for key in [k for k in self.pending if k[0] == client_id]:
            del self.pending[key]
        return out

    def client_away(self, client_id: str) -> Sequence[Action]:
        """A local client's connection dropped and it is parked: the members holding a
        proxy of it pause it too (its entries there, its sessions' peers see ``away``)."""
        holders = self.holders.get(client_id)
        if not holders:
            return _NOTHING
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

    def receive(self, sender: str, message: Message, now: float, now_ms: int) -> Sequence[Action]:
        """A message from member ``sender`` (not a tunnel's: those are :mod:`.handoff`'s).

        One sent by a member found dead since is ignored: what it answers or
        announces, and the proxy it would make, died with that member.
        """
        if sender in self.departed:
            return _NOTHING
        return _HANDLERS[type(message)](self, sender, message, now, now_ms)

    def _events(self, sender: str, message: Events, now: float, now_ms: int) -> Sequence[Action]:
        return [Deliver([(message.to, codec.decode_value(message.event))], remote=False)]

    def _serve(self, home: str, message: Command, now: float, now_ms: int) -> Sequence[Action]:
        """Run a forwarded request through the proxy conversation of its client."""
        client_id = message.client
        proxy = self.proxies.get(client_id)
        if proxy is None:
            conversation = self._conversation(now)
            # The proxy is registered like a local client, so the core's rules (one entry
            # per pool, limits) and its events apply to it unchanged.
            conversation.adopt(client_id, message.project, message.credential, message.attributes)
            proxy = self.proxies[client_id] = (home, conversation)
        request_id = message.request_id
        try:
            command = codec.decode_value(message.command)
            effects = proxy[1].receive(command, request_id, now)
        except Exception:
            _log.exception("unhandled error on a forwarded request")
            effects = [Refuse(request_id, internal_error())]
        out: list[Action] = []
        answers = [e for e in effects if isinstance(e, Reply | Refuse | Close)]
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

    def _answers(self, sender: str, message: Answers, now: float, now_ms: int) -> Sequence[Action]:
        """Answers to a local client's forwarded request."""
        client_id = message.client
        waiting = self.waiting.get(client_id, {})
        shown: list[Effect] = []
        entered = False
        for effect in (_decode_answer(e) for e in message.effects):
            request_id = getattr(effect, "request_id", None)
            if request_id == INTERNAL:
                continue  # the answer to a re-entry or a move: nobody asked
            if request_id is not None:
                # (An answer after expire() refused the request still goes out.)
                self.pending.pop((client_id, request_id), None)
            if isinstance(effect, Reply):
                answer = effect.answer
                if isinstance(answer, PoolLeft):
                    waiting.pop(answer.pool, None)
                elif isinstance(answer, PoolEntered):
                    entered = True
                elif isinstance(answer, SessionLeft):
                    self.remote_sessions.get(client_id, {}).pop(answer.session_id, None)
            elif isinstance(effect, Refuse) and effect.request_id is not None:
                self._forget_entry(client_id, effect.request_id)
            shown.append(effect)
        out: list[Action] = [Perform(client_id, shown)] if shown else []
        if entered:
            out.extend(self._rehome(client_id, now_ms))  # its owner may have changed meanwhile
        return out

    def _forget_entry(self, client_id: str, request_id: str) -> None:
        """The ``pool.enter`` sent as ``request_id`` was refused: no entry waits for it."""
        waiting = self.waiting.get(client_id, {})
        for name, (_, _, asked) in list(waiting.items()):
            if asked == request_id:
                del waiting[name]

    def _gone(self, sender: str, message: Gone, now: float, now_ms: int) -> Sequence[Action]:
        proxy = self.proxies.pop(message.client, None)
        return _NOTHING if proxy is None else [Deliver(proxy[1].disconnect())]

    def _withdrawn(
        self, sender: str, message: Withdraw, now: float, now_ms: int
    ) -> Sequence[Action]:
        return self._withdraw(message.client)

    def _paused(
        self, sender: str, message: Away | Back, now: float, now_ms: int
    ) -> Sequence[Action]:
        """A remote client served here went away or came back: pause or resume it in the
        core, as its home did."""
        client_id, away = message.client, type(message) is Away
        state = self.core.clients.get(client_id)
        if client_id not in self.proxies or state is None or state.away == away:
            return _NOTHING
        if away:
            return [Deliver(self.core.suspend(client_id))]
        return [Deliver(self.core.resume(client_id, now_ms))]

    # -- failures -------------------------------------------------------------------------

    def lost(self, message: Message) -> Sequence[Action]:
        """Redis did not take ``message``: a forwarded request is refused
        (``cluster.unavailable``); anything else is left to the failure handling
        (members' deaths, :meth:`expire`)."""
        if type(message) is Command:
            assert isinstance(message, Command)
            return self._refused(message.client, message.request_id)
        return _NOTHING

    def expire(self, now: float) -> Sequence[Action]:
        """Refuse the forwarded requests whose answer did not come in time."""
        late = [k for k, sent in self.pending.items() if now - sent > ANSWER_TIMEOUT_S]
        out: list[Action] = []
        for client_id, request_id in late:
            del self.pending[client_id, request_id]
            self._forget_entry(client_id, request_id)
            out.extend(self._refused(client_id, request_id))
        return out

    def members_changed(
        self,
        live: Iterable[str],
        joined: Iterable[str],
        died: Iterable[str],
        local_clients: Iterable[str],
        now_ms: int,
    ) -> Sequence[Action]:
        """The live members are now ``live``: forget the clients of those that ``died``,
        and move the entries of ``local_clients`` (the clients connected here) whose
        pool has a new owner.

        A member that joined and died between two looks (so never seen here) may have
        left proxies here: it is handled as dead too.
        """
        self.live = frozenset(live)
        joined = set(joined)
        self.departed -= joined
        unseen = {home for home, _ in self.proxies.values()} - self.live
        died = sorted({*died, *unseen})
        if not joined and not died:
            return _NOTHING
        self._owners.clear()
        out: list[Action] = []
        for node in died:
            out.extend(self._member_died(node))
        out.extend(self._rebalance(local_clients, now_ms))
        return out

    def _member_died(self, node: str) -> Sequence[Action]:
        """``node`` stopped renewing its key: forget its clients, re-home what it owned."""
        self.departed.add(node)
        out: list[Action] = []
        for client_id, (home, conversation) in list(self.proxies.items()):
            if home == node:
                del self.proxies[client_id]
                out.append(Deliver(conversation.disconnect()))
        for client_id, sessions in self.remote_sessions.items():
            for session_id in [s for s in sessions if node_of(s) == node]:
                for other in sorted(sessions.pop(session_id)):
                    left = MemberLeft(session_id, other, "disconnected")
                    out.append(Deliver([((client_id,), left)], remote=False))
        for holders in self.holders.values():
            holders.discard(node)
        for client_id, waiting in self.waiting.items():
            for name, (owner_node, command, asked) in list(waiting.items()):
                if owner_node != node:
                    continue
                if asked is not None and self.pending.pop((client_id, asked), None) is not None:
                    # Not answered yet: refused now (the client may enter again), not entered
                    # again behind its back before the timeout would refuse it.
                    del waiting[name]
                    out.extend(self._refused(client_id, asked))
                else:
                    # Its pools died with it: _rebalance enters the entry again at the new owner.
                    waiting[name] = ("", command, INTERNAL)
        return out

    def _rebalance(self, local_clients: Iterable[str], now_ms: int) -> Sequence[Action]:
        """The members changed: local clients' entries whose pool has a new owner move there.

        An entry at a live former owner is withdrawn there first. Entries of the
        ``auto`` mode that wait in this process's own core move too (others keep
        their mode's state here until they match, leave or expire).
        """
        out: list[Action] = []
        for client_id in list(self.waiting):
            out.extend(self._rehome(client_id, now_ms))
        for client_id in list(local_clients):
            state = self.core.clients.get(client_id)
            if state is None:
                continue
            for name, entry in list(state.entries.items()):
                spec = entry.pool.spec
                new = self._owner(pool_key(state.project_id, name))
                if new == self.node or spec.mode != "auto" or entry.paused:
                    continue
                if entry.pool.key[0] == "policy":
                    command = EnterPool(policy=name, public=entry.public)
                else:
                    command = EnterPool(
                        pool=name,
                        create=True,
                        mode=spec.mode,
                        group_size=spec.group_size,
                        filter=dict(spec.filter) or None,
                        public=entry.public,
                    )
                _, left = self.core.leave_pool(client_id, name)
                out.append(Deliver(left))
                out.extend(self._move(state, name, new, command, now_ms))
        return out

    def _rehome(self, client_id: str, now_ms: int) -> Sequence[Action]:
        """Move the client's entries held by other members whose pool has a new owner.

        An away client's entries wait until it is back (:meth:`client_attached`):
        entered at a new owner, one could be matched at once, while it is away. An
        entry whose ``pool.enter`` is not answered yet moves once it is (moved now, a
        timeout refusing that request would leave it entered behind the client's back).
        """
        state = self.core.clients.get(client_id)
        waiting = self.waiting.get(client_id)
        if state is None or state.away or not waiting:
            return _NOTHING
        out: list[Action] = []
        for name, (old, command, asked) in list(waiting.items()):
            if asked is not None and (client_id, asked) in self.pending:
                continue  # moved once answered: the client must hear where it is first
            new = self._target(state, command)
            if new is None or new == old:
                continue
            del waiting[name]
            if old in self.live:
                out.append(self._forward(state, old, LeavePool(name), INTERNAL, 0.0))
            out.extend(self._move(state, name, new, command, now_ms))
        return out

    def _move(
        self, state: ClientState, name: str, target: str, command: EnterPool, now_ms: int
    ) -> Sequence[Action]:
        """Enter ``command`` again at ``target`` (this process or another), answering nobody."""
        if target != self.node:
            self.waiting.setdefault(state.client_id, {})[name] = (target, command, INTERNAL)
            return [self._forward(state, target, command, INTERNAL, 0.0)]
        with contextlib.suppress(MatchmakerError):
            project = self._project(state)
            _, out = self.core.enter(state.client_id, project, command, now_ms)
            return [Deliver(out)]
        return _NOTHING


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
_HANDLERS: dict[type, Callable[[Router, str, Any, float, int], Sequence[Action]]] = {
    Events: Router._events,
    Command: Router._serve,
    Answers: Router._answers,
    Gone: Router._gone,
    Withdraw: Router._withdrawn,
    Away: Router._paused,
    Back: Router._paused,
}
