"""The routing state of a member, and the lookups every routing decision starts from.

:class:`Routes` holds what :class:`~.routing.Router` knows (see there): the
proxies, and where local clients' entries, sessions and pending requests are;
with who owns what (:mod:`.ring`) and how a request is sent to its owner. The
actions a router returns are defined here too.
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
from matchmaker.cluster.ring import node_of, owner, pool_key, room_key
from matchmaker.core import Delivery, Matchmaker
from matchmaker.core import commands as core_commands
from matchmaker.core.commands import EnterPool, JoinSession
from matchmaker.core.conversation import Conversation
from matchmaker.core.effects import Effect, Refuse
from matchmaker.core.pools import PoolSpec
from matchmaker.core.state import ClientState
from matchmaker.errors import MatchmakerError
from matchmaker.model import Project

__all__ = [
    "ANSWER_TIMEOUT_S",
    "INTERNAL",
    "NOTHING",
    "Action",
    "Deliver",
    "Perform",
    "Post",
    "Routes",
    "pool_command",
    "unavailable",
]


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
        public=public,
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
        # Sessions hosted here whose open backfill is mirrored at their pool's owner: which.
        self.mirrored: dict[str, str] = {}
        core.backfills.report()  # the core notes every change of an opening (seats.py)

    # -- lookups --------------------------------------------------------------------------

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
            client.player_id,
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
            return NOTHING
        return [Perform(client_id, [Refuse(request_id, unavailable())])]

    def _forget_entry(self, client_id: str, request_id: str) -> None:
        """The ``pool.enter`` sent as ``request_id`` was refused: no entry waits for it."""
        waiting = self.waiting.get(client_id, {})
        for name, (_, _, asked) in list(waiting.items()):
            if asked == request_id:
                del waiting[name]
