"""The numbers a designer compares: how long entries waited, how close their groups were.

``wait_ms`` is over matched entries: from the arrival to the session forming.
``spread`` is per formed group: for each attribute of a range rule, the
largest difference between two members. Percentiles are nearest-rank (the
smallest value that at least p% of the values do not exceed), so every figure
is a value that occurred, and ``null`` when nothing was matched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from matchmaker.arrivals import Trace
from matchmaker.model import MatchmakingPolicy, RangeRule
from matchmaker.simulate.run import Outcome

__all__ = ["Summary", "percentile", "summarize", "to_json"]

Number = int | float


@dataclass(frozen=True, slots=True)
class Summary:
    """One policy's run over a trace, reduced to what the outputs show."""

    name: str
    entries: int
    matched: int
    sessions: int
    waits: list[int]  # per matched entry
    group_waits: list[int]  # per group: its longest-waiting member's wait
    spreads: dict[str, list[Number]]  # range-rule attribute -> per group

    @property
    def unmatched(self) -> int:
        return self.entries - self.matched


def range_attributes(policy: MatchmakingPolicy) -> list[str]:
    """The attributes a range rule of the policy reads, in name order."""
    return sorted(k for k, v in (policy.filter or {}).items() if isinstance(v, RangeRule))


def summarize(name: str, policy: MatchmakingPolicy, trace: Trace, outcome: Outcome) -> Summary:
    arrivals = trace.arrivals
    attributes = range_attributes(policy)
    waits: list[int] = []
    group_waits: list[int] = []
    spreads: dict[str, list[Number]] = {attribute: [] for attribute in attributes}
    for group in outcome.groups:
        members = [arrivals[i] for i in group.members]
        each = [group.at_ms - member.at_ms for member in members]
        waits.extend(each)
        group_waits.append(max(each))
        for attribute in attributes:
            values = [_number(member.attributes[attribute]) for member in members]
            spreads[attribute].append(max(values) - min(values))
    return Summary(
        name, len(arrivals), len(waits), len(outcome.groups), waits, group_waits, spreads
    )


def _number(value: object) -> Number:
    assert isinstance(value, int | float)
    assert not isinstance(value, bool)
    return value


def percentile(ordered: Sequence[Number], p: float) -> Number | None:
    """The nearest-rank ``p``-th percentile of ``ordered`` (sorted), ``None`` if empty."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def _figures(values: list[Number], ranks: tuple[str, ...]) -> dict[str, Number | None]:
    ordered = sorted(values)
    out: dict[str, Number | None] = {rank: percentile(ordered, float(rank[1:])) for rank in ranks}
    out["max"] = ordered[-1] if ordered else None
    return out


def to_json(summaries: list[Summary]) -> dict[str, Any]:
    """The ``--format json`` document (docs/modes.md, Tuning a policy)."""
    return {
        "policies": [
            {
                "name": s.name,
                "entries": s.entries,
                "matched": s.matched,
                "unmatched": s.unmatched,
                "sessions": s.sessions,
                "wait_ms": _figures(list(s.waits), ("p50", "p90", "p99")),
                "spread": {a: _figures(v, ("p50", "p90")) for a, v in s.spreads.items()},
            }
            for s in summaries
        ]
    }
