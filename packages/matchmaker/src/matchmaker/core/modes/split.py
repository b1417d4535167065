"""Splitting a group into teams: the most balanced split, or arrival order.

A group of ``groupSize`` is split over the pool's teams (their sizes add up to
``groupSize``). With ``balance``, the split whose teams' mean values differ
least (the largest mean less the smallest) is chosen: every split is tried
while there are at most :data:`EXACT_SPLITS` of them (5v5 has 252, 4v4v4 34,650),
and past that a snake draft (strongest first, each to the team whose sum is
lowest among those with a free seat) gives a close one in linear time.

Parties. A group may hold parties (an entry of several seats, see
:mod:`matchmaker.core.parties`), whose members play on one team: the split is
then over entries, each to a team with room for all of its seats. Without
``balance`` each entry goes, by arrival, to the first team with room (trying
the next when the rest could not be seated); with it, the most balanced split
that keeps every party together (the draft, past :data:`EXACT_SPLITS`, takes the
largest parties first, and falls back to the first split that seats everyone).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

__all__ = ["EXACT_SPLITS", "best_split", "imbalance", "in_order", "seat_parties"]

EXACT_SPLITS = 5_000
"""The most splits tried one by one; a larger group is drafted."""

_Score = Callable[[list[int]], float]  # an assignment of entries to teams -> its imbalance


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
    found = _place([1] * len(values), sizes, lambda teams: imbalance(values, teams, len(sizes)))
    assert found is not None  # solos always fit: the sizes add up to the group
    return found


def seat_parties(
    seats: Sequence[int], values: Sequence[float] | None, sizes: Sequence[int]
) -> tuple[list[int], float] | None:
    """Each entry's team for entries of ``seats`` members each (in arrival order), every
    entry's members on one team, and the split's imbalance: the most balanced for the
    members' ``values`` (in entry order, one per member), or without values the first by
    arrival. ``None`` when no split seats every party whole."""
    if values is None:
        return _place(seats, sizes, None)
    score = _party_score(seats, values, len(sizes))
    if _splits(sizes) > EXACT_SPLITS:
        teams = _draft_parties(seats, values, sizes)
        if teams is not None:
            return teams, score(teams)
        found = _place(seats, sizes, None)  # the draft left a party without room
        return None if found is None else (found[0], score(found[0]))
    return _place(seats, sizes, score)


def _party_score(seats: Sequence[int], values: Sequence[float], count: int) -> _Score:
    """The imbalance of an assignment of entries to teams, each member counted."""

    def score(teams: list[int]) -> float:
        members = [team for team, n in zip(teams, seats, strict=True) for _ in range(n)]
        return imbalance(values, members, count)

    return score


def _place(
    seats: Sequence[int], sizes: Sequence[int], score: _Score | None
) -> tuple[list[int], float] | None:
    """Every assignment of entries (of ``seats`` members) to teams with room for them, by
    depth-first search in order: the one of the lowest ``score``, or without a score the
    first found (entries in order, each to the first team that works)."""
    best: tuple[float, list[int]] | None = None
    assigned = [0] * len(seats)
    free = list(sizes)

    def place(i: int) -> bool:
        """Seat entries ``i..``; whether to stop (the first split is all that is wanted)."""
        nonlocal best
        if i == len(seats):
            value = 0.0 if score is None else score(assigned)
            if best is None or value < best[0]:
                best = (value, list(assigned))
            return score is None
        seen: set[int] = set()
        for team, left in enumerate(free):
            # Two empty teams of one size are the same choice: try the first only.
            empty = left == sizes[team]
            if left < seats[i] or (empty and sizes[team] in seen):
                continue
            if empty:
                seen.add(sizes[team])
            free[team] -= seats[i]
            assigned[i] = team
            if place(i + 1):
                return True
            free[team] += seats[i]
        return False

    place(0)
    return None if best is None else (best[1], best[0])


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


def _draft_parties(
    seats: Sequence[int], values: Sequence[float], sizes: Sequence[int]
) -> list[int] | None:
    """The draft over entries: the largest parties first, then the strongest, each to the
    team of the lowest sum among those with room for it; ``None`` if one finds none."""
    starts = [0]
    for n in seats:
        starts.append(starts[-1] + n)
    total = [sum(values[starts[i] : starts[i + 1]]) for i in range(len(seats))]
    teams = [0] * len(seats)
    sums = [0.0] * len(sizes)
    free = list(sizes)
    for i in sorted(range(len(seats)), key=lambda i: (-seats[i], -total[i] / seats[i])):
        room = [t for t in range(len(sizes)) if free[t] >= seats[i]]
        if not room:
            return None
        team = min(room, key=lambda t: sums[t] / sizes[t])
        teams[i] = team
        sums[team] += total[i]
        free[team] -= seats[i]
    return teams
