"""Teams, balance and regions in the core: CPU per enter at 1,000 / 10,000 / 100,000 waiting.

    python tools/bench/matchmaker/teams.py [--sizes 1000,10000,100000] [--enters 10000] [--runs 3]
        [--parties]

One ``auto`` pool of 2v2 (``teams`` red/blue of 2) with every rule of issue 43
at once: a widening rating window (as ``skill.py``'s), ``balance`` on the rating
(``maxDifference`` 25, widening by 25 every 5 s up to 200) and ``regions``
(``maxLatencyMs`` 80, widening by 20 every 5 s up to 150). Each client measures
four regions: one or two near (10-79 ms), the others far (90-250 ms), so an
entry starts in one or two regional indexes and joins more as its limit widens.
Driven on the sans-I/O core with a simulated clock, as the shell drives it
(enters, and ``expire`` every 250 ms firing the widening timers); the rating
range and the arrival rate grow with the size (150 points per waiting entry, a
tenth of the size per simulated second), so every size settles near its number
of waiting entries. All sizes are filled first, then measured in turns of 250
enters, so a shared machine's load falls on each alike; the ratio is the median
over the turns of a size's CPU against the smallest size's in the same turn.
Reported per size (medians over ``--runs``): CPU per enter (``process_time``
around ``Matchmaker.enter``), its ratio, CPU per fired timer, the share matched
on entering, and the quality of the groups: the mean team imbalance, the mean
rating spread and the mean worst latency in the chosen region.

``--parties``: a fifth of the enters are parties of two (the leader enters for
both, with its latencies; the member's rating drawn as the leader's), which
play on one team. Parties are refused where the filter has a range rule, so
this pool has none (the same teams, balance and regions): runs are then
consecutive by rating. Only the leader's ``enter`` is timed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from matchmaker.config import Limits
from matchmaker.core import EnterPool, Matchmaker, events
from matchmaker.core.commands import CreateParty, JoinParty
from matchmaker.core.parties import PartyInfo
from matchmaker.model import (
    Balance,
    MatchmakingPolicy,
    Project,
    RangeRule,
    Regions,
    Team,
    Widen,
)

POLICY = MatchmakingPolicy(
    name="duo",
    mode="auto",
    group_size=4,
    filter={"rating": RangeRule(100, Widen(every_ms=5000, by=50, max=400))},
    teams=(Team("red", 2), Team("blue", 2)),
    balance=Balance("rating", 25, Widen(every_ms=5000, by=25, max=200)),
    regions=Regions(80, Widen(every_ms=5000, by=20, max=150)),
)
PARTY_POLICY = MatchmakingPolicy(
    name="squad",
    mode="auto",
    group_size=4,
    teams=POLICY.teams,
    balance=POLICY.balance,
    regions=POLICY.regions,
)
PROJECT = Project(id="bench", policies=(POLICY, PARTY_POLICY))
PARTY_SHARE = 0.2
REGIONS = ("eu", "us", "asia", "sa")
TICK_MS = 250
CHUNK = 250
LIMITS = Limits(entry_ttl_ms=10**12, max_sessions_per_client=10**9, max_parties_per_project=10**9)


class Stream:
    """One size's stream of enters on its own core and simulated clock."""

    def __init__(self, size: int, seed: int, parties: bool = False) -> None:
        self.size = size
        self.parties = parties
        self.core = Matchmaker(LIMITS, node="b")
        self.rng = random.Random(seed)
        self.span = size * 150
        self.step_ms = 10_000 / size
        self.now = 0.0
        self.next_tick = TICK_MS
        self.latency: dict[str, dict[str, int]] = {}
        self.timer_cpu = 0.0
        self.timers = 0
        self.groups: list[tuple[float, float, int]] = []  # imbalance, spread, worst latency
        self.matched_on_enter = 0
        self.enters = 0

    def waiting(self) -> int:
        return sum(pool.size for pool in self.core.pools.values())

    def reset(self) -> None:
        self.timer_cpu, self.timers, self.groups = 0.0, 0, []
        self.matched_on_enter = self.enters = 0

    def enter_one(self) -> float:
        """One client enters now; the CPU seconds ``enter`` took."""
        self.now += self.step_ms
        now = int(self.now)
        while self.next_tick <= now:
            self._tick(self.next_tick)
            self.next_tick += TICK_MS
        near = set(self.rng.sample(REGIONS, self.rng.choice((1, 2))))
        latencies = {
            r: self.rng.randint(10, 79) if r in near else self.rng.randint(90, 250) for r in REGIONS
        }
        rating = self.rng.uniform(0, self.span)
        client = self.core.connect("bench", None, {"rating": rating})
        self.latency[client.client_id] = latencies
        request = EnterPool(policy="duo", latencies=latencies)
        if self.parties:
            request = EnterPool(policy="squad", latencies=latencies)
            if self.rng.random() < PARTY_SHARE:
                request.party_id = self._party(client.client_id, rating, latencies, now)
        start = time.process_time()
        _, out = self.core.enter(client.client_id, PROJECT, request, now)
        spent = time.process_time() - start
        self.enters += 1
        self.matched_on_enter += self._matched(out, now) > 0
        return spent

    def _party(self, leader: str, rating: float, latencies: dict[str, int], now: int) -> str:
        """A party of ``leader`` and a member of about its rating; its id."""
        member = self.core.connect("bench", None, {"rating": rating + self.rng.uniform(-50, 50)})
        self.latency[member.client_id] = latencies
        info, _ = self.core.party(leader, CreateParty(), now)
        assert isinstance(info, PartyInfo)
        self.core.party(member.client_id, JoinParty(info.code), now)
        return info.party_id

    def _tick(self, now: int) -> None:
        due = sum(1 for when, *_ in self.core.tables.timers if when <= now)
        start = time.process_time()
        out = self.core.expire(now)
        self.timer_cpu += time.process_time() - start
        self.timers += due
        self._matched(out, now)

    def _matched(self, out: list[events.Delivery], now: int) -> int:
        """Record and disconnect each group formed; how many formed."""
        formed = 0
        for recipients, event in out:
            if not isinstance(event, events.SessionFormed) or event.you != recipients[0]:
                continue
            members = [m.client_id for m in event.members]
            if event.you != members[0] or event.teams is None or event.region is None:
                continue
            formed += 1
            rating = {c: self.core.clients[c].attributes["rating"] for c in members}
            means = [statistics.fmean(rating[c] for c in t) for t in event.teams.values()]  # type: ignore[misc]
            values = list(rating.values())
            worst = max(self.latency[c][event.region] for c in members)
            self.groups.append((max(means) - min(means), max(values) - min(values), worst))  # type: ignore[operator]
            for member in members:
                del self.latency[member]
                self.core.disconnect(member, now)
        return formed


def measure(sizes: list[int], enters: int, seed: int, parties: bool) -> dict[int, dict[str, float]]:
    """Fill every size, then time their enters in turns (see the module docstring)."""
    streams = []
    for size in sizes:
        stream = Stream(size, seed, parties)
        for _ in range(40 * size):
            if stream.waiting() >= size:
                break
            stream.enter_one()
        stream.reset()
        streams.append(stream)
    spent: list[list[float]] = [[] for _ in sizes]
    for _ in range(enters // CHUNK):
        for stream, chunks in zip(streams, spent, strict=True):
            chunks.append(sum(stream.enter_one() for _ in range(CHUNK)))
    out = {}
    for stream, chunks in zip(streams, spent, strict=True):
        imbalance, spread, worst = zip(*stream.groups, strict=True)
        out[stream.size] = {
            "waiting": stream.waiting(),
            "cpu_per_enter_us": sum(chunks) / (len(chunks) * CHUNK) * 1e6,
            "ratio": statistics.median(c / b for c, b in zip(chunks, spent[0], strict=True)),
            "cpu_per_timer_us": stream.timer_cpu / max(stream.timers, 1) * 1e6,
            "on_enter": stream.matched_on_enter / stream.enters,
            "imbalance": statistics.fmean(imbalance),
            "spread": statistics.fmean(spread),
            "worst_ms": statistics.fmean(worst),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--enters", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parties", action="store_true", help="a fifth enter as parties of two")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    rounds: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}
    for seed in range(args.runs):
        for size, result in measure(sizes, args.enters, seed, args.parties).items():
            rounds[size].append(result)
            print(f"# run {seed} size {size}: {result}", flush=True)
    print(
        "| waiting (target / at end) | CPU per enter | vs smallest, same turns "
        "| CPU per timer | groups formed on enter | mean team imbalance (≤ 25-200) "
        "| mean rating spread | mean worst latency in the region |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size in sizes:
        med = {key: statistics.median(r[key] for r in rounds[size]) for key in rounds[size][0]}
        print(
            f"| {size:,} / {med['waiting']:,.0f} | {med['cpu_per_enter_us']:.1f} µs "
            f"| {med['ratio']:.2f}x | {med['cpu_per_timer_us']:.1f} µs "
            f"| {med['on_enter']:.0%} | {med['imbalance']:.1f} | {med['spread']:.0f} "
            f"| {med['worst_ms']:.0f} ms |"
        )


if __name__ == "__main__":
    main()
