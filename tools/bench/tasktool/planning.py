"""Whole-process timings of the planning commands on generated task sets.

Usage: ``python -m tools.bench.tasktool.planning [--counts 1000 10000] [--runs 7] [--out FILE]``

For each size: generate the tasks (``tools.bench.tasktool.generate``) in a
fresh git repository, run each command once to warm the parse cache, then
time ``--runs`` whole-process runs of ``next``, ``validate``, ``tracks``,
``stats``, ``board`` and ``graph``. Baselines measured in the same run:
``tasktool --version`` (interpreter and CLI start-up) and ``tasktool list
--limit 1`` (start-up plus loading config and tasks). The report gives medians,
CPU time (user + system, less sensitive to other load on the machine), the
ratio to the load baseline, and the in-process time of the pure core
function behind each command.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tools.bench.tasktool.generate import generate_tasks, write_tasks
from tools.bench.tasktool.process import ENV, age_files, tasktool_argv

COMMANDS: dict[str, list[str]] = {
    "next": ["next", "--format", "json"],
    "validate": ["validate", "--format", "json"],
    "tracks": ["tracks", "--format", "json"],
    "stats": ["stats", "--format", "json"],
    "board": ["board", "--group-by", "status", "--format", "json"],
    "graph": ["graph", "--format", "json"],
}
BUDGETS = {"next": 0.5, "validate": 0.6}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: list[str], cwd: Path, runs: int) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of ``runs`` runs."""
    walls, cpus = [], []
    for _ in range(runs):
        cpu, start = _cpu(), time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, check=False)
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{argv} failed: {done.stderr.decode()[-500:]}")
    return statistics.median(walls), statistics.median(cpus)


def _core(directory: Path, runs: int) -> dict[str, float]:
    """Median in-process time of each pure function on the loaded tasks."""
    from tasktool.planning.board import build_board
    from tasktool.planning.checks import check_tasks
    from tasktool.planning.ranking import rank_next
    from tasktool.planning.repository import load_context
    from tasktool.planning.stats import compute_stats
    from tasktool.planning.tracks import plan_tracks
    from tasktool.present.graph_render import select_graph

    repo = load_context(cwd=directory, env={"HOME": str(directory)})
    tasks, config = repo.all_tasks, repo.config
    calls: dict[str, Callable[[], object]] = {
        "next": lambda: rank_next(tasks, config),
        "validate": lambda: check_tasks(tasks, config),
        "tracks": lambda: plan_tracks(tasks, config),
        "stats": lambda: compute_stats(tasks, config),
        "board": lambda: build_board(tasks, config, "status"),
        "graph": lambda: select_graph(tasks),
    }
    timings = {}
    for name, call in calls.items():
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            call()
            samples.append(time.perf_counter() - start)
        timings[name] = statistics.median(samples)
    return timings


def run(counts: list[int], runs: int) -> str:
    tool = tasktool_argv()
    lines = [
        "# tasktool planning commands: benchmark",
        "",
        f"Machine: {os.cpu_count()} cores (shared; load average {os.getloadavg()[0]:.1f} "
        f"at the start), Python {sys.version.split()[0]}. "
        f"Median of {runs} whole-process runs, warm parse cache, generated task sets "
        "(`tools/bench/tasktool/generate.py`, seed 0), bytecode cached. Baseline: "
        "`tasktool --version` and `tasktool list --limit 1` (start-up plus loading the "
        "tasks) in the same run. Core: median in-process time of the pure function.",
        "",
    ]
    for count in counts:
        with tempfile.TemporaryDirectory() as temporary:
            directory = Path(temporary)
            subprocess.run(["git", "init", "-q", str(directory)], check=True)
            age_files(write_tasks(generate_tasks(count, 0), directory))
            for argv in COMMANDS.values():
                subprocess.run(
                    [*tool, *argv], cwd=directory, env=ENV, capture_output=True, check=False
                )
            startup, _ = _time([*tool, "--version"], directory, runs)
            listing = [*tool, "list", "--limit", "1", "--format", "json"]
            baseline, baseline_cpu = _time(listing, directory, runs)
            core = _core(directory, runs)
            lines += [
                f"## {count} tasks",
                "",
                f"Baselines: `tasktool --version` {startup * 1000:.0f} ms; "
                f"`tasktool list --limit 1` {baseline * 1000:.0f} ms "
                f"(CPU {baseline_cpu * 1000:.0f} ms).",
                "",
                "| command | wall (ms) | CPU (ms) | wall x list | core (ms) | budget (wall) |",
                "|---|---:|---:|---:|---:|---|",
            ]
            for name, argv in COMMANDS.items():
                median, cpu = _time([*tool, *argv], directory, runs)
                budget = BUDGETS.get(name)
                verdict = ""
                if budget is not None and count >= 10_000:
                    verdict = f"≤ {budget * 1000:.0f} ms: {'met' if median <= budget else 'MISSED'}"
                lines.append(
                    f"| `{name}` | {median * 1000:.0f} | {cpu * 1000:.0f} "
                    f"| {median / baseline:.2f} | {core[name] * 1000:.0f} | {verdict} |"
                )
            lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/tasktool-planning.md"))
    args = parser.parse_args(argv)
    report = run(args.counts, args.runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
