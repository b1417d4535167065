"""What the data plane's metrics cost per operation, against work the plane already does.

    python tools/bench/matchmaker/observe.py [--runs 7] [--number 200000]

Times, in one process and one run, the observer calls the shell makes (a relayed
message, a refusal, a close, a match with its latency) and, as the baseline, the
encoding of the same relayed message that the plane does anyway
(``event_head``). Prints medians in ns per call and ratios to the baseline, and
writes docs/benchmarks/matchmaker-observe.md.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import timeit
from pathlib import Path

from matchmaker.core.events import MessageRelayed
from matchmaker.data.observer import DataObserver
from matchmaker.data.translate import event_head
from matchmaker.observe.metrics import Metrics

ROOT = Path(__file__).resolve().parents[3]
REPORT = ROOT / "docs" / "benchmarks" / "matchmaker-observe.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--number", type=int, default=200_000)
    args = parser.parse_args()
    observer = DataObserver(Metrics())
    event = MessageRelayed("s1a2b3-7", "c1a2b3-4", {"move": "e4", "clock": 59_800})
    cases = {
        "baseline: event_head(message) (encoding the plane does per relay)": lambda: event_head(
            event
        ),
        "observer.relayed (messages + bytes counters)": lambda: observer.relayed(64, 2),
        "observer.refused (errors by code)": lambda: observer.refused("rate.limited"),
        "observer.closed (disconnects by reason)": lambda: observer.closed(3008),
        "observer.matched + waited (match counter + latency histogram)": lambda: (
            observer.matched("auto"),
            observer.waited("auto", 0.004),
        ),
    }
    medians: dict[str, float] = {}
    for name, call in cases.items():
        runs = timeit.repeat(call, number=args.number, repeat=args.runs)
        medians[name] = statistics.median(runs) / args.number * 1e9
    baseline = next(iter(medians.values()))
    lines = [
        "# matchmaker: the cost of metrics per operation",
        "",
        f"`python tools/bench/matchmaker/observe.py --runs {args.runs} --number {args.number}`"
        f" on Python {platform.python_version()}, {sys.platform}; medians of {args.runs} runs"
        f" of {args.number:,} calls each, in one process. The baseline is the encoding of the"
        " same relayed message that the data plane does for every `session.send` anyway.",
        "",
        "| operation | ns per call (median) | ratio to baseline |",
        "|---|---|---|",
    ]
    for name, ns in medians.items():
        lines.append(f"| {name} | {ns:,.0f} | {ns / baseline:.2f} |")
    report = "\n".join(lines) + "\n"
    print(report)
    REPORT.write_text(report)


if __name__ == "__main__":
    main()
