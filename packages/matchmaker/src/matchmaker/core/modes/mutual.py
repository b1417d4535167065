"""The ``mutual`` mode: a group forms when ``groupSize`` entries have all picked each other.

``pick.add {pool, target}`` records a private pick (the target is not told);
``pick.remove`` takes it back. After each new pick the mode looks for a complete
mutual set of ``groupSize`` entries that contains the new pair (for 2: a
reciprocal pair) among the picker's reciprocal neighbours, so the search stays
within at most ``MAX_PICKS`` candidates. Picks vanish with their entry, in both
directions.
"""

from __future__ import annotations

from dataclasses import dataclass

from matchmaker.core.commands import ModeCommand, Pick
from matchmaker.core.events import Delivery, ModeAnswer
from matchmaker.core.modes.strategy import ModeHost, ModeStrategy, wrong_mode
from matchmaker.core.state import ClientState, Pool, PoolEntry
from matchmaker.errors import MatchmakerError

__all__ = ["MAX_PICKS", "MutualMode", "Picked"]

MAX_PICKS = 32
"""The most clients one entry may have picked at a time."""


@dataclass(frozen=True, slots=True)
class Picked(ModeAnswer):
    """The ``pick.add`` / ``pick.remove`` reply: the picker's picks after the request, or
    the session this pick completed (its picks went with the entry)."""

    pool: str
    picks: list[str]
    session_id: str | None = None


class MutualMode(ModeStrategy):
    """The private picks of one mutual pool, by client id, in both directions."""

    name = "mutual"

    def __init__(self, pool: Pool, host: ModeHost) -> None:
        super().__init__(pool, host)
        self.picks: dict[str, set[str]] = {}  # picker -> picked
        self.picked_by: dict[str, set[str]] = {}  # picked -> pickers

    def leaving(self, entry: PoolEntry, reason: str, out: list[Delivery]) -> None:
        me = entry.client.client_id
        for target in self.picks.pop(me, ()):
            _discard(self.picked_by, target, me)
        for picker in self.picked_by.pop(me, ()):
            _discard(self.picks, picker, me)

    def command(
        self,
        client: ClientState,
        entry: PoolEntry | None,
        command: ModeCommand,
        now_ms: int,
        out: list[Delivery],
    ) -> ModeAnswer:
        assert entry is not None
        if not isinstance(command, Pick):
            raise wrong_mode(self.pool)
        me, target = client.client_id, command.target
        if not command.add:
            _discard(self.picks, me, target)
            _discard(self.picked_by, target, me)
            return Picked(self.pool.name, sorted(self.picks.get(me, ())))
        if target == me:
            raise MatchmakerError("a client cannot pick itself", code="pick.invalid")
        other = self.host.entry_of(target, self.pool)
        if other is None or other.bucket != entry.bucket:
            raise MatchmakerError(
                f"{target!r} is not waiting in this pool (or not in your bucket)",
                code="pick.not_found",
                details={"target": target},
            )
        mine = self.picks.setdefault(me, set())
        if target not in mine and len(mine) >= MAX_PICKS:
            raise MatchmakerError(
                f"at most {MAX_PICKS} picks per entry",
                code="pick.limit",
                details={"limit": MAX_PICKS},
            )
        mine.add(target)
        self.picked_by.setdefault(target, set()).add(me)
        picked = Picked(self.pool.name, sorted(mine))
        group = self._complete_set(me, target)
        if group is not None:
            entries = [e for c in group if (e := self.host.entry_of(c, self.pool)) is not None]
            picked = Picked(self.pool.name, [], self.host.form(entries, out))
        return picked

    def _mutual(self, a: str, b: str) -> bool:
        return b in self.picks.get(a, ()) and a in self.picks.get(b, ())

    def _complete_set(self, a: str, b: str) -> list[str] | None:
        """A set of ``groupSize`` clients containing ``a`` and ``b`` that all picked each
        other, or ``None``. Only sets with the new pick ``a -> b`` can be new."""
        size = self.pool.spec.group_size
        if not self._mutual(a, b):
            return None
        if size == 2:
            return [a, b]
        candidates = sorted(
            c for c in self.picks.get(a, ()) if c != b and self._mutual(a, c) and self._mutual(b, c)
        )
        return self._extend([a, b], candidates, size)

    def _extend(self, chosen: list[str], candidates: list[str], size: int) -> list[str] | None:
        """Backtracking clique search: add candidates mutual with everyone chosen."""
        if len(chosen) == size:
            return chosen
        for i, c in enumerate(candidates):
            if len(chosen) + len(candidates) - i < size:
                return None
            rest = [d for d in candidates[i + 1 :] if self._mutual(c, d)]
            found = self._extend([*chosen, c], rest, size)
            if found is not None:
                return found
        return None


def _discard(index: dict[str, set[str]], key: str, value: str) -> None:
    values = index.get(key)
    if values is not None:
        values.discard(value)
        if not values:
            del index[key]
