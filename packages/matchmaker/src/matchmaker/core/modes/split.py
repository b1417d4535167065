"""Splitting a group into teams: the most balanced split, or arrival order.

A group of ``groupSize`` is split over the pool's teams (their sizes add up to
``groupSize``). With ``balance``, the split whose teams' mean values differ
least (the largest mean less the smallest) is chosen: every split is tried
while there are at most :data:`EXACT_SPLITS` of them (5v5 has 252, 4v4v4 34,650),
and past that a snake draft (strongest first, each to the team whose sum is
lowest among those with a free seat) gives a close one in linear time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["EXACT_SPLITS", "best_split", "imbalance", "in_order"]

EXACT_SPLITS = 5_000
"""The most splits tried one by one; a larger group is drafted."""


def in_order(sizes: Sequence[int]) -> list[int]:
    """Each member's team (an index into ``sizes``) by arrival: the first team fills first."""
    return [team for team, size in enumerate(sizes) for _ in range(size)]


def imbalance(values: Sequence[float], teams: Sequence[int], count: int) -> float:
    """The largest team mean less the smallest, for members ``values`` on ``teams``."""
    sums = [0.0] * count
    sizes = [0] * count
    for value, team in zip(values, teams, strict=True):
        sums[team] += value
        sizes[team] += 1
    means = [total / size for total, size in zip(sums, sizes, strict=True) if size]
    return max(means) - min(means) if means else 0.0


def best_split(values: Sequence[float], sizes: Sequence[int]) -> tuple[list[int], float]:
    """The most balanced assignment of ``values`` (one per member) to teams of ``sizes``
    (each member's team index) and its imbalance."""
    if _splits(sizes) > EXACT_SPLITS:
        teams = _draft(values, sizes)
        return teams, imbalance(values, teams, len(sizes))
    best: tuple[float, list[int]] | None = None
    assigned = [0] * len(values)
    free = list(sizes)

    def place(i: int) -> None:
        nonlocal best
        if i == len(values):
            score = imbalance(values, assigned, len(sizes))
            if best is None or score < best[0]:
                best = (score, list(assigned))
            return
        seen: set[int] = set()
        for team, left in enumerate(free):
            # Two empty teams of one size are the same choice: try the first only.
            empty = left == sizes[team]
            if not left or (empty and sizes[team] in seen):
                continue
            if empty:
                seen.add(sizes[team])
            free[team] -= 1
            assigned[i] = team
            place(i + 1)
            free[team] += 1

    place(0)
    assert best is not None
    return best[1], best[0]


def _splits(sizes: Sequence[int]) -> int:
    """How many assignments to teams of ``sizes`` there are (the multinomial)."""
    return math.factorial(sum(sizes)) // math.prod(math.factorial(size) for size in sizes)


def _draft(values: Sequence[float], sizes: Sequence[int]) -> list[int]:
    teams = [0] * len(values)
    sums = [0.0] * len(sizes)
    free = list(sizes)
    for i in sorted(range(len(values)), key=lambda i: -values[i]):
        team = min((t for t in range(len(sizes)) if free[t]), key=lambda t: sums[t] / sizes[t])
        teams[i] = team
        sums[team] += values[i]
        free[team] -= 1
    return teams
