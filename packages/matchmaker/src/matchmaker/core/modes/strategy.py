"""The seam every pool mode plugs into: what the engine asks a mode, and what it offers one.

A live :class:`~matchmaker.core.state.Pool` owns one :class:`ModeStrategy`
object (its ``mode``), made by the registry in :mod:`matchmaker.core.modes` when
the pool is created. The engine owns the entries; a strategy only keeps what
its mode adds (listings, picks, proposals, delegates). When a group is complete
and valid, the mode hands it to :meth:`ModeHost.form`, which moves every member
into a new session in the same synchronous step: a group forms whole or nobody
moves, and no entry can be in two groups.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from matchmaker.config import Limits
from matchmaker.errors import MatchmakerError

if TYPE_CHECKING:
    from matchmaker.core.commands import ModeCommand
    from matchmaker.core.events import Delivery, ModeAnswer
    from matchmaker.core.pools import Bucket
    from matchmaker.core.state import ClientState, Lineup, Pool, PoolEntry, Session

__all__ = ["ModeHost", "ModeStrategy", "wrong_mode"]


class ModeHost(Protocol):
    """What a mode may use of the engine."""

    limits: Limits

    def new_id(self, prefix: str) -> str:
        """A process-unique id starting with ``prefix``."""
        ...

    def entry_of(self, client_id: str, pool: Pool) -> PoolEntry | None:
        """The live entry ``client_id`` holds in ``pool``, if any."""
        ...

    def form(
        self, group: list[PoolEntry], out: list[Delivery], lineup: Lineup | None = None
    ) -> str:
        """Move the live entries of ``group`` (one pool) into a new session, with the teams
        and region of ``lineup``; its id."""
        ...

    def take_seat(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> bool:
        """Seat a newly waiting ``entry`` in a session's open backfill, if one waits for
        its bucket and the mode's :meth:`ModeStrategy.fits` accepts it (``True``:
        seated; it forms no group)."""
        ...

    def refill(self, session_id: str, opened_ms: int, now_ms: int, out: list[Delivery]) -> None:
        """The members' window of the session's open backfill widened: seat what fits."""
        ...

    def schedule(self, due_ms: int, pool: Pool, key: str) -> None:
        """Call ``pool.mode.timer(key, ...)`` once the clock reaches ``due_ms``."""
        ...


class ModeStrategy:
    """A pool mode. The defaults suit a mode with no state beyond the pool's entries."""

    name = ""

    def __init__(self, pool: Pool, host: ModeHost) -> None:
        self.pool = pool
        self.host = host

    def entered(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        """``entry`` now waits in the pool (it may complete a group)."""

    def leaving(self, entry: PoolEntry, reason: str, out: list[Delivery]) -> None:
        """``entry`` is about to leave the pool (``reason``: matched, left, expired,
        disconnected); drop what the mode keeps about it."""

    def command(
        self,
        client: ClientState,
        entry: PoolEntry | None,
        command: ModeCommand,
        now_ms: int,
        out: list[Delivery],
    ) -> ModeAnswer:
        """Handle a mode request and return its reply data. ``entry`` is the client's
        entry in this pool, if any."""
        raise wrong_mode(self.pool)

    def timer(self, key: str, now_ms: int, out: list[Delivery]) -> None:
        """A timer set with :meth:`ModeHost.schedule` is due."""

    def fits(self, entry: PoolEntry, session: Session, opened_ms: int, now_ms: int) -> bool:
        """Whether a waiting ``entry`` of the session's bucket may take one of its
        backfill seats, asked ``opened_ms`` ago. The bucket already holds the
        equality and ``@self`` terms; a mode with more rules narrows this."""
        return True

    def seat_candidates(
        self, session: Session, bucket: Bucket, opened_ms: int, now_ms: int
    ) -> Iterable[PoolEntry]:
        """The waiting entries a backfill asked ``opened_ms`` may seat now, oldest
        first (each still passes :meth:`fits`)."""
        return self.pool.buckets.get(bucket, {}).values()

    def watch_opening(self, session_id: str, opened_ms: int, now_ms: int) -> None:
        """A backfill of the session stays open: a mode whose rules widen with time
        schedules :meth:`ModeHost.refill` at the next widening."""

    def holds(self) -> bool:
        """Whether the pool must stay live while it has no entries."""
        return False

    def owns_proposal(self, proposal_id: str) -> bool:
        """Whether a proposal of this pool has that id (only propose pools have any)."""
        return False

    def detach(self, client: ClientState, now_ms: int, out: list[Delivery]) -> None:
        """A delegate of this pool disconnected (only delegated pools have any)."""


def wrong_mode(pool: Pool) -> MatchmakerError:
    """The error for a request that the pool's mode does not serve."""
    return MatchmakerError(
        f"pool {pool.name!r} is a {pool.spec.mode} pool; it does not serve this request",
        code="pool.wrong_mode",
        details={"pool": pool.name, "mode": pool.spec.mode},
    )
