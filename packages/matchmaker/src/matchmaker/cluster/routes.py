"""The routing state of a member, and the lookups every routing decision starts from.

:class:`Routes` is the one state a member's routing works on, held by the
:class:`~.routing.Router` and handed to its collaborators (:class:`~.serving.Serving`,
:class:`~.failover.Failover`, :class:`~.seats.Seats`), as a starlette ``Router`` holds
its routes: the proxies, and where local clients' entries, sessions and pending
requests are; with who owns what (:mod:`.ring`) and how a request is sent to its
owner. The actions a router returns are defined here too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from matchmaker.cluster import codec
from matchmaker.cluster.messages import (
    Command,
    Message,
)
from matchmaker.cluster.ring import code_key, node_of, owner, pool_key, room_key
from matchmaker.cluster.stages import LEAVING, WITHDRAWN, Stage, Step, advance
from matchmaker.core import Delivery, Matchmaker
from matchmaker.core.commands import ClientCommand, EnterPool, JoinParty, JoinSession
from matchmaker.core.conversation import Conversation
from matchmaker.core.effects import Effect, Refuse, ReplyWith
from matchmaker.core.events import EntryWithdrawn, PoolLeft, PublicMember
from matchmaker.core.parties import normalise_code
from matchmaker.core.pools import PoolSpec
from matchmaker.core.state import ClientState
from matchmaker.errors import MatchmakerError
from matchmaker.model import Project

__all__ = [
    "ANSWER_TIMEOUT_MS",
    "INTERNAL",
    "NOTHING",
    "Action",
    "Deliver",
    "Perform",
    "Post",
    "Routes",
    "Waiting",
    "pool_command",
    "pool_spec",
    "unavailable",
]


# Pool and room owners remembered (a bound: ad-hoc pool and room names are the clients').
OWNER_CACHE = 65_536
# A re-entered entry (its owner died) answers to this request id, which no client can send.
INTERNAL = "\x00cluster"
# A forwarded request not answered within this long (its answer was lost in a Redis outage)
# is refused with cluster.unavailable, so no request is left waiting.
ANSWER_TIMEOUT_MS = 3000
# How long a session.send without a request id is remembered: a host's death is noticed
# within the member TTL and a heartbeat (membership.py), one sent before that is covered.
UNANSWERED_MS = 5000


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


@dataclass(slots=True)
class Waiting:
    """A local client's entry at another member, or on its way there.

    Until its member says it is gone, the entry is this process's to follow: moved
    when its pool's owner changes, entered again when its member dies, unless its
    client is leaving it (the ``pool.leave`` on its way behind the ``pool.enter``) or
    was matched (a ``Withdraw`` on its way), as one process would have let go of it by
    then. Which of those it is: its ``stage``, changed only by the steps of
    :data:`~.stages.TRANSITIONS`.
    """

    node: str  # the member it was sent to ("": that member died, to be entered again)
    command: EnterPool
    asked: str | None  # the pool.enter's request id (INTERNAL: a move, answering nobody)
    remote_id: str | None = None  # its id at ``node``, once ``node`` answered
    told: str | None = None  # the id its client was told (kept when it moves)
    leave_request: str | None = None  # the pool.leave's request id, while ``leaving``
    stage: Stage = Stage.FOLLOWED
    reason: str = "matched"  # why it is withdrawn, once it is: "matched" or "party_changed"

    @property
    def settling(self) -> bool:
        """Whether it is on its way out (left or withdrawn): it stays where it is."""
        return self.stage is not Stage.FOLLOWED

    @property
    def leaving(self) -> bool:
        """Whether its client's ``pool.leave`` is on its way."""
        return self.stage in LEAVING

    @property
    def withdrawn(self) -> bool:
        """Whether its client was matched (a ``Withdraw`` is on its way), or the party it
        waits with changed (a ``PartyWithdraw``)."""
        return self.stage in WITHDRAWN

    def answered_by(self, sender: str, reply: ReplyWith) -> bool:
        """Whether ``reply`` from member ``sender`` says where this entry waits: the answer
        to its ``pool.enter`` from where it was sent; for a party's entry sent to the
        party's holder, which passes it on to the pool's owner (and enters it again there
        when the pool moves), that owner's answer to it or to such a move."""
        if self.command.party_id is not None and self.command.party is None:
            return reply.request_id in (self.asked, INTERNAL)
        return sender == self.node and reply.request_id == self.asked

    def leave(self, request_id: str | None) -> None:
        """Its client sent ``pool.leave`` for it (as ``request_id``)."""
        self.stage = advance(self.stage, Step.LEAVE)
        self.leave_request = request_id

    def leave_refused(self) -> None:
        """Its ``pool.leave`` was refused: it stands where it stood before."""
        self.stage = advance(self.stage, Step.LEAVE_REFUSED)
        self.leave_request = None

    def withdraw(self, reason: str = "matched") -> None:
        """Its client was matched (or, ``party_changed``, the party it waits with changed):
        the entry is on its way out, for the first reason given."""
        if not self.withdrawn:
            self.reason = reason
        self.stage = advance(self.stage, Step.WITHDRAW)

    def withdrawal(self, pool: str) -> EntryWithdrawn:
        """What its client is told when its member died while it was being withdrawn (what
        that member would have said)."""
        return EntryWithdrawn(pool, self.told or self.remote_id or "", self.reason)

    def left(self, pool: str) -> ReplyWith:
        """The answer to its ``pool.leave`` when its member died before leaving it."""
        return ReplyWith(self.leave_request, PoolLeft(pool, self.told or self.remote_id or ""))


NOTHING: tuple[Action, ...] = ()  # most inputs call for no action


def unavailable() -> MatchmakerError:
    return MatchmakerError(
        "the cluster's Redis cannot be reached; try again", code="cluster.unavailable"
    )


def pool_command(name: str, spec: PoolSpec, public: Any, *, policy: bool) -> EnterPool:
    """The ``pool.enter`` that makes (or joins) the pool ``name`` of ``spec`` on another
    member: a policy's by name, an ad-hoc one with its parameters."""
    if policy:
        return EnterPool(policy=name, public=public)
    return EnterPool(
        pool=name,
        create=True,
        mode=spec.mode,
        group_size=spec.group_size,
        filter=dict(spec.filter) or None,
        min_group_size=spec.min_group_size,
        fill_timeout_ms=spec.fill_timeout_ms,
        teams=list(spec.teams) or None,
        balance=spec.balance,
        regions=spec.regions,
        public=public,
    )


def pool_spec(encoded: list[Any]) -> PoolSpec:
    """The spec of an encoded :func:`pool_command` (as a session's pool travels)."""
    command = codec.decode_value(encoded)
    assert isinstance(command, EnterPool)
    assert command.mode is not None
    assert command.group_size is not None
    return PoolSpec.of(
        command.mode,
        command.group_size,
        command.filter,
        command.min_group_size,
        command.fill_timeout_ms,
        line=(command.teams, command.balance, command.regions),
    )


class Routes:
    """This member's routing state: proxies of remote clients, and where local clients'
    entries, sessions and requests are."""

    def __init__(
        self,
        node: str,
        core: Matchmaker,
        live: Iterable[str],
        *,
        project: Callable[[ClientState], Project],
        conversation: Callable[[int], Conversation],
    ) -> None:
        """``project(client)`` is the client's Project as of now (raises a
        ``MatchmakerError`` if it has none); ``conversation(now_ms)`` a new conversation
        with ``core``, for a proxy."""
        self.node = node
        self.core = core
        self.live: frozenset[str] = frozenset(live)
        self.project = project
        self.conversation = conversation
        # Remote clients served here: id -> (their home member, their proxy conversation).
        self.proxies: dict[str, tuple[str, Conversation]] = {}
        # Local clients: the members holding a proxy of them.
        self.holders: dict[str, set[str]] = {}
        # Local clients away (parked) whose holders were told so.
        self.away: set[str] = set()
        # Local clients: sessions hosted elsewhere -> the other members (as session.created
        # shows them: what a surviving home tells the new host when the host dies).
        self.remote_sessions: dict[str, dict[str, dict[str, PublicMember]]] = {}
        # Sessions hosted by another member than the one their id names (moved to where
        # their members are, or re-hosted): the host, as far as this member routes to it.
        self.hosts: dict[str, str] = {}
        # Clients whose home is not the member their id names (handed over by a drain):
        # their home, for the events addressed to them and their proxies here.
        self.homes: dict[str, str] = {}
        # Local clients handed over to another member by this one's drain: no Gone for them.
        self.handed: set[str] = set()
        # Local clients' session.sends without a request id sent to a session's host, which
        # nothing answers: (client id, session id) -> (that host, when last). If the host
        # dies, the client is told they may be lost (pruned after UNANSWERED_MS).
        self.unanswered: dict[tuple[str, str], tuple[str, int]] = {}
        # Told (messages.Told) of a session that is not here yet, its Host on its way from
        # the member that formed it: (session id, client id) -> when (pruned after
        # ANSWER_TIMEOUT_MS).
        self.told_early: dict[tuple[str, str], int] = {}
        # Sessions local clients learnt of after their host's death was noticed here: to
        # re-host at the next expire().
        self.orphans: set[str] = set()
        # Members of a session re-hosted here whose home has not spoken for them yet:
        # (session id, client id) -> since when (dropped from it past ANSWER_TIMEOUT_MS).
        self.unconfirmed: dict[tuple[str, str], int] = {}
        # Local clients: pool name -> their entry at another member.
        self.waiting: dict[str, dict[str, Waiting]] = {}
        # Local clients: (pool name, entry) on their way out, replaced in ``waiting`` by a
        # new pool.enter: still followed until their member says they are gone.
        self.outgoing: dict[str, list[tuple[str, Waiting]]] = {}
        # Local clients' entries a move made after the entry it moved was matched (the move's
        # answer found nothing followed): (client id, entry id). Their client was never told
        # of them and hears nothing of them (the match's Withdraw takes them out).
        self.strays: set[tuple[str, str]] = set()
        # Members found dead, until seen again (a Redis restart can make live ones look dead).
        self.departed: set[str] = set()
        # Forwarded requests awaiting their answer: (client id, request id) -> when sent.
        self.pending: dict[tuple[str, str], int] = {}
        # A pool.enter sent while its client already waits in that pool, until answered:
        # (client id, request id) -> (pool name, its entry). The owner refuses it
        # (pool.already_entered) unless the first entry matched meanwhile; then it is
        # entered, and followed from its answer on.
        self.again: dict[tuple[str, str], tuple[str, Waiting]] = {}
        # Owners by ring key among the current live members (emptied when they change).
        self._owners: dict[str, str] = {}
        # Sessions hosted here whose open backfill is mirrored at their pool's owner: which.
        self.mirrored: dict[str, str] = {}
        # Newcomers seated here by an offer, their session.created relayed by the pool's
        # owner: (session id, client id) -> that owner, until their home says they were told.
        self.relaying: dict[tuple[str, str], str] = {}
        core.backfills.report()  # the core notes every change of an opening (seats.py)

    # -- lookups --------------------------------------------------------------------------

    def over_entry_limit(self, client: ClientState, command: EnterPool) -> bool:
        """Whether a new entry would pass ``max_pools_per_client`` counting the client's
        entries at every owner (each owner's core only sees those in its own pools)."""
        waiting = self.waiting.get(client.client_id)
        if not waiting:
            return False  # all its entries are here: the core counts them
        name = command.policy or command.pool or self.default_policy(client)
        old = waiting.get(name or "")
        if (old is not None and not old.settling) or name in client.entries:
            return False  # pool.already_entered, from whoever owns it
        limit = self.core.limits.max_pools_per_client
        # Those on their way out do not count: one process would have let go of them.
        staying = sum(1 for entry in waiting.values() if not entry.settling)
        return len(client.entries) + staying >= limit

    def send(
        self,
        client: ClientState,
        target: str,
        command: ClientCommand,
        request_id: str | None,
        now_ms: int,
    ) -> Post:
        """The message that sends ``command`` to ``target``, which now holds a proxy of
        the client; the request awaits its answer (:attr:`pending`) unless it is a move."""
        client_id = client.client_id
        self.holders.setdefault(client_id, set()).add(target)
        if request_id is not None and request_id != INTERNAL:
            self.pending[client_id, request_id] = now_ms
        elif request_id is None and isinstance(
            session := getattr(command, "session_id", None), str
        ):
            self.unanswered[client_id, session] = (target, now_ms)
        message = Command(
            client_id,
            client.project_id,
            client.credential,
            client.attributes,
            client.player_id,
            request_id,
            codec.encode_value(command),
        )
        return Post(target, message)

    def target(self, client: ClientState, command: ClientCommand) -> str | None:
        """The member that owns what ``command`` is about; ``None``: no member in particular.

        A request naming a pool (``pool.enter``, ``pool.leave`` and every mode's
        request) goes to the pool's owner, ``session.join`` to the room's owner,
        and one naming a session, a proposal or a party to the member that minted its
        id; ``party.join`` to the member whose code it is, and a party's ``pool.enter``
        to the member holding the party, unless it carries the party's view (from
        there): then to the pool's owner (:mod:`.parties`).
        """
        project_id = client.project_id
        if type(command) is EnterPool:
            if command.party_id is not None and command.party is None:
                node = node_of(command.party_id)
                return node if node in self.live else None
            name = command.policy or command.pool or self.default_policy(client)
            return None if name is None else self.owner_of(pool_key(project_id, name))
        if type(command) is JoinSession:
            return self.owner_of(room_key(project_id, command.session))
        if type(command) is JoinParty:
            return self.owner_of(code_key(project_id, normalise_code(command.code)))
        session_id = getattr(command, "session_id", None)
        if isinstance(session_id, str):
            host = self.host_of(session_id)
            return host if host in self.live else None
        for field in ("proposal_id", "party_id"):
            minted = getattr(command, field, None)
            if isinstance(minted, str):
                node = node_of(minted)
                return node if node in self.live else None
        pool = getattr(command, "pool", None)
        return self.owner_of(pool_key(project_id, pool)) if isinstance(pool, str) else None

    def host_of(self, session_id: str) -> str | None:
        """The member hosting ``session_id``: this one if its core has it, else the one
        this member was told of (:attr:`hosts`), else the one its id names."""
        if session_id in self.core.sessions:
            return self.node
        return self.hosts.get(session_id) or node_of(session_id)

    def hosted_at(self, session_id: str, host: str) -> None:
        """``session_id`` is hosted by ``host`` (kept up to :data:`OWNER_CACHE` sessions,
        the oldest forgotten first: a bound, as ad-hoc sessions are the clients')."""
        hosts = self.hosts
        hosts.pop(session_id, None)
        if len(hosts) >= OWNER_CACHE:
            del hosts[next(iter(hosts))]
        if host != node_of(session_id):
            hosts[session_id] = host

    def home_of(self, client_id: str) -> str | None:
        """The member ``client_id`` is connected to (as far as this member knows)."""
        return self.homes.get(client_id) or node_of(client_id)

    def rehome(self, client_id: str, home: str) -> None:
        """``client_id`` is connected to ``home`` (noted when its id names another)."""
        if home == node_of(client_id):
            self.homes.pop(client_id, None)
        else:
            self.homes[client_id] = home

    def members_are(self, live: Iterable[str]) -> None:
        """The live members are now ``live`` (owners are looked up again only once the
        failure handling has seen who joined or died: :meth:`forget_owners`)."""
        self.live = frozenset(live)

    def forget_owners(self) -> None:
        """The live members changed: every owner is looked up again."""
        self._owners.clear()

    def owner_of(self, key: str) -> str:
        """``owner(key, live)``, hashed once per key while the members stay the same."""
        owners = self._owners
        found = owners.get(key)
        if found is None:
            if len(owners) >= OWNER_CACHE:
                owners.clear()
            found = owners[key] = owner(key, self.live)
        return found

    def placed(self, project_id: str, code: str) -> bool:
        """Whether a party code is this member's to mint: ``party.join`` finds it here."""
        return self.owner_of(code_key(project_id, code)) == self.node

    def default_policy(self, client: ClientState) -> str | None:
        """The client's Project's default policy, a request naming no pool enters."""
        try:
            project = self.project(client)
        except MatchmakerError:
            return None
        default = project.default_policy()
        return None if default is None else default.name

    def refused(self, client_id: str, request_id: str | None) -> Sequence[Action]:
        """``cluster.unavailable`` for a request that cannot be sent (or was lost)."""
        if request_id == INTERNAL:
            return NOTHING
        return [Perform(client_id, [Refuse(request_id, unavailable())])]

    def forget_entry(
        self, client_id: str, request_id: str | None, *, timed_out: bool = False
    ) -> None:
        """The request sent as ``request_id`` was refused: a ``pool.enter``'s entry waits
        nowhere, a ``pool.leave``'s entry stays (and may move again). A ``pool.leave``
        that ``timed_out`` may still be carried out (its answer follows, or its member
        died): its entry stays on its way out."""
        if request_id is not None:
            self.again.pop((client_id, request_id), None)
        waiting = self.waiting.get(client_id, {})
        for name, entry in list(waiting.items()):
            if entry.asked == request_id and request_id is not None:
                del waiting[name]
            elif entry.leaving and entry.leave_request == request_id and not timed_out:
                entry.leave_refused()
        outgoing = self.outgoing.get(client_id)
        if outgoing and request_id is not None and not timed_out:
            outgoing[:] = [
                (n, e) for n, e in outgoing if request_id not in (e.asked, e.leave_request)
            ]

    def replace(self, client_id: str, name: str, entry: Waiting) -> None:
        """``entry`` is the client's entry in pool ``name`` now; one on its way out there
        is still followed (:attr:`outgoing`)."""
        waiting = self.waiting.setdefault(client_id, {})
        old = waiting.get(name)
        if old is not None:
            self.outgoing.setdefault(client_id, []).append((name, old))
        waiting[name] = entry

    def known_as(self, client_id: str, name: str, entry_id: str) -> str | None:
        """The id a local client knows its entry ``entry_id`` in pool ``name`` by: the one
        it was told, kept when the entry moves (each owner mints its own). ``None``: one it
        is not to hear of, a :attr:`strays` entry, or the copy a move leaves behind at the
        former owner, closed there before the move's leave arrived (the moved copy speaks
        for the entry, so its client hears of its end once, as on one process)."""
        if (client_id, entry_id) in self.strays:
            return None
        outgoing = self.outgoing.get(client_id, ())
        followed = [
            e
            for e in (
                self.waiting.get(client_id, {}).get(name),
                *(e for n, e in outgoing if n == name),
            )
            if e is not None
        ]
        for entry in followed:
            if entry.remote_id == entry_id:
                return entry.told or entry_id
        if any(entry.told == entry_id for entry in followed):
            return None
        return entry_id

    def gone_entry(
        self, client_id: str, name: str, found: Callable[[Waiting], bool]
    ) -> Waiting | None:
        """The client's entry in pool ``name`` for which ``found`` holds is gone: which (if
        it was followed)."""
        waiting = self.waiting.get(client_id, {})
        entry = waiting.get(name)
        if entry is not None and found(entry):
            del waiting[name]
            return entry
        outgoing = self.outgoing.get(client_id)
        if not outgoing:
            return None
        gone = next((e for n, e in outgoing if n == name and found(e)), None)
        outgoing[:] = [(n, e) for n, e in outgoing if n != name or not found(e)]
        return gone
