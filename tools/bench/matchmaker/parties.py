"""Parties in the core: CPU per enter with 1,000 / 10,000 / 100,000 parties waiting.

    python tools/bench/matchmaker/parties.py [--sizes 1000,10000,100000] [--enters 20000] [--runs 3]
        [--ranked]

One ``auto`` pool of groupSize 3, driven on the sans-I/O core (no sockets). It is
first filled with ``size`` parties of two, which never fill a group together
(2 + 2 > 3): they all wait in one bucket, the worst case for a matcher that
walked its pool. Then a steady stream enters in a cycle of four — a party of
two, a solo, a solo, a party of two — so the waiting count stays at ``size``:
the first party waits, each solo completes the oldest party of two with it
(2 + 1), the last party waits again. Every enter of the stream is measured
(``process_time`` around ``Matchmaker.enter`` only: admission, the seat-count
index, the subset fill, forming the session); connecting, making parties and
leaving after a match are not. As ``skill.py`` does, all sizes are filled
first and measured in turns of 250 enters each, so the load of a shared
machine falls on every size alike; the ratio is the median over the turns of a
size's CPU against the smallest size's in the same turn.

``--ranked`` runs the same on a pool whose filter is a rating window
(``{"within": 100}``), the skill mode: every player gets a uniform random
rating over 50 points per waiting party (so a window of ±100 holds about four
parties whatever the size), a party's second member within 40 of its leader.
A solo then completes a party inside its window whose members both lie within
100 of it (the rule held member by member), or waits; the waiting count stays
near ``size``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from dataclasses import dataclass, field

from matchmaker.config import Limits
from matchmaker.core import EnterPool, Matchmaker, events
from matchmaker.core.commands import CreateParty, JoinParty
from matchmaker.core.parties import PartyInfo
from matchmaker.model import MatchmakingPolicy, Project, RangeRule

POLICY = MatchmakingPolicy(name="trio", mode="auto", group_size=3)
RANKED = MatchmakingPolicy(
    name="ranked", mode="auto", group_size=3, filter={"rating": RangeRule(within=100)}
)
PROJECT = Project(id="bench", policies=(POLICY, RANKED))
SPREAD = 50  # rating points per waiting party, with --ranked
LIMITS = Limits(entry_ttl_ms=10**12, max_sessions_per_client=10**9, max_parties_per_project=10**9)
CYCLE = (2, 1, 1, 2)  # seats of the stream's arrivals, in turn
CHUNK = 250


@dataclass
class Run:
    """One size's pool and stream."""

    size: int
    ranked: bool = False
    core: Matchmaker = field(init=False)
    rng: random.Random = field(init=False)
    now: int = 0
    step: int = 0

    def __post_init__(self) -> None:
        self.core = Matchmaker(LIMITS, node="b")
        self.rng = random.Random(self.size)

    def request(self, seats: int) -> tuple[str, EnterPool]:
        """A client (the leader of a new party of ``seats`` > 1) ready to enter."""
        core = self.core
        policy = "ranked" if self.ranked else "trio"
        rating = self.rng.uniform(0, self.size * SPREAD)
        leader = core.connect("bench", None, self.attributes(rating)).client_id
        if seats == 1:
            return leader, EnterPool(policy=policy)
        info, _ = core.party(leader, CreateParty(), self.now)
        assert isinstance(info, PartyInfo)
        for _ in range(seats - 1):
            near = self.attributes(rating + self.rng.uniform(0, 40))
            member = core.connect("bench", None, near).client_id
            core.party(member, JoinParty(info.code), self.now)
        return leader, EnterPool(policy=policy, party_id=info.party_id)

    def attributes(self, rating: float) -> dict[str, str | int | float | bool]:
        return {"rating": rating} if self.ranked else {}

    def enter_one(self, seats: int) -> float:
        """One arrival of ``seats``; the CPU seconds ``enter`` took."""
        self.now += 1
        client, request = self.request(seats)
        start = time.process_time()
        _, out = self.core.enter(client, PROJECT, request, self.now)
        spent = time.process_time() - start
        for recipients, event in out:  # the matched leave: the process stays its size
            if isinstance(event, events.SessionFormed):
                self.core.disconnect(recipients[0], self.now)
        return spent

    def stream(self) -> float:
        seats = CYCLE[self.step % len(CYCLE)]
        self.step += 1
        return self.enter_one(seats)

    def waiting(self) -> int:
        return sum(pool.size for pool in self.core.pools.values())


def fill(size: int, ranked: bool) -> Run:
    run = Run(size, ranked)
    for _ in range(size):
        run.enter_one(2)
    assert run.waiting() == size, "parties of two must all wait"
    return run


def measure(sizes: list[int], enters: int, ranked: bool) -> dict[int, dict[str, float]]:
    runs = [fill(size, ranked) for size in sizes]
    chunks: list[list[float]] = [[] for _ in sizes]
    for _ in range(enters // CHUNK):
        for run, spent in zip(runs, chunks, strict=True):
            spent.append(sum(run.stream() for _ in range(CHUNK)))
    out = {}
    for run, spent in zip(runs, chunks, strict=True):
        out[run.size] = {
            "waiting": float(run.waiting()),
            "cpu_per_enter_us": sum(spent) / (len(spent) * CHUNK) * 1e6,
            "ratio": statistics.median(c / b for c, b in zip(spent, chunks[0], strict=True)),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--enters", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ranked", action="store_true", help="a rating window of 100")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    rounds: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}
    for run in range(args.runs):
        for size, result in measure(sizes, args.enters, args.ranked).items():
            rounds[size].append(result)
            print(f"# run {run} size {size}: {result}", flush=True)
    print("| parties waiting (target / after) | CPU per enter | vs smallest, same turns |")
    print("|---|---|---|")
    for size in sizes:
        med = {key: statistics.median(r[key] for r in rounds[size]) for key in rounds[size][0]}
        print(
            f"| {size:,} / {med['waiting']:,.0f} | {med['cpu_per_enter_us']:.1f} µs "
            f"| {med['ratio']:.2f}x |"
        )


if __name__ == "__main__":
    main()
