"""Time tasktool's core commands on generated task sets against Backlog.md.

Usage: ``python -m tools.bench.tasktool.run [--sizes 1000 10000] [--runs 5]
[--out docs/benchmarks/tasktool-core.md] [--work /tmp/tasktool-bench]``.

Every number is a whole process (interpreter start included): wall time and
peak resident memory (``ru_maxrss`` of the child), median of ``--runs`` runs.
Cold runs delete the parse cache first; warm runs follow a priming run.
Backlog.md (``npm install backlog.md`` under the work directory, outside the
repository) lists the same tasks in its own format, in the same run.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools.bench.tasktool.backlog import install_backlog, write_backlog
from tools.bench.tasktool.generate import generate_tasks, write_tasks
from tools.bench.tasktool.process import ENV, age_files, tasktool_argv


@dataclass
class Measure:
    """Medians of one command: wall seconds, CPU seconds (user + system) and peak MiB."""

    name: str
    size: int
    seconds: float
    cpu: float
    mib: float
    runs: int


_TIME = shutil.which("time", path="/usr/bin:/bin")


def run_once(argv: list[str], cwd: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one whole process.

    GNU ``time`` reports the peak: measured directly, a child of this (large)
    process would inherit its high-water mark through vfork + exec.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        wrapped = [_TIME, "-f", "%U %S %M", "-o", report.name, *argv] if _TIME else argv
        start = time.perf_counter()
        done = subprocess.run(
            wrapped,
            cwd=cwd,
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"{argv} exited {done.returncode}: {done.stderr}")
        if not _TIME:
            return elapsed, float("nan"), float("nan")
        user, system, peak_kib = report.read().split()[-3:]
    return elapsed, float(user) + float(system), int(peak_kib) / 1024


@dataclass
class Job:
    """One command to time: argv, working directory and what to do before each run."""

    name: str
    argv: list[str]
    cwd: Path
    before: Callable[[], None] | None = None


def measure_all(jobs: list[Job], size: int, runs: int) -> list[Measure]:
    """Run the jobs round-robin ``runs`` times, so that a busy spell on the shared machine
    hits every command alike, and return each job's medians."""
    samples: dict[str, list[tuple[float, float, float]]] = {job.name: [] for job in jobs}
    for _ in range(runs):
        for job in jobs:
            if job.before is not None:
                job.before()
            samples[job.name].append(run_once(job.argv, job.cwd))
    results = []
    for job in jobs:
        wall, cpu, peak = (
            statistics.median(column) for column in zip(*samples[job.name], strict=True)
        )
        results.append(Measure(job.name, size, wall, cpu, peak, runs))
    return results


def has_command(name: str, cwd: Path) -> bool:
    done = subprocess.run(
        [*tasktool_argv(), name, "--help"], cwd=cwd, env=ENV, capture_output=True, check=False
    )
    return done.returncode == 0


def bench_size(size: int, work: Path, runs: int, backlog: Path | None) -> list[Measure]:
    """Every measurement at one size."""
    root = work / f"tasktool-{size}"
    shutil.rmtree(root, ignore_errors=True)
    tasks = generate_tasks(size)
    task_dir = write_tasks(tasks, root)
    cache = task_dir / ".tasktool" / "cache"
    tt = tasktool_argv()
    probe = next(task for task in tasks if not task.archived).id
    drop_cache = functools.partial(shutil.rmtree, cache, ignore_errors=True)
    age_files(task_dir)
    jobs = [
        Job("python -c pass (interpreter start)", [sys.executable, "-c", "pass"], root),
        # Cold first in each round: it rebuilds the cache the warm runs then use.
        Job("list --format json, cold", [*tt, "list", "--format", "json"], root, drop_cache),
        Job("list --format json, warm", [*tt, "list", "--format", "json"], root),
        Job("get, warm", [*tt, "get", probe], root),
        Job("set --add-tag, warm", [*tt, "set", probe, "--add-tag", "bench"], root),
    ]
    if has_command("validate", root):
        jobs.append(Job("validate, warm", [*tt, "validate"], root))
    if backlog is not None:
        other = work / f"backlog-{size}"
        shutil.rmtree(other, ignore_errors=True)
        write_backlog(tasks, other)
        jobs.append(
            Job(
                "Backlog.md: backlog task list --plain",
                [str(backlog), "task", "list", "--plain"],
                other,
            )
        )
    run_once([*tt, "list"], root)  # the first run writes the config cache
    return measure_all(jobs, size, runs)


def report(results: list[Measure], backlog_note: str) -> str:
    lines = [
        "# tasktool core: whole-process timings",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs shared with other jobs, "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}, 1-minute load "
        f"average {os.getloadavg()[0]:.1f} at the end. "
        f"Medians of {results[0].runs} runs; peak = max "
        "RSS of the process (GNU time). Wall time depends on how busy the shared machine is; "
        "CPU time much less so.",
        "Generated by `python -m tools.bench.tasktool.run`; task sets from "
        "`python -m tools.bench.tasktool.generate N DIR` (dependencies, phases, tags, "
        "bodies; about 8% archived).",
        "Commands run round-robin (one run of each, repeated), so load spikes hit all alike. "
        "Cold: the parse cache (`<task dir>/.tasktool/cache/`) is deleted before the run; "
        "warm: the cache is current. `get` and `set` run warm; `set` rewrites one file through "
        "ruamel (its import included)."
        + (
            ""
            if any(m.name.startswith("validate") for m in results)
            else " `validate` is not part of this build, so it is not measured."
        ),
        "",
        "| tasks | command | wall (s) | CPU user+sys (s) | peak memory (MiB) |",
        "|---:|---|---:|---:|---:|",
    ]
    lines += [
        f"| {m.size:,} | {m.name} | {m.seconds:.3f} | {m.cpu:.3f} | {m.mib:.0f} |" for m in results
    ]
    lines += ["", "## Against Backlog.md", "", backlog_note]
    for size in sorted({m.size for m in results}):
        ours = {m.name: m for m in results if m.size == size}
        other = ours.get("Backlog.md: backlog task list --plain")
        for kind in ("warm", "cold"):
            mine = ours.get(f"list --format json, {kind}")
            if other and mine:
                lines.append(
                    f"- {size:,} tasks: Backlog.md {other.seconds:.2f} s vs tasktool list "
                    f"({kind}) {mine.seconds:.2f} s: **{other.seconds / mine.seconds:.1f}x** "
                    "faster."
                )
    targets = [m for m in results if m.size == 10_000 and m.name.startswith("list")]
    if targets:
        lines += ["", "## Targets at 10,000 tasks", ""]
        for m in targets:
            limit = 0.4 if "warm" in m.name else 1.5
            verdict = "met" if m.seconds <= limit and m.mib <= 200 else "MISSED"
            cpu = "within" if m.cpu <= limit else "over"
            lines.append(
                f"- {m.name}: {m.seconds:.3f} s wall, {m.cpu:.3f} s CPU ({cpu} the target), "
                f"target {limit} s; {m.mib:.0f} MiB (target 200 MiB): {verdict}"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/tasktool-bench"))
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/tasktool-core.md"))
    parser.add_argument("--no-backlog", action="store_true")
    args = parser.parse_args(argv)
    backlog = None if args.no_backlog else install_backlog(args.work / "npm")
    note = (
        f"Backlog.md {_version(backlog)} from npm, on the same tasks in its format "
        "(`backlog/tasks/task-N - title.md`, archived ones under `backlog/archive/tasks/`), "
        "`backlog task list --plain`. (The design note quotes about 4.3 s for it at 10,000 "
        "tasks; the ratios below come from this run, on the same files and load.)"
        if backlog
        else "Backlog.md could not be installed (`npm install backlog.md` failed)."
    )
    results: list[Measure] = []
    for size in args.sizes:
        batch = bench_size(size, args.work, args.runs, backlog)
        results += batch
        for m in batch:
            print(
                f"{m.size:>6} {m.name:<45} {m.seconds:7.3f} s {m.cpu:7.3f} cpu {m.mib:6.0f} MiB",
                flush=True,
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report(results, note), encoding="utf-8")


def _version(binary: Path | None) -> str:
    if binary is None:
        return ""
    done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip()


if __name__ == "__main__":
    main()
