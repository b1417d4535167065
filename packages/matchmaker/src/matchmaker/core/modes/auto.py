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
from matchmaker.core.state import Pool, PoolEntry

__all__ = ["MODES", "AutoMode"]


class AutoMode(ModeStrategy):
    """The server matches the oldest ``groupSize`` entries of a bucket, at once.

    Matching runs on every arrival, so a bucket never holds ``groupSize``
    entries between operations and forming a group looks at one bucket only.
    With ``minGroupSize``, the oldest entries of a bucket (up to ``groupSize``)
    form once the oldest waited ``fillTimeoutMs`` and they are at least
    ``minGroupSize``: tried when an entry enters and at each entry's own fill
    deadline (one timer per entry, keyed by its client).
    """

    name = "auto"

    def entered(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        if self.host.take_seat(entry, now_ms, out):
            return  # a session's backfill goes before a new group
        spec = self.pool.spec
        group = self.pool.oldest(entry.bucket, spec.group_size)
        if len(group) == spec.group_size or self._filled(group, now_ms):
            self.host.form(group, out)
        elif spec.fill_timeout_ms is not None and entry.entered_at + spec.fill_timeout_ms > now_ms:
            due = entry.entered_at + spec.fill_timeout_ms
            self.host.schedule(due, self.pool, entry.client.client_id)

    def timer(self, key: str, now_ms: int, out: list[Delivery]) -> None:
        entry = self.host.entry_of(key, self.pool)
        if entry is None:
            return  # matched, gone or paused (a resume tries again)
        group = self.pool.oldest(entry.bucket, self.pool.spec.group_size)
        if self._filled(group, now_ms):
            self.host.form(group, out)

    def _filled(self, group: list[PoolEntry], now_ms: int) -> bool:
        """Whether ``group`` (a bucket's oldest) may form below ``groupSize``."""
        spec = self.pool.spec
        fill = spec.fill_timeout_ms
        if fill is None or len(group) < spec.smallest:
            return False
        return group[0].entered_at + fill <= now_ms


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
