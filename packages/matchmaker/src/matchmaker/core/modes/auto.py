"""The ``auto`` mode (the server groups the oldest entries first) and :data:`MODES`,
the registry of every pool mode (the package docstring lists them)."""

from __future__ import annotations

from collections.abc import Callable

from matchmaker.core.events import Delivery
from matchmaker.core.modes.claim import ClaimMode
from matchmaker.core.modes.delegated import DelegatedMode
from matchmaker.core.modes.mutual import MutualMode
from matchmaker.core.modes.propose import ProposeMode
from matchmaker.core.modes.skill import SkillMode
from matchmaker.core.modes.strategy import ModeHost, ModeStrategy
from matchmaker.core.modes.teams import TeamMode
from matchmaker.core.pools import Bucket
from matchmaker.core.state import Pool, PoolEntry, Session

__all__ = ["MODES", "AutoMode"]


class AutoMode(ModeStrategy):
    """The server matches the oldest ``groupSize`` entries of a bucket, at once.

    Matching runs on every arrival, so a bucket never holds ``groupSize``
    entries between operations and forming a group looks at one bucket only.
    With ``minGroupSize``, the oldest entries of a bucket (up to ``groupSize``)
    form once the oldest waited ``fillTimeoutMs`` and they are at least
    ``minGroupSize``: tried when an entry enters and at each entry's own fill
    deadline (one timer per entry, keyed by its client).

    A party's entry takes a seat per member (:mod:`matchmaker.core.parties`). A
    bucket that holds one is matched by seats: the entries waiting there are also
    kept by seat count (:attr:`sized`, oldest first), and a group is the arrival
    plus the oldest entries whose seats fill it exactly, chosen among the oldest
    ``groupSize // seats`` of each seat count (:func:`fill`): what it looks at is
    bounded by the group, never by the pool.
    """

    name = "auto"

    def __init__(self, pool: Pool, host: ModeHost) -> None:
        super().__init__(pool, host)
        # bucket -> seats -> the entries of that many seats, by id, oldest first; a bucket
        # is here only while a party's entry (more than one seat) has waited in it.
        self.sized: dict[Bucket, dict[int, dict[str, PoolEntry]]] = {}

    def entered(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        sized = self._index(entry)
        if entry.seats == 1 and self.host.take_seat(entry, now_ms, out):
            return  # a session's backfill goes before a new group
        spec = self.pool.spec
        if sized is None:
            group = self.pool.oldest(entry.bucket, spec.group_size)
            complete = len(group) == spec.group_size
        else:
            filled = fill(entry, sized, spec.group_size)
            complete = filled is not None
            group = self._oldest(entry.bucket) if filled is None else filled
        if complete or self._filled(group, now_ms):
            self.host.form(group, out)
        elif spec.fill_timeout_ms is not None and entry.entered_at + spec.fill_timeout_ms > now_ms:
            due = entry.entered_at + spec.fill_timeout_ms
            self.host.schedule(due, self.pool, entry.client.client_id)

    def leaving(self, entry: PoolEntry, reason: str, out: list[Delivery]) -> None:
        sized = self.sized.get(entry.bucket)
        if sized is None:
            return
        fifo = sized.get(entry.seats)
        if fifo is not None and fifo.pop(entry.entry_id, None) is not None and not fifo:
            del sized[entry.seats]
            if not any(seats > 1 for seats in sized):
                del self.sized[entry.bucket]  # solos only again: the FIFO serves

    def timer(self, key: str, now_ms: int, out: list[Delivery]) -> None:
        entry = self.host.entry_of(key, self.pool)
        if entry is None:
            return  # matched, gone or paused (a resume tries again)
        group = self._oldest(entry.bucket)
        if self._filled(group, now_ms):
            self.host.form(group, out)

    def _index(self, entry: PoolEntry) -> dict[int, dict[str, PoolEntry]] | None:
        """File a newly waiting ``entry`` by its seats, if its bucket is matched by seats
        (from a party's first entry on); the bucket's index, else ``None``."""
        sized = self.sized.get(entry.bucket)
        if sized is None:
            if entry.seats == 1:
                return None
            sized = self.sized[entry.bucket] = {}
            for waiting in self.pool.buckets.get(entry.bucket, {}).values():
                if waiting is not entry:
                    sized.setdefault(waiting.seats, {})[waiting.entry_id] = waiting
        fifo = sized.setdefault(entry.seats, {})
        last = next(reversed(fifo.values()), None)
        fifo[entry.entry_id] = entry
        if last is not None and last.seq > entry.seq:  # a resumed entry: keep seq order
            sized[entry.seats] = dict(sorted(fifo.items(), key=lambda kv: kv[1].seq))
        return sized

    def _oldest(self, bucket: Bucket) -> list[PoolEntry]:
        """The bucket's oldest entries that fit one group together, oldest first (what
        may form below ``groupSize`` once the fill timeout passed)."""
        size = self.pool.spec.group_size
        sized = self.sized.get(bucket)
        if sized is None:
            return self.pool.oldest(bucket, size)
        group: list[PoolEntry] = []
        seats = 0
        for entry in sorted(_candidates(sized, size, None), key=_seq):
            if seats + entry.seats <= size:
                group.append(entry)
                seats += entry.seats
        return group

    def _filled(self, group: list[PoolEntry], now_ms: int) -> bool:
        """Whether ``group`` (a bucket's oldest) may form below ``groupSize``."""
        spec = self.pool.spec
        fill = spec.fill_timeout_ms
        if fill is None or sum(entry.seats for entry in group) < spec.smallest:
            return False
        return group[0].entered_at + fill <= now_ms

    def fits(self, entry: PoolEntry, session: Session, opened_ms: int, now_ms: int) -> bool:
        return entry.seats == 1  # a backfill seats one client per entry, not a party


def fill(
    entry: PoolEntry, sized: dict[int, dict[str, PoolEntry]], size: int
) -> list[PoolEntry] | None:
    """``entry`` and the oldest waiting entries whose seats make ``size`` with it, oldest
    first (preferring, entry by entry, the oldest that still lets the group fill), or
    ``None`` when no set of them does.

    A subset sum over at most ``size // seats`` entries of each seat count, as bits:
    ``reach[i]`` has bit ``s`` set when entries ``i..`` can make ``s`` seats."""
    need = size - entry.seats
    items = sorted(_candidates(sized, need, entry), key=_seq)
    mask = (1 << (need + 1)) - 1
    reach = [0] * (len(items) + 1)
    reach[-1] = 1
    for i in range(len(items) - 1, -1, -1):
        reach[i] = (reach[i + 1] | (reach[i + 1] << items[i].seats)) & mask
    if not (reach[0] >> need) & 1:
        return None
    group = [entry]
    for i, item in enumerate(items):
        if item.seats <= need and (reach[i + 1] >> (need - item.seats)) & 1:
            group.append(item)
            need -= item.seats
    return group


def _candidates(
    sized: dict[int, dict[str, PoolEntry]], need: int, entry: PoolEntry | None
) -> list[PoolEntry]:
    """The oldest entries of each seat count that could be in a group of ``need`` more
    seats (all but ``entry``): at most ``need // seats`` of each."""
    out: list[PoolEntry] = []
    for seats, fifo in sized.items():
        room = need // seats
        for waiting in fifo.values():
            if room <= 0:
                break
            if waiting is not entry:
                out.append(waiting)
                room -= 1
    return out


def _seq(entry: PoolEntry) -> int:
    return entry.seq


def _auto(pool: Pool, host: ModeHost) -> ModeStrategy:
    """The auto mode's strategy: with teams, balance or regions, by team; else by distance
    when the filter has a range rule."""
    spec = pool.spec
    if spec.teams or spec.balance is not None or spec.regions is not None:
        return TeamMode(pool, host)
    if spec.range_rule is not None:
        return SkillMode(pool, host)
    return AutoMode(pool, host)


MODES: dict[str, Callable[[Pool, ModeHost], ModeStrategy]] = {
    "auto": _auto,
    "claim": ClaimMode,
    "mutual": MutualMode,
    "propose": ProposeMode,
    "delegated": DelegatedMode,
}
