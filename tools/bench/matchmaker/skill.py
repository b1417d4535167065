"""Skill-based matching in the core: CPU per enter at 1,000 / 10,000 / 100,000 waiting.

    python tools/bench/matchmaker/skill.py [--sizes 1000,10000,100000] [--enters 20000] [--runs 3]

One ``auto`` pool (groupSize 2) whose filter is a widening rating window,
``{"within": 100, "widen": {"everyMs": 5000, "by": 50, "max": 400}}``, driven on
the sans-I/O core (no sockets) with a simulated clock, as the shell drives it:
a steady stream of ``pool.enter`` with uniform random ratings, and
``Matchmaker.expire`` every 250 ms of simulated time (the shell's tick) firing
the widening timers. The rating range grows with the size (700 rating points
per waiting entry) and the arrival rate too (a tenth of the size per simulated
second), so the pool settles near the wanted number of waiting entries and
every size sees the same mix of immediate and widened matches; the stream
first runs until the pool holds that many, then the measured enters follow.

All sizes are filled first, then their measured enters run in chunks of 250
taken in turn, so the load of a shared machine falls on every size alike.
Reported per size (medians over ``--runs``): CPU per enter (``process_time``
around ``Matchmaker.enter`` only) and its ratio to the smallest size's in the
same turns, CPU per fired widening timer and timers fired
per tick against the entries waiting (the tick touches only windows that
changed), simulated enter→matched p50/p99 (what the rule itself costs in
waiting), and the mean rating gap per match against the widest allowed (400)
and against the window the pair actually had.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from dataclasses import dataclass, field

from matchmaker.config import Limits
from matchmaker.core import EnterPool, Matchmaker, events
from matchmaker.core.state import Pool
from matchmaker.model import MatchmakingPolicy, Project, RangeRule, Widen

RULE = RangeRule(within=100, widen=Widen(every_ms=5000, by=50, max=400))
POLICY = MatchmakingPolicy(name="ranked", mode="auto", group_size=2, filter={"rating": RULE})
PROJECT = Project(id="bench", policies=(POLICY,))
REQUEST = EnterPool(policy="ranked")
TICK_MS = 250
POINTS_PER_ENTRY = 700
LIMITS = Limits(entry_ttl_ms=10**12, max_sessions_per_client=10**9)


@dataclass
class Run:
    """One size's stream: the core, the simulated clock and what was seen."""

    size: int
    seed: int
    core: Matchmaker = field(init=False)
    now: float = 0.0
    next_tick: int = TICK_MS
    rating: dict[str, float] = field(default_factory=dict)
    entered: dict[str, int] = field(default_factory=dict)
    fired: int = 0
    tick_cpu: float = 0.0
    ticks: int = 0
    waiting_at_ticks: int = 0
    latencies: list[int] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)
    allowed: list[float] = field(default_factory=list)
    counting: Pool | None = None

    def __post_init__(self) -> None:
        self.core = Matchmaker(LIMITS, node="b")
        self.rng = random.Random(self.seed)
        self.span = self.size * POINTS_PER_ENTRY
        self.step_ms = 1000 / (self.size / 10)  # a tenth of the size per simulated second

    def waiting(self) -> int:
        return sum(pool.size for pool in self.core.pools.values())

    def enter_one(self) -> float:
        """One client enters at the current time; the CPU seconds ``enter`` took."""
        self.now += self.step_ms
        now = int(self.now)
        while self.next_tick <= now:
            self._tick(self.next_tick)
            self.next_tick += TICK_MS
        rating = self.rng.uniform(0, self.span)
        client = self.core.connect("bench", None, {"rating": rating}).client_id
        self.rating[client], self.entered[client] = rating, now
        start = time.process_time()
        _, out = self.core.enter(client, PROJECT, REQUEST, now)
        spent = time.process_time() - start
        self._matched(out, now)
        return spent

    def _tick(self, now: int) -> None:
        self._count_timers()
        start = time.process_time()
        out = self.core.expire(now)
        self.tick_cpu += time.process_time() - start
        self.ticks += 1
        self.waiting_at_ticks += self.waiting()
        self._matched(out, now)

    def _count_timers(self) -> None:
        """Count the widening timers the pool's mode runs (the pool object may be new)."""
        pool = next(iter(self.core.pools.values()), None)
        if pool is None or pool is self.counting:
            return
        self.counting = pool
        mode = pool.mode
        timer = mode.timer

        def counted(key: str, now_ms: int, out: list[events.Delivery]) -> None:
            self.fired += 1
            timer(key, now_ms, out)

        mode.timer = counted  # type: ignore[method-assign]

    def _matched(self, out: list[events.Delivery], now: int) -> None:
        for recipients, event in out:
            if not isinstance(event, events.SessionFormed) or event.you != recipients[0]:
                continue
            a, b = (m.client_id for m in event.members)
            if event.you != a:
                continue  # one record per session
            gap = abs(self.rating[a] - self.rating[b])
            self.gaps.append(gap)
            self.allowed.append(
                min(RULE.window(now - self.entered[a]), RULE.window(now - self.entered[b]))
            )
            for member in (a, b):
                self.latencies.append(now - self.entered.pop(member))
                del self.rating[member]
                self.core.disconnect(member, now)


CHUNK = 250


def fill(size: int, seed: int) -> Run:
    """A run whose pool holds ``size`` waiting entries, its counters reset."""
    run = Run(size, seed)
    for _ in range(20 * size):  # the stream until the pool holds ``size``
        if run.waiting() >= size:
            break
        run.enter_one()
    run.fired = run.ticks = run.waiting_at_ticks = 0
    run.tick_cpu = 0.0
    run.latencies.clear()
    run.gaps.clear()
    run.allowed.clear()
    return run


def measure(sizes: list[int], enters: int, seed: int) -> dict[int, dict[str, float]]:
    """Every size filled first, then their measured enters in chunks taken in turn, so
    the machine's load falls on each size alike; ``ratio``: the median over the turns of
    a size's CPU per enter against the smallest size's in the same turn."""
    runs = [fill(size, seed) for size in sizes]
    chunks: list[list[float]] = [[] for _ in sizes]
    for _ in range(enters // CHUNK):
        for run, spent in zip(runs, chunks, strict=True):
            spent.append(sum(run.enter_one() for _ in range(CHUNK)))
    return {
        run.size: _report(run, spent, chunks[0]) for run, spent in zip(runs, chunks, strict=True)
    }


def _report(run: Run, chunks: list[float], base: list[float]) -> dict[str, float]:
    latencies = sorted(run.latencies)
    return {
        "waiting": run.waiting_at_ticks / max(run.ticks, 1),
        "cpu_per_enter_us": sum(chunks) / (len(chunks) * CHUNK) * 1e6,
        "ratio": statistics.median(c / b for c, b in zip(chunks, base, strict=True)),
        "cpu_per_widen_us": run.tick_cpu / max(run.fired, 1) * 1e6,
        "widened_per_tick": run.fired / max(run.ticks, 1),
        "p50_ms": latencies[len(latencies) // 2],
        "p99_ms": latencies[int(len(latencies) * 0.99)],
        "mean_gap": statistics.fmean(run.gaps),
        "gap_of_window": statistics.fmean(
            gap / window for gap, window in zip(run.gaps, run.allowed, strict=True)
        ),
        "immediate": sum(1 for value in latencies if value == 0) / len(latencies),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--enters", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    rounds: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}
    for seed in range(args.runs):
        for size, result in measure(sizes, args.enters, seed).items():
            rounds[size].append(result)
            print(f"# run {seed} size {size}: {result}", flush=True)
    print(
        "| waiting (target / mean) | CPU per enter µs | vs smallest, same turns "
        "| CPU per widening µs | windows widened per tick | matched on enter "
        "| enter→matched p50 / p99 (simulated) "
        "| mean gap (of 400 allowed) | mean gap / the pair's window |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        med = {key: statistics.median(r[key] for r in rounds[size]) for key in rounds[size][0]}
        print(
            f"| {size:,} / {med['waiting']:,.0f} | {med['cpu_per_enter_us']:.1f} "
            f"| {med['ratio']:.2f}x | {med['cpu_per_widen_us']:.1f} "
            f"| {med['widened_per_tick']:.1f} | {med['immediate']:.0%} "
            f"| {med['p50_ms'] / 1000:.1f} s / {med['p99_ms'] / 1000:.1f} s "
            f"| {med['mean_gap']:.0f} | {med['gap_of_window']:.2f} |"
        )


if __name__ == "__main__":
    main()
