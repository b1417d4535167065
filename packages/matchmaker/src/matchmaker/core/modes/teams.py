"""Auto pools with ``teams``, ``balance`` or ``regions``: groups split into teams, balanced,
in a region every member reaches fast enough.

Regions. Each waiting entry is indexed under every region its measured latency
(``pool.enter latencies``) reaches within its current ``maxLatencyMs`` (widening
from its enter, as a range rule's window does); a pool without ``regions`` has
one place, ``None``. A group forms among the entries of one index, so every
member reaches that region; the session plays in the region the members share
whose worst latency is lowest (``session.created region``). An entry's widening
timer adds it to the regions it reaches now, so no operation scans the pool.

Order and groups. Each index is a sorted list by value: the range rule's
attribute, else the balanced attribute, else nothing (arrival order). A group
is a run of consecutive candidates that contains the entry being tried (it
entered, resumed, widened, or its fill timeout passed), as in
:mod:`.skill`; with a range rule the candidates are the entries in the trigger's
window that accept it, and each run must be pairwise acceptable. At most
``groupSize`` runs per region are looked at, so an enter costs O(R log n) for R
regions reached, whatever the pool holds.

Teams and balance. A run is split over the teams (:mod:`.split`): by arrival
without ``balance`` (the first team fills first); with it, the most balanced
split, and the run qualifies only when its teams' means differ by at most the
smallest current ``maxDifference`` of its members. Among the runs that qualify
the most balanced forms, then the tightest, then the one whose oldest member
waited longest.

Parties. A party's entry (:mod:`matchmaker.core.parties`) holds a seat per
member: a run forms when its seats make the group, and its members play on one
team (:func:`.split.seat_parties`; a party larger than the largest team is
refused on entering, ``party.too_large``). It is indexed by its members' mean
value, held to the range rule member by member (as in :mod:`.skill`), balanced
member by member, and placed by its leader's ``latencies``.
Backfill seats solos only.

Backfill. A newcomer must reach the session's region (and pass the range rule,
as in :mod:`.skill`); :func:`matchmaker.core.sessions.seat_team` puts it in the
team that lost a member.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple, cast

from sortedcontainers import SortedList

from matchmaker.core.events import Delivery
from matchmaker.core.modes.skill import (
    Candidate,
    accepting,
    next_step,
    number,
    pairwise,
    players,
    runs,
    span,
)
from matchmaker.core.modes.split import best_split, in_order, seat_parties
from matchmaker.core.modes.strategy import ModeHost, ModeStrategy
from matchmaker.core.pools import Bucket
from matchmaker.core.state import Lineup, Pool, PoolEntry, Session
from matchmaker.model import RangeRule

__all__ = ["TeamMode", "number"]

_Key = tuple[float, int, PoolEntry]  # (value, arrival seq, entry): seq is unique
_Place = tuple[Bucket, str | None]  # (bucket, region): one sorted index each


class _Found(NamedTuple):
    """A group that may form: how good it is (lower is better), its members, their teams."""

    rank: tuple[float, float, int, int]
    group: list[PoolEntry]
    teams: list[int]


class TeamMode(ModeStrategy):
    """The ``auto`` mode of a pool with ``teams``, ``balance`` or ``regions``."""

    name = "auto"

    def __init__(self, pool: Pool, host: ModeHost) -> None:
        super().__init__(pool, host)
        spec = pool.spec
        self.range = spec.range_rule
        self.balance = spec.balance
        self.regions = spec.regions
        self.sizes = [team.size for team in spec.teams]
        balanced = None if self.balance is None else self.balance.attribute
        self.order = self.range[0] if self.range is not None else balanced
        rules = [
            None if self.range is None else self.range[1],
            None
            if self.balance is None
            else RangeRule(self.balance.max_difference, self.balance.widen),
            None
            if self.regions is None
            else RangeRule(self.regions.max_latency_ms, self.regions.widen),
        ]
        self.widening = [rule for rule in rules if rule is not None and rule.widen is not None]
        self.index: dict[_Place, SortedList[_Key]] = {}
        self.places: dict[str, set[str | None]] = {}  # entry id -> regions it is indexed in
        self.waiting: dict[str, PoolEntry] = {}  # by entry id: the timers' way back
        self.next_widen: dict[str, int] = {}  # entry id -> due of its one live widen timer

    def _value(self, entry: PoolEntry) -> float:
        if self.order is None:
            return 0.0
        if entry.party is None:
            return number(entry.client, self.order)
        return math.fsum(number(c, self.order) for c in players(entry)) / entry.seats

    def _window(self, entry: PoolEntry, now_ms: int) -> float:
        return math.inf if self.range is None else self.range[1].window(now_ms - entry.entered_at)

    def _reached(self, entry: PoolEntry, now_ms: int) -> Sequence[str | None]:
        """The regions ``entry`` reaches within its current ``maxLatencyMs``, by name."""
        if self.regions is None:
            return [None]
        limit = self.regions.allowed(now_ms - entry.entered_at)
        return sorted(r for r, ms in (entry.latencies or {}).items() if ms <= limit)

    def _index(self, entry: PoolEntry, now_ms: int) -> None:
        """Index ``entry`` under the regions it reaches now and was not indexed under."""
        had = self.places.setdefault(entry.entry_id, set())
        key = (self._value(entry), entry.seq, entry)
        for region in self._reached(entry, now_ms):
            if region not in had:
                self.index.setdefault((entry.bucket, region), SortedList()).add(key)
                had.add(region)

    # -- the engine's calls ---------------------------------------------------------------

    def entered(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        self.waiting[entry.entry_id] = entry
        self._index(entry, now_ms)
        if self.host.take_seat(entry, now_ms, out) or self._match(entry, now_ms, out):
            return
        self._schedule_widen(entry, now_ms)
        fill = self.pool.spec.fill_timeout_ms
        if fill is not None and entry.entered_at + fill > now_ms:
            self.host.schedule(entry.entered_at + fill, self.pool, f"f:{entry.entry_id}")

    def leaving(self, entry: PoolEntry, reason: str, out: list[Delivery]) -> None:
        del self.waiting[entry.entry_id]
        self.next_widen.pop(entry.entry_id, None)
        key = (self._value(entry), entry.seq, entry)
        for region in self.places.pop(entry.entry_id):
            place = (entry.bucket, region)
            index = self.index[place]
            index.remove(key)
            if not index:
                del self.index[place]

    def timer(self, key: str, now_ms: int, out: list[Delivery]) -> None:
        """``w:<entry>:<due>``: a rule of the entry widened (it may reach more regions);
        ``f:<entry>``: its fill timeout passed; ``o:<session>:<opened>``: the members'
        window of a backfill widened."""
        kind, _, rest = key.partition(":")
        entry_id, _, due = rest.partition(":")
        if kind == "o":
            self.host.refill(entry_id, int(due), now_ms, out)
            return
        entry = self.waiting.get(entry_id)
        if entry is None:
            return  # matched, gone or paused since (a resume schedules afresh)
        if kind == "w":
            if self.next_widen.get(entry_id) != int(due):
                return  # a timer of the entry's schedule before a pause
            del self.next_widen[entry_id]
            self._index(entry, now_ms)
            if self.host.take_seat(entry, now_ms, out):
                return
            if not self._match(entry, now_ms, out):
                self._schedule_widen(entry, now_ms)
        else:
            self._match(entry, now_ms, out)

    def fits(self, entry: PoolEntry, session: Session, opened_ms: int, now_ms: int) -> bool:
        """The newcomer reaches the session's region, and the range rule holds against
        every member (the newcomer's window from its enter, the members' from the request).
        A party waits for a group: a backfill seats one client per entry."""
        if entry.seats != 1:
            return False
        if session.region is not None and session.region not in self.places.get(entry.entry_id, ()):
            return False
        if self.range is None:
            return True
        attribute, rule = self.range
        value = number(entry.client, attribute)
        reach = min(self._window(entry, now_ms), rule.window(now_ms - opened_ms))
        members = session.members.values()
        return all(abs(number(m.client, attribute) - value) <= reach for m in members)

    def seat_candidates(
        self, session: Session, bucket: Bucket, opened_ms: int, now_ms: int
    ) -> Iterable[PoolEntry]:
        """The entries indexed under the session's region (within the members' window of
        every member, with a range rule), oldest first."""
        if self.regions is not None and session.region is None:
            return super().seat_candidates(session, bucket, opened_ms, now_ms)  # none known
        index = self.index.get((bucket, session.region))
        if index is None:
            return []
        keys: Iterable[_Key] = index
        if self.range is not None and session.members:
            attribute, rule = self.range
            values = [number(m.client, attribute) for m in session.members.values()]
            theirs = rule.window(now_ms - opened_ms)
            lo = index.bisect_left(cast(_Key, (max(values) - theirs, -1)))
            hi = index.bisect_left(cast(_Key, (min(values) + theirs, math.inf)))
            keys = index.islice(lo, hi)
        return sorted((key[2] for key in keys), key=lambda e: e.seq)

    def watch_opening(self, session_id: str, opened_ms: int, now_ms: int) -> None:
        """One timer at the members' next widening of the range rule, if it widens."""
        due = None if self.range is None else next_step(self.range[1], opened_ms, now_ms)
        if due is not None:
            self.host.schedule(due, self.pool, f"o:{session_id}:{opened_ms}")

    # -- matching -------------------------------------------------------------------------

    def _schedule_widen(self, entry: PoolEntry, now_ms: int) -> None:
        """One timer at the entry's next step of any of its widening rules."""
        steps = [next_step(rule, entry.entered_at, now_ms) for rule in self.widening]
        due = min((step for step in steps if step is not None), default=None)
        if due is None:
            return
        self.next_widen[entry.entry_id] = due
        self.host.schedule(due, self.pool, f"w:{entry.entry_id}:{due}")

    def _match(self, trigger: PoolEntry, now_ms: int, out: list[Delivery]) -> bool:
        """Form the best group around ``trigger`` in any region it reaches; whether one did."""
        best: _Found | None = None
        for region in sorted(self.places[trigger.entry_id], key=str):
            found = self._best_in(trigger, self.index[(trigger.bucket, region)], now_ms)
            if found is not None and (best is None or found.rank < best.rank):
                best = found
        if best is None:
            return False
        self.host.form(best.group, out, self._lineup(best))
        return True

    def _lineup(self, found: _Found) -> Lineup:
        """The teams by name and the region whose worst latency is lowest among those
        every member reaches."""
        teams: dict[str, list[str]] | None = None
        if self.sizes:
            names = [team.name for team in self.pool.spec.teams]
            teams = {name: [] for name in names}
            placed = sorted(zip(found.group, found.teams, strict=True), key=lambda p: p[0].seq)
            for entry, team in placed:  # each team's members in arrival order
                teams[names[team]].extend(client.client_id for client in players(entry))
        region = None
        if self.regions is not None:
            common = set.intersection(*(self.places[e.entry_id] for e in found.group))
            region = min(
                (r for r in common if r is not None),
                key=lambda r: (max((e.latencies or {})[r] for e in found.group), r),
            )
        return Lineup(teams, region)

    def _best_in(self, trigger: PoolEntry, index: SortedList[_Key], now_ms: int) -> _Found | None:
        """The best run around ``trigger`` among the entries of one index."""
        candidates = self._candidates(trigger, index, now_ms)
        at = next(i for i, c in enumerate(candidates) if c.entry is trigger)
        spec = self.pool.spec
        fill = spec.fill_timeout_ms
        seats = [c.entry.seats for c in candidates]
        for size in range(min(spec.group_size, sum(seats)), spec.smallest - 1, -1):
            full = size == spec.group_size
            best: _Found | None = None
            for start, end in runs(seats, at, size):
                run = candidates[start:end]
                oldest = min(c.entry.entered_at for c in run)
                if not full and (fill is None or oldest + fill > now_ms):
                    continue
                if self.range is not None and not pairwise(run):
                    continue
                split = self._split(run, now_ms)
                if split is None:
                    continue
                teams, difference = split
                spread = max(c.high for c in run) - min(c.low for c in run)
                rank = (difference, spread, oldest, start)
                if best is None or rank < best.rank:
                    best = _Found(rank, [c.entry for c in run], teams)
            if best is not None:
                return best
        return None

    def _split(self, run: list[Candidate], now_ms: int) -> tuple[list[int], float] | None:
        """The run's teams and imbalance (``None``: too far apart for its members, or
        its parties cannot all be seated whole)."""
        if not self.sizes:
            return [], 0.0
        if any(c.entry.seats > 1 for c in run):
            return self._split_parties(run, now_ms)
        if self.balance is None:  # the first team fills first, by arrival
            arrival = sorted(range(len(run)), key=lambda i: run[i].entry.seq)
            teams = [0] * len(run)
            for i, team in zip(arrival, in_order(self.sizes), strict=True):
                teams[i] = team
            return teams, 0.0
        balance = self.balance
        values = [number(c.entry.client, balance.attribute) for c in run]
        teams, difference = best_split(values, self.sizes)
        allowed = min(balance.allowed(now_ms - c.entry.entered_at) for c in run)
        return None if difference > allowed else (teams, difference)

    def _split_parties(self, run: list[Candidate], now_ms: int) -> tuple[list[int], float] | None:
        """:meth:`_split` of a run holding a party: each entry's team, a party's members
        on one (by arrival without balance; else balanced member by member)."""
        entries = sorted((c.entry for c in run), key=lambda e: e.seq)
        balance = self.balance
        values = None
        if balance is not None:
            values = [number(c, balance.attribute) for e in entries for c in players(e)]
        split = seat_parties([e.seats for e in entries], values, self.sizes)
        if split is None:
            return None
        by_entry, difference = split
        if balance is not None:
            allowed = min(balance.allowed(now_ms - e.entered_at) for e in entries)
            if difference > allowed:
                return None
        team_of = {e.entry_id: team for e, team in zip(entries, by_entry, strict=True)}
        return [team_of[c.entry.entry_id] for c in run], difference

    def _candidates(
        self, trigger: PoolEntry, index: SortedList[_Key], now_ms: int
    ) -> list[Candidate]:
        """The entries of the index a run around ``trigger`` may hold, in index order: at
        most ``groupSize - 1`` either side of it (with a range rule, of those inside its
        window that accept it)."""
        value = self._value(trigger)
        width = self.pool.spec.group_size - 1
        if self.range is None:
            at = index.index((value, trigger.seq, trigger))
            keys = index.islice(max(0, at - width), at + width + 1)
            return [Candidate(v, math.inf, e, v, v) for v, _, e in keys]
        attribute = self.range[0]
        out = accepting(
            trigger,
            self._window(trigger, now_ms),
            index,
            lambda e: span(e, attribute),
            lambda e: self._window(e, now_ms),
        )
        at = next(i for i, c in enumerate(out) if c.entry is trigger)
        return out[max(0, at - width) : at + width + 1]
