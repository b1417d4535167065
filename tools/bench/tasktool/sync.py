"""``tasktool sync`` import time against a local GitHub (the test suite's fake tracker).

Usage: ``python -m tools.bench.tasktool.sync [--counts 100 300] [--runs 3] [--out FILE]``

For each size, ``--runs`` times: a fresh repository, a first sync of that many
issues with new tasks written in batches (``CREATE_BATCH``, the default), the
same first sync with batches of one (the baseline, measured in the same run:
one repository lock and one directory scan per new task, as before batching),
and a second, unchanged sync. In-process (``run_sync``), the server on
loopback in a thread; the report gives medians and the baseline ratio.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tasktool.config import Overrides
from tasktool.planning.repository import load_context
from tasktool.sync import configured_sources, engine, run_sync
from tests.tasktool.sync.trackers import FakeGitHub, Served, Workspace, github_entry


def _sync(workspace: Workspace) -> float:
    repo = load_context(
        Overrides(config=str(workspace.root / ".tasktool.yaml")),
        cwd=workspace.root,
        env=workspace.env,
    )
    start = time.perf_counter()
    report = run_sync(repo, configured_sources(repo), env=workspace.env)
    elapsed = time.perf_counter() - start
    if report.totals()["errors"]:
        raise SystemExit(f"sync failed: {report.as_data()}")
    return elapsed


def _first(url: str, batch: int) -> tuple[float, Workspace]:
    workspace = Workspace(Path(tempfile.mkdtemp(prefix="tt-sync-bench-")) / "repo")
    workspace.configure(github_entry(url))
    default = engine.CREATE_BATCH
    engine.CREATE_BATCH = batch
    try:
        return _sync(workspace), workspace
    finally:
        engine.CREATE_BATCH = default


def measure(count: int, runs: int) -> dict[str, list[float]]:
    tracker = FakeGitHub("acme/widgets")
    tracker.page_size = 100
    for number in range(1, count + 1):
        tracker.add(number, f"Issue number {number}", labels=["bug", "area/sync"])
    served = Served(tracker)
    times: dict[str, list[float]] = {"batched": [], "baseline": [], "unchanged": []}
    try:
        for _ in range(runs):  # alternating, so that machine load hits both alike
            elapsed, workspace = _first(tracker.url, engine.CREATE_BATCH)
            times["batched"].append(elapsed)
            times["unchanged"].append(_sync(workspace))
            times["baseline"].append(_first(tracker.url, 1)[0])
    finally:
        served.stop()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--counts", type=int, nargs="+", default=[100, 300])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    lines = [
        "| issues | first sync, batched | first sync, one scan per task (baseline) | ratio | "
        "second sync, unchanged |",
        "|---:|---:|---:|---:|---:|",
    ]
    for count in args.counts:
        times = measure(count, args.runs)
        batched, baseline, unchanged = (
            statistics.median(times[key]) for key in ("batched", "baseline", "unchanged")
        )
        lines.append(
            f"| {count} | {batched:.2f} s | {baseline:.2f} s | {baseline / batched:.1f}x | "
            f"{unchanged:.2f} s |"
        )
        print(count, {key: [round(value, 3) for value in found] for key, found in times.items()})
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
