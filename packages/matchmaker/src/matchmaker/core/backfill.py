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

Under ``--cluster`` a session lives on the member that formed it and its pool
on the pool's owner, which can be another member once the members changed.
The cluster's router then asks for *notes* (:meth:`Backfills.report`): a
:class:`SeatsChanged` whenever a session's opening changes, so the router can
*mirror* it at the pool's owner (:meth:`Backfills.mirror`: the members'
attributes, the seats, when it was asked). There an entry that fits a mirrored
opening is *held* (out of its bucket, matched by nothing else) and offered to
the session's member (:class:`SeatOffered`); that member seats the client
(:meth:`Backfills.offered`) or declines, and the owner drops the held entry as
matched or returns it to its place (:meth:`Backfills.settle`). So a client is
seated in one session at most, and an entry never waits in a pool and a
session at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from matchmaker.core.events import Backfilled, Delivery, Note
from matchmaker.core.pools import Bucket, PoolKey, PoolSpec
from matchmaker.core.state import ClientState, Member, Origin, Pool, PoolEntry, Session
from matchmaker.errors import MatchmakerError
from matchmaker.model import FilterValue

__all__ = [
    "BACKFILL_MODES",
    "Backfills",
    "SeatHost",
    "SeatOffered",
    "SeatsChanged",
    "mirror_origin",
]

BACKFILL_MODES = frozenset({"auto"})
"""The modes whose sessions can be backfilled: those where the server chooses members."""


@dataclass(frozen=True, slots=True)
class SeatsChanged(Note):
    """For the cluster's router, never a client (no recipients): the open backfill of a
    session hosted here changed (asked, filled, cancelled, or its members changed)."""

    session_id: str


@dataclass(frozen=True, slots=True)
class SeatOffered(Note):
    """For the cluster's router, never a client (no recipients): the waiting entry
    ``entry_id`` of ``client_id`` is held here for the mirrored opening of a session
    hosted elsewhere."""

    session_id: str
    client_id: str
    entry_id: str
    public: dict[str, Any] | None


class SeatHost(Protocol):
    """What backfill needs of the engine: the live pools, moving an entry into a session,
    and holding an entry for a session elsewhere."""

    pools: dict[PoolKey, Pool]

    def seat(self, entry: PoolEntry, session: Session, out: list[Delivery]) -> None:
        """Move the live ``entry`` into ``session`` (members told, the newcomer shown all)."""
        ...

    def admit(
        self,
        client: ClientState,
        public: dict[str, Any] | None,
        session: Session,
        out: list[Delivery],
        *,
        relayed: bool = False,
    ) -> None:
        """Seat ``client``, whose entry was chosen by another member, in ``session``
        (``relayed``: its ``session.created`` goes through that member)."""
        ...

    def hold(self, entry: PoolEntry, out: list[Delivery]) -> None:
        """Take the live ``entry`` out of its bucket, kept for an offer."""
        ...

    def release(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        """Put a held ``entry`` back in its place (it may match at once)."""
        ...

    def seated_elsewhere(self, entry: PoolEntry, out: list[Delivery]) -> None:
        """A held ``entry`` was seated by another member: drop it as matched."""
        ...


@dataclass(slots=True, eq=False)
class _Opening:
    session: Session  # a mirror's is a stand-in: the members' ids and attributes
    seats: int
    opened_ms: int  # when requested: the members' windows widen from here
    mirror: bool = False  # of a session hosted by another member


class Backfills:
    """Every open backfill request of one process (and the mirrors of other members')."""

    def __init__(self, host: SeatHost) -> None:
        self._host = host
        self._by_session: dict[str, _Opening] = {}
        # (pool key, bucket) -> the openings waiting there, oldest request first
        self._by_bucket: dict[tuple[PoolKey, Bucket], dict[str, _Opening]] = {}
        self._held: dict[str, tuple[PoolEntry, str]] = {}  # entry id -> (held entry, session id)
        self._notes = False  # a cluster router follows the openings

    def __len__(self) -> int:
        return len(self._by_session)

    def report(self) -> None:
        """Emit :class:`SeatsChanged` notes from now on (a cluster's router asks)."""
        self._notes = True

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
            self._open(_Opening(session, pending, now_ms), now_ms)
        self.changed(session.session_id, out)
        return Backfilled(session.session_id, filled, pending)

    def _open(self, opening: _Opening, now_ms: int) -> None:
        session = opening.session
        origin = session.origin
        assert origin is not None
        self._by_session[session.session_id] = opening
        self._by_bucket.setdefault((origin.key, origin.bucket), {})[session.session_id] = opening
        self._watch(opening, now_ms)

    def retry(self, session_id: str, opened_ms: int, now_ms: int, out: list[Delivery]) -> None:
        """The members' window of an opening widened (its mode's timer): fill what fits now."""
        opening = self._by_session.get(session_id)
        if opening is None or opening.opened_ms != opened_ms:
            return  # filled, cancelled or replaced since
        session = opening.session
        filled = self._fill(session, opening.seats, opened_ms, now_ms, out, mirror=opening.mirror)
        opening.seats -= len(filled)
        if opening.seats:
            self._watch(opening, now_ms)
        else:
            self.cancel(session_id, out)

    def _fill(
        self,
        session: Session,
        seats: int,
        opened_ms: int,
        now_ms: int,
        out: list[Delivery],
        *,
        mirror: bool = False,
    ) -> list[str]:
        """Seat (or, for a mirror, hold) up to ``seats`` waiting entries that fit
        ``session``, oldest first."""
        origin = session.origin
        assert origin is not None
        pool = self._host.pools.get(origin.key)
        if pool is None or pool.spec != origin.spec:
            return []
        chosen: list[PoolEntry] = []
        for entry in pool.mode.seat_candidates(session, origin.bucket, opened_ms, now_ms):
            if len(chosen) == seats:
                break
            if entry.client.client_id not in session.members and pool.mode.fits(
                entry, session, opened_ms, now_ms
            ):
                chosen.append(entry)
        for entry in chosen:  # seated after the look: seating changes the bucket
            self._place(entry, session, out, mirror=mirror)
        return [entry.client.client_id for entry in chosen]

    def _place(
        self, entry: PoolEntry, session: Session, out: list[Delivery], *, mirror: bool
    ) -> None:
        """Seat ``entry`` in a session of this process, or hold it for a mirrored one."""
        if not mirror:
            self._host.seat(entry, session, out)
            return
        client = entry.client
        self._host.hold(entry, out)
        self._held[entry.entry_id] = (entry, session.session_id)
        # The next offers must fit the newcomer too, as a seated member would.
        session.members[client.client_id] = Member(client, entry.public)
        offer = SeatOffered(session.session_id, client.client_id, entry.entry_id, entry.public)
        out.append(((), offer))

    def _watch(self, opening: _Opening, now_ms: int) -> None:
        """Let the pool's mode time the opening's next widening, if its rules widen."""
        origin = opening.session.origin
        assert origin is not None
        pool = self._host.pools.get(origin.key)
        if pool is not None and pool.spec == origin.spec:
            pool.mode.watch_opening(opening.session.session_id, opening.opened_ms, now_ms)

    def take(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> bool:
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
            self._place(entry, session, out, mirror=opening.mirror)
            opening.seats -= 1
            if not opening.seats:
                self.cancel(session.session_id, out)
            else:
                self.changed(session.session_id, out)
            return True
        return False

    def left(self, session_id: str, now_ms: int, out: list[Delivery]) -> None:
        """A member left the session: what fits its opening may have changed (the window
        is the others' now, and the one who left may wait in its pool), so fill what fits
        now, as when the window widens."""
        opening = self._by_session.get(session_id)
        if opening is not None and not opening.mirror:
            self.retry(session_id, opening.opened_ms, now_ms, out)
            if session_id not in self._by_session:
                return  # filled: cancel() told the router
        self.changed(session_id, out)

    def changed(self, session_id: str, out: list[Delivery]) -> None:
        """The session's opening or members changed: tell the router, if one follows."""
        opening = self._by_session.get(session_id)
        if self._notes and (opening is None or not opening.mirror):
            out.append(((), SeatsChanged(session_id)))

    def cancel(self, session_id: str, out: list[Delivery] | None = None) -> None:
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
        if out is not None and self._notes and not opening.mirror:
            out.append(((), SeatsChanged(session_id)))

    # -- the cluster: openings of sessions hosted elsewhere ----------------------------------

    def opening(self, session_id: str) -> tuple[Session, int, int] | None:
        """The open backfill of a session hosted here: the session, the seats, when asked."""
        opening = self._by_session.get(session_id)
        if opening is None or opening.mirror:
            return None
        return opening.session, opening.seats, opening.opened_ms

    def hosted(self) -> list[str]:
        """The sessions hosted here with an open backfill."""
        return [sid for sid, opening in self._by_session.items() if not opening.mirror]

    def unmirror(self, session_id: str) -> None:
        """Forget the mirrored opening of a session hosted elsewhere (its held entries
        wait for their answer)."""
        known = self._by_session.get(session_id)
        if known is not None and known.mirror:
            self.cancel(session_id)

    def mirrors(self) -> list[str]:
        """The sessions (hosted elsewhere) whose openings are mirrored here."""
        return [sid for sid, opening in self._by_session.items() if opening.mirror]

    def mirror(
        self,
        session_id: str,
        origin: Origin,
        members: Iterable[tuple[str, dict[str, FilterValue]]],
        *,
        seats: int,
        opened_ms: int,
        now_ms: int,
        out: list[Delivery],
        region: str | None = None,
    ) -> None:
        """Hold entries of this process's pool for the opening of a session hosted
        elsewhere (``seats: 0`` forgets it): ``members`` are its members' ids and
        attributes, which every newcomer must fit, and ``region`` where it plays."""
        known = self._by_session.get(session_id)
        if known is not None and not known.mirror:
            return  # hosted here: the session's own opening
        self.cancel(session_id)
        if seats <= 0:
            return
        project_id = origin.key[1]
        assert isinstance(project_id, str)
        name = origin.key[2]
        assert isinstance(name, str)
        stand_in = Session(session_id, project_id, pool=name, origin=origin, region=region)
        for client_id, attributes in members:
            client = ClientState(client_id, project_id, None, dict(attributes))
            stand_in.members[client_id] = Member(client, None)
        for entry, held_for in self._held.values():
            if held_for == session_id:  # offered, not answered yet: fitted as a member
                stand_in.members[entry.client.client_id] = Member(entry.client, entry.public)
        seats -= len(self.held(session_id))  # offers on their way count as filled
        filled = (
            self._fill(stand_in, seats, opened_ms, now_ms, out, mirror=True) if seats > 0 else []
        )
        if seats > len(filled):
            self._open(_Opening(stand_in, seats - len(filled), opened_ms, mirror=True), now_ms)

    def offered(
        self,
        session_id: str,
        client: ClientState,
        public: dict[str, Any] | None,
        out: list[Delivery],
    ) -> bool:
        """Another member holds ``client``'s entry for this session's opening: seat it if
        the opening still has a seat for it (``False``: declined)."""
        opening = self._by_session.get(session_id)
        if opening is None or opening.mirror or client.client_id in opening.session.members:
            self.changed(session_id, out)  # the owner's mirror is stale: bring it up to date
            return False
        self._host.admit(client, public, opening.session, out, relayed=True)
        opening.seats -= 1
        if not opening.seats:
            self.cancel(session_id, out)
        else:
            self.changed(session_id, out)
        return True

    def settle(self, entry_id: str, accepted: bool, now_ms: int, out: list[Delivery]) -> bool:
        """The session's member answered the offer of a held entry: drop it as matched
        (``accepted``) or put it back in its place. ``False``: the entry is gone (it left,
        expired, was closed or its client disconnected meanwhile)."""
        held = self._held.pop(entry_id, None)
        if held is None or not held[0].live:
            return False
        entry, session_id = held
        opening = self._by_session.get(session_id)
        if not accepted and opening is not None and opening.mirror:
            opening.session.members.pop(entry.client.client_id, None)
        if accepted:
            self._host.seated_elsewhere(entry, out)
        else:
            self._host.release(entry, now_ms, out)
        return True

    def held(self, session_id: str | None = None) -> list[tuple[str, str]]:
        """The entries held here (for ``session_id``'s opening): their ids and sessions'."""
        return [(e, s) for e, (_, s) in self._held.items() if session_id in {None, s}]


def mirror_origin(
    project_id: str, pool: str, spec: PoolSpec, bucket: Iterable[Iterable[Any]], *, policy: bool
) -> Origin:
    """The origin of a session hosted elsewhere, as this process's pools key it."""
    key: PoolKey = ("policy", project_id, pool, spec) if policy else ("adhoc", project_id, pool)
    return Origin(key, spec, tuple((str(kind), value) for kind, value in bucket))
