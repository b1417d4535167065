"""Auto pools with a range rule: skill windows that widen while an entry waits.

Two entries accept each other when their values of the rule's attribute differ
by at most the smaller of their current windows (``within``, plus ``by`` for
every whole ``everyMs`` waited, up to ``max``). Matching stays event-driven:
an entry is tried when it enters (or resumes), when its own window widens
(one timer per entry, at its next step, on the engine's timer heap), and when
its fill timeout passes; no operation scans the pool.

Each ``@self`` bucket keeps its entries in a sorted list by value, so an enter
costs O(log n) to index plus a look at the entries inside the newcomer's
window. That look stays short: entries closer than ``within`` accept each
other at once, so between operations a window holds fewer than ``groupSize``
entries per ``within`` of its width.

How a group is chosen around the entry that triggered the try: the candidates
are the entries inside its window that accept it, in value order; every run
of consecutive candidates of the wanted size that contains the trigger and is
pairwise acceptable is a possible group, and the tightest (smallest spread of
values; then the one whose oldest member waited longest) forms. The full size
is tried first; once a run's oldest member waited ``fillTimeoutMs``, runs down
to ``minGroupSize`` qualify, largest first.

Parties. A party's entry (:mod:`matchmaker.core.parties`) holds a seat per
member, and the rule holds member by member: it is indexed by its members' mean
value and carries their span (lowest..highest), so two entries accept each other
when the farthest pair of their members is within both windows, and a run is
pairwise acceptable when each entry's window covers the run's span from its own
members' ends (a party's own spread included). A run forms when its seats make
the group; the mean index holds every acceptable partner inside the trigger's
window, so an enter still looks at one slice.

Backfill (:mod:`.backfill`) runs under the same rule: an entry is offered to
an open seat of its bucket before it is tried for a new group, and takes it
only when it and every member accept each other (see :meth:`SkillMode.fits`);
it seats one client per entry, so a party waits for a group.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate
from typing import NamedTuple, cast

from sortedcontainers import SortedList

from matchmaker.core.events import Delivery
from matchmaker.core.modes.strategy import ModeHost, ModeStrategy
from matchmaker.core.pools import Bucket
from matchmaker.core.state import ClientState, Pool, PoolEntry, Session
from matchmaker.model import RangeRule

__all__ = [
    "Candidate",
    "SkillMode",
    "accepting",
    "next_step",
    "number",
    "pairwise",
    "players",
    "runs",
    "span",
]

# One index key per waiting entry: (value, arrival seq, entry); seq is unique, so
# entries are never compared.
_Key = tuple[float, int, PoolEntry]


class Candidate(NamedTuple):
    """A waiting entry that accepts the trigger: its value (its members' mean), its
    current window, and its members' lowest and highest values."""

    value: float
    window: float
    entry: PoolEntry
    low: float
    high: float


def number(client: ClientState, attribute: str) -> float:
    """A numeric attribute the pool admitted the client with (``bucket_for`` checked it)."""
    value = client.attributes[attribute]
    assert isinstance(value, int | float)
    return value


def players(entry: PoolEntry) -> Sequence[ClientState]:
    """Who plays for ``entry``: its client, or every member of its party (one a seat)."""
    party = entry.party
    return (entry.client,) if party is None else tuple(party.members.values())


def span(entry: PoolEntry, attribute: str) -> tuple[float, float, float]:
    """The lowest, mean and highest value of ``attribute`` among who plays for ``entry``
    (one value thrice for a solo)."""
    if entry.party is None:
        value = number(entry.client, attribute)
        return value, value, value
    values = [number(client, attribute) for client in players(entry)]
    return min(values), math.fsum(values) / len(values), max(values)


def runs(seats: Sequence[int], at: int, size: int) -> Iterator[tuple[int, int]]:
    """The runs ``[start, end)`` of consecutive candidates (of ``seats`` each) that hold
    candidate ``at`` and make exactly ``size`` seats, by start."""
    prefix = list(accumulate(seats, initial=0))
    for start in range(at + 1):
        end = bisect.bisect_left(prefix, prefix[start] + size)
        if at < end < len(prefix) and prefix[end] == prefix[start] + size:
            yield start, end


class SkillMode(ModeStrategy):
    """The ``auto`` mode of a pool whose filter has a range rule."""

    name = "auto"

    def __init__(self, pool: Pool, host: ModeHost) -> None:
        super().__init__(pool, host)
        rule = pool.spec.range_rule
        assert rule is not None, "SkillMode serves pools with a range rule"
        self.attribute, self.rule = rule
        self.index: dict[Bucket, SortedList[_Key]] = {}
        self.spans: dict[str, tuple[float, float, float]] = {}  # entry id -> its span
        self.waiting: dict[str, PoolEntry] = {}  # by entry id: the timers' way back
        self.next_widen: dict[str, int] = {}  # entry id -> due of its one live widen timer

    def value(self, entry: PoolEntry) -> float:
        """Where ``entry`` waits in the index: its members' mean (kept while it waits)."""
        return self.spans[entry.entry_id][1]

    def _rated(self, client: ClientState) -> float:
        return number(client, self.attribute)

    def window(self, entry: PoolEntry, now_ms: int) -> float:
        return self.rule.window(now_ms - entry.entered_at)

    # -- the engine's calls ---------------------------------------------------------------

    def entered(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        bucket = self.index.get(entry.bucket)
        if bucket is None:
            bucket = self.index[entry.bucket] = SortedList()
        self.spans[entry.entry_id] = span(entry, self.attribute)
        bucket.add((self.value(entry), entry.seq, entry))
        self.waiting[entry.entry_id] = entry
        if self.host.take_seat(entry, now_ms, out) or self._match(entry, now_ms, out):
            return
        self._schedule_widen(entry, now_ms)
        fill = self.pool.spec.fill_timeout_ms
        if fill is not None and entry.entered_at + fill > now_ms:
            self.host.schedule(entry.entered_at + fill, self.pool, f"f:{entry.entry_id}")

    def leaving(self, entry: PoolEntry, reason: str, out: list[Delivery]) -> None:
        del self.waiting[entry.entry_id]
        self.next_widen.pop(entry.entry_id, None)
        bucket = self.index[entry.bucket]
        bucket.remove((self.value(entry), entry.seq, entry))
        del self.spans[entry.entry_id]
        if not bucket:
            del self.index[entry.bucket]

    def timer(self, key: str, now_ms: int, out: list[Delivery]) -> None:
        """``w:<entry>:<due>``: the entry's window widened; ``f:<entry>``: its fill
        timeout passed. Either way only that entry is tried. ``o:<session>:<opened>``:
        the members' window of a backfill widened."""
        kind, _, rest = key.partition(":")
        entry_id, _, due = rest.partition(":")
        if kind == "o":  # o:<session>:<opened>: an open backfill's members' window widened
            self.host.refill(entry_id, int(due), now_ms, out)
            return
        entry = self.waiting.get(entry_id)
        if entry is None:
            return  # matched, gone or paused since (a resume schedules afresh)
        if kind == "w":
            if self.next_widen.get(entry_id) != int(due):
                return  # a timer of the entry's schedule before a pause
            del self.next_widen[entry_id]
            if self.host.take_seat(entry, now_ms, out):
                return  # its wider window reaches an open backfill seat
            if not self._match(entry, now_ms, out):
                self._schedule_widen(entry, now_ms)
        else:
            self._match(entry, now_ms, out)

    def fits(self, entry: PoolEntry, session: Session, opened_ms: int, now_ms: int) -> bool:
        """The range rule against every member: the newcomer's window (from its enter)
        and the members' (from the backfill request) must both cover each distance."""
        value = self.value(entry)
        mine = self.window(entry, now_ms)
        theirs = self.rule.window(now_ms - opened_ms)
        reach = min(mine, theirs)
        return all(abs(self._rated(m.client) - value) <= reach for m in session.members.values())

    def seat_candidates(
        self, session: Session, bucket: Bucket, opened_ms: int, now_ms: int
    ) -> Iterable[PoolEntry]:
        """The entries whose value lies within the members' current window of every
        member, oldest first: one slice of the index."""
        values = [self._rated(m.client) for m in session.members.values()]
        theirs = self.rule.window(now_ms - opened_ms)
        index = self.index.get(bucket)
        if index is None or not values:
            return []
        lo = index.bisect_left(cast(_Key, (max(values) - theirs, -1)))
        hi = index.bisect_left(cast(_Key, (min(values) + theirs, math.inf)))
        return sorted((key[2] for key in index.islice(lo, hi)), key=lambda e: e.seq)

    # -- matching -------------------------------------------------------------------------

    def watch_opening(self, session_id: str, opened_ms: int, now_ms: int) -> None:
        """One timer at the members' next widening, none once their window is at ``max``."""
        due = self._next_step(opened_ms, now_ms)
        if due is not None:
            self.host.schedule(due, self.pool, f"o:{session_id}:{opened_ms}")

    def _next_step(self, since_ms: int, now_ms: int) -> int | None:
        return next_step(self.rule, since_ms, now_ms)

    def _schedule_widen(self, entry: PoolEntry, now_ms: int) -> None:
        """One timer at the entry's next step, none once its window is at ``max``."""
        due = self._next_step(entry.entered_at, now_ms)
        if due is None:
            return
        self.next_widen[entry.entry_id] = due
        self.host.schedule(due, self.pool, f"w:{entry.entry_id}:{due}")

    def _match(self, trigger: PoolEntry, now_ms: int, out: list[Delivery]) -> bool:
        """Form the best group around ``trigger``, if any; whether one formed."""
        group = self._best_group(trigger, now_ms)
        if group is None:
            return False
        self.host.form(group, out)
        return True

    def _best_group(self, trigger: PoolEntry, now_ms: int) -> list[PoolEntry] | None:
        candidates = self._candidates(trigger, now_ms)
        at = next(i for i, c in enumerate(candidates) if c.entry is trigger)
        spec = self.pool.spec
        fill = spec.fill_timeout_ms
        seats = [c.entry.seats for c in candidates]
        for size in range(min(spec.group_size, sum(seats)), spec.smallest - 1, -1):
            full = size == spec.group_size
            best: tuple[float, int, int, int] | None = None
            for start, end in runs(seats, at, size):
                run = candidates[start:end]
                oldest = min(c.entry.entered_at for c in run)
                if not full and (fill is None or oldest + fill > now_ms):
                    continue
                if pairwise(run):
                    spread = max(c.high for c in run) - min(c.low for c in run)
                    rank = (spread, oldest, start, end)
                    best = rank if best is None or rank < best else best
            if best is not None:
                return [c.entry for c in candidates[best[2] : best[3]]]
        return None

    def _candidates(self, trigger: PoolEntry, now_ms: int) -> list[Candidate]:
        """The entries of the trigger's bucket inside its window that accept it (and the
        trigger), in value order."""
        window = self.window(trigger, now_ms)
        index = self.index[trigger.bucket]
        return accepting(trigger, window, index, self._span, lambda e: self.window(e, now_ms))

    def _span(self, entry: PoolEntry) -> tuple[float, float, float]:
        return self.spans[entry.entry_id]


def next_step(rule: RangeRule, since_ms: int, now_ms: int) -> int | None:
    """When a window of ``rule`` that started at ``since_ms`` next widens (``None``: it
    does not)."""
    widen = rule.widen
    if widen is None or rule.window(now_ms - since_ms) >= widen.max:
        return None
    return since_ms + ((now_ms - since_ms) // widen.every_ms + 1) * widen.every_ms


def accepting(
    trigger: PoolEntry,
    window: float,
    index: SortedList[_Key],
    span_of: Callable[[PoolEntry], tuple[float, float, float]],
    window_of: Callable[[PoolEntry], float],
) -> list[Candidate]:
    """The entries of ``index`` (by mean) whose members are all within ``window`` of the
    trigger's and whose own window covers the trigger's members, and the trigger, in index
    order. An acceptable partner's mean lies within ``window`` of the trigger's mean, so
    one slice of the index holds them all.

    Probes shorter than a key: the seq decides before the missing entry is reached."""
    low, value, high = span_of(trigger)
    lo = index.bisect_left(cast(_Key, (value - window, -1)))
    hi = index.bisect_left(cast(_Key, (value + window, math.inf)))
    out: list[Candidate] = []
    for other_value, _, other in index.islice(lo, hi):
        other_low, _, other_high = span_of(other)
        if other is trigger:
            out.append(Candidate(value, window, trigger, low, high))
            continue
        distance = max(other_high - low, high - other_low)
        other_window = window_of(other)
        if distance <= min(window, other_window):
            out.append(Candidate(other_value, other_window, other, other_low, other_high))
    return out


def pairwise(run: list[Candidate]) -> bool:
    """Whether every two members of ``run`` accept each other, a party's own members
    included: each entry's farthest pair is one of its members' ends against an end of
    the run's span, so one look per entry suffices."""
    low = min(c.low for c in run)
    high = max(c.high for c in run)
    return all(max(c.high - low, high - c.low) <= c.window for c in run)
