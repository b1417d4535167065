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
from tools.bench.tasktool.generate import generate_tasks, write_sources, write_tasks
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


def run_once(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, float]:
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
            env=env or ENV,
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
    env: dict[str, str] | None = None


def measure_all(jobs: list[Job], size: int, runs: int) -> list[Measure]:
    """Run the jobs round-robin ``runs`` times, so that a busy spell on the shared machine
    hits every command alike, and return each job's medians."""
    samples: dict[str, list[tuple[float, float, float]]] = {job.name: [] for job in jobs}
    for _ in range(runs):
        for job in jobs:
            if job.before is not None:
                job.before()
            samples[job.name].append(run_once(job.argv, job.cwd, job.env))
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


def _change_one(path: Path) -> Callable[[], None]:
    """Before a run: rewrite ``path`` with other contents (one changed file among many),
    dated in the past so that it is cached again like any settled file."""
    original = path.read_text(encoding="utf-8")
    flip = [False]

    def change() -> None:
        flip[0] = not flip[0]
        path.write_text(original + ("\nchanged\n" if flip[0] else ""), encoding="utf-8")
        past = time.time() - 3600
        os.utime(path, (past, past))

    return change


def _run_first(argv: list[str], cwd: Path, env: dict[str, str] | None) -> Callable[[], None]:
    """Before a run: the same command once, untimed."""

    def run() -> None:
        run_once(argv, cwd, env)

    return run


def _tasktool_jobs(
    label: str,
    tt: list[str],
    *,
    root: Path,
    probe: str,
    drop_cache: Callable[[], None],
    changed: Path,
    env: dict[str, str] | None = None,
) -> list[Job]:
    warm = [("next", ["next"]), ("board", ["board"]), ("stats", ["stats"])]
    # Issue 44: every read command, output piped (list: the default table).
    more = [
        ("list (table)", ["list"]),
        ("graph", ["graph"]),
        ("tracks", ["tracks"]),
        ("search 'parser cache'", ["search", "parser cache"]),
        ("tags", ["tags"]),
        ("todos", ["todos"]),
        # The issue's `get 05000`: a number that names its task but for leading zeros.
        ("get, bare number", ["get", f"0{probe}" if probe.isdigit() else probe]),
    ]
    # get's index of ids is kept like what these derive (the first get after a change,
    # "get, warm" below, builds it).
    derived = [*warm, ("validate", ["validate"]), ("get", ["get", probe]), *more]
    return [
        # Cold first in each round: it rebuilds the cache the warm runs then use.
        Job(
            f"{label}list --format json, cold",
            [*tt, "list", "--format", "json"],
            root,
            drop_cache,
            env,
        ),
        # Issue 44's cold `list`: the default table, piped.
        Job(f"{label}list (table), cold", [*tt, "list"], root, drop_cache, env),
        Job(f"{label}list --format json, warm", [*tt, "list", "--format", "json"], root, None, env),
        Job(
            f"{label}list --format json, one file changed",
            [*tt, "list", "--format", "json"],
            root,
            _change_one(changed),
            env,
        ),
        Job(f"{label}get, warm", [*tt, "get", probe], root, None, env),
        # Reads every task's body (the words are in most titles and bodies).
        Job(f"{label}search, warm", [*tt, "search", "flaky api", "--archived"], root, None, env),
        *(Job(f"{label}{name}, warm", [*tt, *argv], root, None, env) for name, argv in warm),
        Job(f"{label}validate, warm", [*tt, "validate"], root, None, env),
        *(Job(f"{label}{name}, warm", [*tt, *argv], root, None, env) for name, argv in more),
        # The same command run just before, nothing changed since: what it derives from
        # the tasks may be remembered (the first run after a change above computes it).
        *(
            Job(
                f"{label}{name}, repeated",
                [*tt, *argv],
                root,
                _run_first([*tt, *argv], root, env),
                env,
            )
            for name, argv in derived
        ),
    ]


def bench_size(
    size: int,
    work: Path,
    runs: int,
    backlog: Path | None,
    baseline: Path | None = None,
    *,
    only: tuple[str, ...] = (),
) -> list[Measure]:
    """Every measurement at one size (with ``baseline``: the same commands run from that
    tasktool source tree too, round-robin with ours, for a before/after in one run; with
    ``only``: just the commands whose names start with one of these)."""
    root = work / f"tasktool-{size}"
    shutil.rmtree(root, ignore_errors=True)
    tasks = generate_tasks(size)
    task_dir = write_tasks(tasks, root)
    write_sources(root)
    cache = task_dir / ".tasktool" / "cache"
    tt = tasktool_argv()
    probe = next(task for task in tasks if not task.archived).id
    drop_cache = functools.partial(shutil.rmtree, cache, ignore_errors=True)
    changed = next(path for path in sorted(task_dir.rglob("*.md")) if path.is_file())
    age_files(task_dir)
    jobs = [
        Job("python -c pass (interpreter start)", [sys.executable, "-c", "pass"], root),
        *_tasktool_jobs("", tt, root=root, probe=probe, drop_cache=drop_cache, changed=changed),
        Job("set --add-tag, warm", [*tt, "set", probe, "--add-tag", "bench"], root),
    ]
    if baseline is not None:
        # Its own copy of the files: the two versions' caches must not evict each other.
        base_root = work / f"baseline-{size}"
        shutil.rmtree(base_root, ignore_errors=True)
        base_dir = write_tasks(tasks, base_root)
        write_sources(base_root)
        age_files(base_dir)
        base_changed = base_dir / changed.relative_to(task_dir)
        env = {**ENV, "PYTHONPATH": str(baseline)}
        base_drop = functools.partial(
            shutil.rmtree, base_dir / ".tasktool" / "cache", ignore_errors=True
        )
        jobs += _tasktool_jobs(
            "baseline: ",
            [sys.executable, "-m", "tasktool"],
            root=base_root,
            probe=probe,
            drop_cache=base_drop,
            changed=base_changed,
            env=env,
        )
        run_once([sys.executable, "-m", "tasktool", "list"], base_root, env)
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
    if only:
        jobs = [job for job in jobs if job.name.removeprefix("baseline: ").startswith(only)]
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
    lines += _against_baseline(results)
    lines += _targets(results, "issue 21", TARGETS)
    lines += _targets(
        results, "issue 44: the same command run again, as hyperfine does", TARGETS_44
    )
    return "\n".join(lines) + "\n"


#: The issue's targets: (command, size) -> (seconds, MiB or None).
TARGETS: dict[tuple[str, int], tuple[float, float | None]] = {
    ("list --format json, warm", 10_000): (0.12, None),
    ("list --format json, warm", 100_000): (1.0, 200.0),
    ("list --format json, cold", 10_000): (0.8, None),
    ("list --format json, cold", 100_000): (5.0, None),
    **{(f"{name}, warm", 10_000): (0.2, None) for name in ("next", "validate", "board", "stats")},
    **{(f"{name}, warm", 100_000): (1.2, None) for name in ("next", "validate", "board", "stats")},
    **{
        (f"{name}, repeated", size): (limit, None)
        for name in ("next", "validate", "board", "stats")
        for size, limit in ((10_000, 0.2), (100_000, 1.2))
    },
    **{(f"get, {kind}", 10_000): (0.1, None) for kind in ("warm", "repeated")},
    **{(f"get, {kind}", 100_000): (0.3, None) for kind in ("warm", "repeated")},
    ("list --format json, one file changed", 100_000): (1.1, None),
}


#: Issue 44's targets at 100,000 tasks, warm in hyperfine's sense (the command run again,
#: the cache current), output piped: every read command ≤ 0.5 s, ``list``, ``next``,
#: ``get`` and ``stats`` ≤ 0.3 s, peak ≤ 200 MiB; ``list`` cold ≤ 2 s (the issue's
#: ``list``: the default table, piped; ``list --format json`` cold is timed beside it).
TARGETS_44: dict[tuple[str, int], tuple[float, float | None]] = {
    **{
        (f"{name}, repeated", 100_000): (
            0.3 if name in {"list (table)", "next", "get", "get, bare number", "stats"} else 0.5,
            200.0,
        )
        for name in (
            "list (table)",
            "next",
            "get",
            "stats",
            "board",
            "validate",
            "graph",
            "tracks",
            "search 'parser cache'",
            "tags",
            "todos",
            "get, bare number",
        )
    },
    ("list (table), cold", 100_000): (2.0, None),
}


def _against_baseline(results: list[Measure]) -> list[str]:
    """Each command against the baseline's same command in the same run (``--baseline``):
    medians and their ratios (below 1: this code is faster)."""
    found = {(m.name, m.size): m for m in results}
    pairs = [
        (m, base)
        for m in results
        if not m.name.startswith("baseline: ")
        and (base := found.get((f"baseline: {m.name}", m.size))) is not None
    ]
    if not pairs:
        return []
    lines = [
        "",
        "## Against the baseline (same run)",
        "",
        "| tasks | command | CPU / baseline (s) | CPU ratio | wall / baseline (s) | wall ratio "
        "| peak / baseline (MiB) |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for m, base in pairs:
        cpu_ratio = f"{m.cpu / base.cpu:.2f}" if base.cpu else "-"
        lines.append(
            f"| {m.size:,} | {m.name} | {m.cpu:.2f} / {base.cpu:.2f} | {cpu_ratio} | "
            f"{m.seconds:.3f} / {base.seconds:.3f} | {m.seconds / base.seconds:.2f} | "
            f"{m.mib:.0f} / {base.mib:.0f} |"
        )
    return lines


def _targets(
    results: list[Measure],
    issue: str,
    targets: dict[tuple[str, int], tuple[float, float | None]],
) -> list[str]:
    """Each target against the measured median (wall and CPU), with the baseline's when
    there is one, and the time per task."""
    found = {(m.name, m.size): m for m in results}
    lines = [
        "",
        f"## Targets ({issue})",
        "",
        "| tasks | command | target | wall (s) | CPU (s) | µs/task (CPU) | peak MiB "
        "| baseline wall (s) | baseline MiB | verdict |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for (name, size), (limit, mib) in targets.items():
        m = found.get((name, size))
        if m is None:
            continue
        base = found.get((f"baseline: {name}", size))
        met = m.seconds <= limit and (mib is None or m.mib <= mib)
        cpu_met = m.cpu <= limit and (mib is None or m.mib <= mib)
        verdict = "met" if met else ("met on CPU, not wall" if cpu_met else "MISSED")
        memory = f" ≤ {mib:.0f} MiB" if mib else ""
        lines.append(
            f"| {size:,} | {name} | ≤ {limit} s{memory} | {m.seconds:.3f} | {m.cpu:.3f} | "
            f"{m.cpu / size * 1e6:.1f} | {m.mib:.0f} | "
            + (f"{base.seconds:.3f} | {base.mib:.0f}" if base else "- | -")
            + f" | {verdict} |"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/tasktool-bench"))
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/tasktool-core.md"))
    parser.add_argument("--no-backlog", action="store_true")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="A tasktool source tree (its src/ folder) to run as the 'before' in the same run.",
    )
    parser.add_argument(
        "--backlog-sizes",
        type=int,
        nargs="*",
        default=None,
        help="Sizes at which Backlog.md runs too (default: every size).",
    )
    parser.add_argument(
        "--only",
        nargs="*",
        default=[],
        help="Only the commands whose names start with these (e.g. 'list' 'get'), so that "
        "one size's run stays short.",
    )
    args = parser.parse_args(argv)
    backlog = None if args.no_backlog else install_backlog(args.work / "npm")
    note = (
        f"Backlog.md {_version(backlog)} from npm, on the same tasks in its format "
        "(`backlog/tasks/task-N - title.md`, archived ones under `backlog/archive/tasks/`), "
        "`backlog task list --plain`. (The design note quotes about 4.3 s for it at 10,000 "
        "tasks; the ratios below come from this run, on the same files and load.)"
        if backlog
        else "Backlog.md not run (`--no-backlog`)."
        if args.no_backlog
        else "Backlog.md could not be installed (`npm install backlog.md` failed)."
    )
    results: list[Measure] = []
    for size in args.sizes:
        peer = backlog if args.backlog_sizes is None or size in args.backlog_sizes else None
        batch = bench_size(size, args.work, args.runs, peer, args.baseline, only=tuple(args.only))
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
