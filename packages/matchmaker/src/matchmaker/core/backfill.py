"""Backfill, sans I/O: a formed session asks its pool for more members.

A member sends ``session.backfill {session_id, seats}``. The session remembers
where it formed (its pool's key, spec and bucket: :class:`~matchmaker.core.state.Origin`),
so the seats are filled under the rules that formed it: the oldest entries of
the same bucket first, at once; the seats still open stay as an *opening* that
the next entries arriving in that bucket fill before they form a new group
(PlayFab's rule: backfill before new matches). An opening is keyed by
``(pool key, bucket)``, so an arrival looks at one dict, never at every
session. It ends when filled, replaced by another request (``seats: 0``
cancels it) or when the session ends.

A newcomer must also pass the pool's mode (:meth:`ModeStrategy.fits`): in a
pool with a range rule it must accept every member and every member must
accept it, the members' window growing from the request as a waiting entry's
does from its enter. An opening is tried again whenever an entry of its
bucket is tried (it enters, resumes, or its own window widens), and when the
members' window widens (one timer per opening, at its next step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from matchmaker.core.events import Backfilled, Delivery
from matchmaker.core.pools import Bucket, PoolKey
from matchmaker.core.state import Entry, Pool, Session
from matchmaker.errors import MatchmakerError

__all__ = ["BACKFILL_MODES", "Backfills", "SeatHost"]

BACKFILL_MODES = frozenset({"auto"})
"""The modes whose sessions can be backfilled: those where the server chooses members."""


class SeatHost(Protocol):
    """What backfill needs of the engine: the live pools, and moving an entry into a session."""

    pools: dict[PoolKey, Pool]

    def seat(self, entry: Entry, session: Session, out: list[Delivery]) -> None:
        """Move the live ``entry`` into ``session`` (members told, the newcomer shown all)."""
        ...


@dataclass(slots=True, eq=False)
class _Opening:
    session: Session
    seats: int
    opened_ms: int  # when requested: the members' windows widen from here


class Backfills:
    """Every open backfill request of one process."""

    def __init__(self, host: SeatHost) -> None:
        self._host = host
        self._by_session: dict[str, _Opening] = {}
        # (pool key, bucket) -> the openings waiting there, oldest request first
        self._by_bucket: dict[tuple[PoolKey, Bucket], dict[str, _Opening]] = {}

    def __len__(self) -> int:
        return len(self._by_session)

    def request(self, session: Session, seats: int, now_ms: int, out: list[Delivery]) -> Backfilled:
        """Fill up to ``seats`` of ``session`` now; keep the rest open. Replaces the
        session's earlier request (``seats: 0`` only cancels it)."""
        origin = session.origin
        if origin is None or origin.spec.mode not in BACKFILL_MODES:
            raise MatchmakerError(
                "only sessions formed by an auto pool can be backfilled",
                code="backfill.unsupported",
                details={"session_id": session.session_id},
            )
        open_seats = origin.spec.group_size - len(session.members)
        if not 0 <= seats <= open_seats:
            raise MatchmakerError(
                f"seats must be 0 to {open_seats} (the pool's groupSize less the members)",
                code="backfill.invalid",
                details={"session_id": session.session_id, "open_seats": open_seats},
            )
        self.cancel(session.session_id)
        filled = self._fill(session, seats, now_ms, now_ms, out) if seats else []
        pending = seats - len(filled)
        if pending:
            opening = _Opening(session, pending, now_ms)
            self._by_session[session.session_id] = opening
            slot = (origin.key, origin.bucket)
            self._by_bucket.setdefault(slot, {})[session.session_id] = opening
            self._watch(opening, now_ms)
        return Backfilled(session.session_id, filled, pending)

    def retry(self, session_id: str, opened_ms: int, now_ms: int, out: list[Delivery]) -> None:
        """The members' window of an opening widened (its mode's timer): fill what fits now."""
        opening = self._by_session.get(session_id)
        if opening is None or opening.opened_ms != opened_ms:
            return  # filled, cancelled or replaced since
        opening.seats -= len(self._fill(opening.session, opening.seats, opened_ms, now_ms, out))
        if opening.seats:
            self._watch(opening, now_ms)
        else:
            self.cancel(session_id)

    def _fill(
        self, session: Session, seats: int, opened_ms: int, now_ms: int, out: list[Delivery]
    ) -> list[str]:
        """Seat up to ``seats`` waiting entries that fit ``session``, oldest first."""
        origin = session.origin
        assert origin is not None
        pool = self._host.pools.get(origin.key)
        if pool is None or pool.spec != origin.spec:
            return []
        chosen: list[Entry] = []
        for entry in pool.mode.seat_candidates(session, origin.bucket, opened_ms, now_ms):
            if len(chosen) == seats:
                break
            if entry.client.client_id not in session.members and pool.mode.fits(
                entry, session, opened_ms, now_ms
            ):
                chosen.append(entry)
        for entry in chosen:  # seated after the look: seating changes the bucket
            self._host.seat(entry, session, out)
        return [entry.client.client_id for entry in chosen]

    def _watch(self, opening: _Opening, now_ms: int) -> None:
        """Let the pool's mode time the opening's next widening, if its rules widen."""
        origin = opening.session.origin
        assert origin is not None
        pool = self._host.pools.get(origin.key)
        if pool is not None and pool.spec == origin.spec:
            pool.mode.watch_opening(opening.session.session_id, opening.opened_ms, now_ms)

    def take(self, entry: Entry, now_ms: int, out: list[Delivery]) -> bool:
        """Seat an entry that just arrived in an opening of its bucket, if one waits for it."""
        pool = entry.pool
        openings = self._by_bucket.get((pool.key, entry.bucket))
        if not openings:
            return False
        for opening in openings.values():
            session = opening.session
            origin = session.origin
            if origin is None or origin.spec != pool.spec:
                continue  # an ad-hoc pool of that name, created again with other parameters
            if entry.client.client_id in session.members:
                continue
            if not pool.mode.fits(entry, session, opening.opened_ms, now_ms):
                continue
            self._host.seat(entry, session, out)
            opening.seats -= 1
            if not opening.seats:
                self.cancel(session.session_id)
            return True
        return False

    def cancel(self, session_id: str) -> None:
        """Forget the session's opening, if any (filled, replaced, or the session ended)."""
        opening = self._by_session.pop(session_id, None)
        if opening is None:
            return
        origin = opening.session.origin
        assert origin is not None
        slot = (origin.key, origin.bucket)
        openings = self._by_bucket[slot]
        del openings[session_id]
        if not openings:
            del self._by_bucket[slot]
