"""The rules of a pool's ``teams``, ``balance`` and ``regions``, on both planes.

The server forms such groups, so they apply to mode ``auto`` only. The team sizes
add up to ``groupSize`` and a group always fills every team, so ``minGroupSize``
does not combine with ``teams``; ``balance`` compares teams, so it needs two or
more. A ``widen.max`` is at least the value it widens (as in a range rule). Each
plane turns the :class:`~matchmaker.rules.filters.FilterProblem` into its own error.
"""

from __future__ import annotations

from collections.abc import Sequence

from matchmaker.model import Balance, Regions, Team
from matchmaker.rules.filters import FILTERED_MODES, FilterProblem

__all__ = ["team_problem"]


def team_problem(
    mode: str | None,
    group_size: int | None,
    min_group_size: int | None,
    *,
    teams: Sequence[Team] | None,
    balance: Balance | None,
    regions: Regions | None,
) -> FilterProblem | None:
    """The first rule the ``teams``/``balance``/``regions`` fields break, or ``None``
    (``attribute`` names the field, ``part`` the offending part of it)."""
    for field, value in (("teams", teams), ("balance", balance), ("regions", regions)):
        if value is not None and mode is not None and mode not in FILTERED_MODES:
            modes = ", ".join(sorted(FILTERED_MODES))
            return FilterProblem(f"{field} applies to mode {modes} only, not {mode!r}", field)
    if teams is not None:
        if not teams:
            return FilterProblem("teams names at least one team", "teams")
        names = [team.name for team in teams]
        if len(set(names)) != len(names):
            return FilterProblem("team names are unique", "teams")
        if group_size is not None and sum(team.size for team in teams) != group_size:
            return FilterProblem("the team sizes add up to groupSize", "teams")
        if min_group_size is not None:
            return FilterProblem("teams fill every seat: no minGroupSize with teams", "teams")
    if balance is not None:
        if teams is None or len(teams) < 2:
            return FilterProblem("balance compares teams: declare two or more", "balance")
        if balance.widen is not None and balance.widen.max < balance.max_difference:
            return FilterProblem(
                "widen.max must be at least maxDifference", "balance", part="widen.max"
            )
    widen = None if regions is None else regions.widen
    if regions is not None and widen is not None and widen.max < regions.max_latency_ms:
        return FilterProblem("widen.max must be at least maxLatencyMs", "regions", part="widen.max")
    return None
