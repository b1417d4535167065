"""Sessions of the matching core: forming, seating, rooms, relay, leaving. Synchronous, no I/O.

:class:`Sessions` adds to the process's :class:`~matchmaker.core.tables.Tables`
what happens to sessions: a group a mode completed moves into a new session
whole, a backfilled entry takes an open seat, a client joins an ad-hoc room,
relays a message or a signal to the other members, leaves.
:class:`~matchmaker.core.engine.Matchmaker` builds on it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from matchmaker.config import Limits
from matchmaker.core.backfill import Backfills
from matchmaker.core.commands import Backfill
from matchmaker.core.events import (
    Backfilled,
    Delivery,
    Event,
    JoinedSession,
    MemberJoined,
    MemberLeft,
    MemberStatus,
    MessageRelayed,
    PublicMember,
    SessionFormed,
    SignalRelayed,
)
from matchmaker.core.state import ClientState, Lineup, Member, Origin, PoolEntry, Session
from matchmaker.core.tables import Tables
from matchmaker.errors import MatchmakerError
from matchmaker.model import Project

__all__ = ["UNTOLD_CAP", "Sessions", "member_infos", "seat_team", "session_limit"]


class Sessions:
    """The sessions of one process: how members come into them, talk and leave."""

    backfills: Backfills  # made by Matchmaker on this object, which seats what backfill picks

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        # The tables' own dicts, bound once: plain attributes, no lookup more per message.
        self.limits = tables.limits
        self.clients = tables.clients
        self.pools = tables.pools
        self.sessions = tables.sessions
        self.rooms = tables.rooms

    def status(
        self, client: ClientState, status: Literal["away", "back"], out: list[Delivery]
    ) -> None:
        """Tell ``client``'s session peers it is ``away`` or ``back``."""
        for session in client.sessions.values():
            event = MemberStatus(session.session_id, client.client_id, status)
            others = _tell(session, (c for c in session.members if c != client.client_id), event)
            if others:
                out.append((others, event))

    def form(
        self, group: list[PoolEntry], out: list[Delivery], lineup: Lineup | None = None
    ) -> str:
        """Move ``group`` (live entries of one pool, validated by its mode) into a new
        session, with the teams and region of ``lineup``; returns its id. Nothing here can
        fail, so the group forms whole."""
        pool = group[0].pool
        assert all(e.live and e.pool is pool for e in group), "a mode formed a stale group"
        origin = Origin(pool.key, pool.spec, group[0].bucket)
        session = Session(self.tables.new_id("s"), pool.project_id, pool=pool.name, origin=origin)
        if lineup is not None:
            session.teams, session.region = lineup.teams, lineup.region
        for entry in group:
            self._matched(entry, session, out)
        self.sessions[session.session_id] = session
        self._announce(session, out)
        return session.session_id

    def _matched(self, entry: PoolEntry, session: Session, out: list[Delivery]) -> None:
        """``entry`` leaves its pool for ``session`` (with every member of its party)."""
        party = entry.party
        self.tables.drop_entry(entry, "matched", out)
        self._joined(entry.client, entry.public, session, out)
        if party is not None:
            for member in list(party.members.values()):
                if member is not entry.client:
                    self._joined(member, None, session, out)

    def _joined(
        self, client: ClientState, public: Any, session: Session, out: list[Delivery]
    ) -> None:
        """``client`` is a member of ``session`` now: its other entries are withdrawn
        (matched in one pool, it waits in none)."""
        self._withdraw_entries(client, out)
        session.members[client.client_id] = Member(client, public)
        client.sessions[session.session_id] = session

    def _withdraw_entries(self, client: ClientState, out: list[Delivery]) -> None:
        for other in list(client.entries.values()):
            self.tables.withdraw(other, "matched", out)

    def seat(self, entry: PoolEntry, session: Session, out: list[Delivery]) -> None:
        """Backfill: ``entry`` joins a formed session. The members get
        ``session.member_joined``, the newcomer ``session.created`` with every member."""
        self.tables.drop_entry(entry, "matched", out)
        self.admit(entry.client, entry.public, session, out)

    def admit(
        self,
        client: ClientState,
        public: Any,
        session: Session,
        out: list[Delivery],
        *,
        relayed: bool = False,
    ) -> None:
        """Backfill: ``client`` joins a formed session (its entry already left its pool,
        here or at another cluster member). ``relayed``: its ``session.created`` goes
        through another member, so the session's next events wait for :meth:`told`."""
        team = seat_team(session, client.client_id)
        joined = MemberJoined(session.session_id, client.client_id, public, client.player_id, team)
        out.append((_tell(session, session.members, joined), joined))
        self._joined(client, public, session, out)
        if relayed:
            session.members[client.client_id].untold = []
        out.append(((client.client_id,), _created(session, client.client_id)))

    def hold(self, entry: PoolEntry, out: list[Delivery]) -> None:
        """Backfill across members: ``entry`` leaves its bucket (and its mode's view), kept
        for a session elsewhere until that member answers."""
        self.tables.pause(entry, out, "held")
        entry.held = True

    def release(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        """A held ``entry`` was not seated: back to its place (if its client is not away)."""
        entry.held = False
        if entry.client.away:
            return  # it returns with its client (resume)
        self.tables.unpause(entry, now_ms, out)

    def seated_elsewhere(self, entry: PoolEntry, out: list[Delivery]) -> None:
        """A held ``entry`` was seated by the session's member: it leaves as matched, and
        its client's other entries here are withdrawn."""
        entry.held = False
        self.tables.drop_entry(entry, "matched", out)
        self._withdraw_entries(entry.client, out)

    def told(self, client_id: str, session_id: str) -> list[Delivery]:
        """The home of a member seated by another member's offer told it of its session:
        the session's events kept for it meanwhile, in order; it hears them at once from
        now on."""
        member = self._untold(client_id, session_id)
        if member is None:
            return []
        events, member.untold = member.untold, None
        assert events is not None  # (what _untold found)
        return [((client_id,), event) for event in events]

    def awaits_told(self, client_id: str, session_id: str) -> bool:
        """Whether ``client_id`` is still a member of ``session_id`` not yet told of it
        (the cluster forgets which owner relays its ``session.created`` once it is not)."""
        return self._untold(client_id, session_id) is not None

    def _untold(self, client_id: str, session_id: str) -> Member | None:
        session = self.sessions.get(session_id)
        member = None if session is None else session.members.get(client_id)
        return None if member is None or member.untold is None else member

    def take_seat(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> bool:
        return self.backfills.take(entry, now_ms, out)

    def refill(self, session_id: str, opened_ms: int, now_ms: int, out: list[Delivery]) -> None:
        self.backfills.retry(session_id, opened_ms, now_ms, out)

    def backfill(
        self, client_id: str, command: Backfill, now_ms: int
    ) -> tuple[Backfilled, list[Delivery]]:
        """``session.backfill``: a member asks the session's pool to fill open seats."""
        session = self._membership(self.clients[client_id], command.session_id)
        out: list[Delivery] = []
        return self.backfills.request(session, command.seats, now_ms, out), out

    def _announce(self, session: Session, out: list[Delivery]) -> None:
        members = member_infos(session)
        for cid in session.members:
            created = SessionFormed(
                session.session_id, members, cid, session.pool, session.teams, session.region
            )
            out.append(((cid,), created))

    def join_session(
        self, client_id: str, project: Project, room: str, create: bool, public: Any
    ) -> tuple[JoinedSession, list[Delivery]]:
        """``session.join``: enter an ad-hoc room, creating it with ``create: true``."""
        client = self.clients[client_id]
        if create and project.lockdown:
            raise MatchmakerError(
                "this Project is locked down: ad-hoc sessions cannot be created",
                code="project.lockdown",
            )
        session = self.rooms.get((project.id, room))
        if session is not None and client_id in session.members:
            return JoinedSession(session.session_id, created=False), []
        if self.tables.session_count(client) >= self.limits.max_sessions_per_client:
            raise session_limit(self.limits)
        out: list[Delivery] = []
        if session is None:
            if not create:
                raise MatchmakerError(
                    f"no session named {room!r}; send create: true to open it",
                    code="session.not_found",
                    details={"session": room},
                )
            session = Session(self.tables.new_id("s"), project.id, room=room)
            self.rooms[(project.id, room)] = session
            self.sessions[session.session_id] = session
        elif len(session.members) >= self.limits.max_session_members:
            raise MatchmakerError(
                f"session {room!r} is full",
                code="session.full",
                details={"limit": self.limits.max_session_members},
            )
        else:
            joined = MemberJoined(session.session_id, client_id, public, client.player_id)
            out.append((list(session.members), joined))
        created = not session.members
        session.members[client_id] = Member(client, public)
        client.sessions[session.session_id] = session
        members = member_infos(session)
        out.append(
            (
                (client_id,),
                SessionFormed(session.session_id, members, client_id),
            )
        )
        return JoinedSession(session.session_id, created), out

    def reopen(
        self,
        session_id: str,
        project_id: str,
        place: tuple[str | None, str | None],
        members: list[tuple[ClientState, Any]],
    ) -> None:
        """A session another process handed over as it stopped for a restart, with its
        ``members`` (clients :meth:`readmit` took back, and the public data each showed)
        and its ``place``: the pool that formed it or the room it is. Its origin is not
        handed over, so it takes no backfill."""
        pool, room = place
        session = Session(session_id, project_id, pool=pool, room=room)
        for client, public in members:
            session.members[client.client_id] = Member(client, public)
            client.sessions[session_id] = session
        self.sessions[session_id] = session
        if room is not None:
            self.rooms[(project_id, room)] = session

    def leave_session(self, client_id: str, session_id: str, now_ms: int) -> list[Delivery]:
        """``session.leave``: the others get ``session.member_left {reason: left}`` (and
        the seat it frees is offered at ``now_ms``, when the session was backfilling)."""
        client = self.clients[client_id]
        session = self._membership(client, session_id)
        out: list[Delivery] = []
        self.leave(client, session, "left", now_ms, out)
        return out

    def relay(
        self, client_id: str, session_id: str, to: list[str] | None, data: object
    ) -> Delivery:
        """``session.send``: the ``session.message`` and who gets it."""
        client = self.clients[client_id]
        session = client.sessions.get(session_id) or self._membership(client, session_id)
        members = session.members
        relayed = MessageRelayed(session_id, client_id, data)
        if to is None:
            # A loop, not a comprehension: on every relayed message, and a comprehension
            # is a call of its own before Python 3.12.
            recipients: list[str] = []
            for cid, member in members.items():
                if cid == client_id:
                    continue
                if member.untold is None or not _held(member, relayed):
                    recipients.append(cid)
        else:
            missing = [cid for cid in to if cid not in members]
            if missing:
                raise MatchmakerError(
                    "some recipients are not members of the session",
                    code="session.not_member",
                    details={"session_id": session_id, "to": missing},
                )
            # Each member once: repeating an id must not multiply one frame into a flood
            # that overflows that member's outbound queue (3008).
            recipients = _tell(session, dict.fromkeys(to), relayed)
        return recipients, relayed

    def signal(self, client_id: str, session_id: str, to: str, signal: object) -> Delivery:
        """``rtc.signal``: relay to ``to``, who must be another member of the session; a
        signal never reaches anyone outside it."""
        client = self.clients[client_id]
        session = self._membership(client, session_id)
        if to == client_id or to not in session.members:
            raise MatchmakerError(
                "signals go to another member of the same session",
                code="session.not_member",
                details={"session_id": session_id, "to": [to]},
            )
        relayed = SignalRelayed(session_id, client_id, signal)
        return _tell(session, (to,), relayed), relayed

    def _membership(self, client: ClientState, session_id: str) -> Session:
        session = client.sessions.get(session_id)
        if session is not None:
            return session
        if session_id in self.sessions:
            raise MatchmakerError(
                "you are not a member of this session",
                code="session.not_member",
                details={"session_id": session_id},
            )
        raise MatchmakerError(
            f"no session {session_id!r}",
            code="session.not_found",
            details={"session_id": session_id},
        )

    def leave(
        self, client: ClientState, session: Session, reason: str, now_ms: int, out: list[Delivery]
    ) -> None:
        """``client`` leaves ``session`` for ``reason``: its peers are told and its seat
        reopens; the last one out ends the session (and its room, its backfill)."""
        del session.members[client.client_id]
        del client.sessions[session.session_id]
        for members in (session.teams or {}).values():
            if client.client_id in members:
                members.remove(client.client_id)  # its seat opens in its team
        if session.members:
            left = MemberLeft(session.session_id, client.client_id, reason)
            out.append((_tell(session, session.members, left), left))
            self.backfills.left(session.session_id, now_ms, out)
            return
        del self.sessions[session.session_id]
        self.backfills.cancel(session.session_id, out)
        if session.room is not None:
            del self.rooms[(session.project_id, session.room)]


#: Events kept at most for one member seated by another cluster member's offer until its
#: home says it was told (a lost ``Told`` must not keep them growing).
UNTOLD_CAP = 256


def _tell(session: Session, recipients: Iterable[str], event: Event) -> list[str]:
    """Those of ``recipients`` (members of ``session``) to tell ``event`` now: a member
    not yet told of the session keeps it for later (:meth:`Sessions.told`), so it never
    hears of the session's changes before the session itself."""
    now: list[str] = []
    for client_id in recipients:
        member = session.members.get(client_id)
        if member is None or member.untold is None or not _held(member, event):
            now.append(client_id)
    return now


def _held(member: Member, event: Event) -> bool:
    """Keep ``event`` for ``member``, not yet told of its session; at :data:`UNTOLD_CAP`
    (its home's word was lost, as an outage loses events) what was kept is dropped and the
    member hears the session's events at once from then on: False, tell it now."""
    untold = member.untold
    assert untold is not None
    if len(untold) >= UNTOLD_CAP:
        member.untold = None
        return False
    untold.append(event)
    return True


def _created(session: Session, you: str) -> SessionFormed:
    """The ``session.created`` a member joining a formed session gets."""
    return SessionFormed(
        session.session_id, member_infos(session), you, session.pool, session.teams, session.region
    )


def seat_team(session: Session, client_id: str) -> str | None:
    """Put a backfilled member in the team with the most open seats (the one that lost a
    member; the first declared on a tie) and name it (``None``: the session has no teams)."""
    teams = session.teams
    origin = session.origin
    if teams is None or origin is None:
        return None
    sizes = {team.name: team.size for team in origin.spec.teams}
    name = max(teams, key=lambda t: sizes.get(t, 0) - len(teams[t]))
    teams[name].append(client_id)
    return name


def member_infos(session: Session) -> list[PublicMember]:
    """The members of ``session`` as ``session.created`` shows them."""
    return [PublicMember(cid, m.public, m.client.player_id) for cid, m in session.members.items()]


def session_limit(limits: Limits) -> MatchmakerError:
    return MatchmakerError(
        f"at most {limits.max_sessions_per_client} sessions per client",
        code="session.limit",
        details={"limit": limits.max_sessions_per_client},
    )
