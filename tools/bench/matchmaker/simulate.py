"""``matchmaker simulate`` on 100,000 arrivals: wall time of the command, and where it goes.

    python tools/bench/matchmaker/simulate.py [--arrivals 100000] [--runs 3]

Writes a generated trace (one arrival every 10 ms, so 1,000 simulated seconds;
ratings normal around 1500, sd 300) and a policy (pairs, ``{"within": 25,
"widen": {"everyMs": 2000, "by": 25, "max": 400}}``: a narrow window, so most
entries wait and widen, the costlier case), then per run:

- the whole command in a fresh process (``matchmaker simulate --format json
  --report``): what a designer waits for, interpreter start included;
- in-process, each phase: parsing and checking the trace, replaying it through
  the core (``matchmaker.simulate.run.replay``), the figures, the HTML report.

Reported: the median over ``--runs`` of each, and the simulated seconds replayed
per wall second. The issue's budget is 30 s for 100,000 arrivals.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from matchmaker.config import Limits
from matchmaker.simulate.files import read_policy, read_trace
from matchmaker.simulate.report import render_report
from matchmaker.simulate.run import replay
from matchmaker.simulate.stats import summarize, to_json

POLICY = {
    "name": "ranked",
    "mode": "auto",
    "groupSize": 2,
    "filter": {"rating": {"within": 25, "widen": {"everyMs": 2000, "by": 25, "max": 400}}},
}
EVERY_MS = 10


def write_inputs(folder: Path, count: int) -> tuple[Path, Path]:
    rng = random.Random(1)
    arrivals = folder / "arrivals.jsonl"
    with arrivals.open("w", encoding="utf-8") as out:
        for i in range(count):
            rating = round(rng.gauss(1500, 300))
            out.write(json.dumps({"at_ms": i * EVERY_MS, "attributes": {"rating": rating}}) + "\n")
    policy = folder / "policy.json"
    policy.write_text(json.dumps(POLICY), encoding="utf-8")
    return policy, arrivals


def command_s(policy: Path, arrivals: Path, report: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "matchmaker", "simulate", "--policy", str(policy),
         "--arrivals", str(arrivals), "--report", str(report)],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - started


def phases_s(policy_path: Path, arrivals: Path) -> dict[str, float]:
    limits = Limits()
    policy = read_policy(str(policy_path), limits)
    times: dict[str, float] = {}
    started = time.perf_counter()
    trace = read_trace(str(arrivals))
    times["parse"] = time.perf_counter() - started
    started = time.perf_counter()
    outcome = replay(policy, trace, limits)
    times["replay"] = time.perf_counter() - started
    started = time.perf_counter()
    summary = summarize(policy.name, policy, trace, outcome)
    json.dumps(to_json([summary]))
    times["figures"] = time.perf_counter() - started
    started = time.perf_counter()
    render_report([summary])
    times["report"] = time.perf_counter() - started
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arrivals", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        policy, arrivals = write_inputs(Path(folder), args.arrivals)
        whole: list[float] = []
        phases: list[dict[str, float]] = []
        for run in range(args.runs):
            whole.append(command_s(policy, arrivals, Path(folder) / "report.html"))
            phases.append(phases_s(policy, arrivals))
            print(f"# run {run}: command {whole[-1]:.2f} s, phases {phases[-1]}", flush=True)
    simulated_s = args.arrivals * EVERY_MS / 1000
    median = statistics.median(whole)
    print(f"arrivals: {args.arrivals:,} ({simulated_s:,.0f} simulated s)")
    print(f"command, wall (median of {args.runs}): {median:.2f} s (budget 30 s)")
    for phase in phases[0]:
        print(f"  {phase}: {statistics.median(p[phase] for p in phases):.2f} s")
    print(f"simulated seconds per wall second: {simulated_s / median:,.0f}")


if __name__ == "__main__":
    main()
