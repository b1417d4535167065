"""Before/after: the same commands from two versions of the code, on the same tasks, alternating.

Usage: ``python -m tools.bench.tasktool.compare --before REV [--size 10000] [--runs 9]
[--out FILE]``.

``REV``'s ``packages/`` (``git archive``) and the working tree's each get their own
copy of one generated task set, with a warm parse cache. Each round runs every
command once from each version, before then after, so a busy spell on the shared
machine hits both alike. Whole processes with bytecode cached; the report gives
medians of wall and CPU time (user + system) and the after/before ratio. ``--out``
replaces the "Before and after" section of a Markdown file (or appends one).
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.bench.tasktool.generate import generate_tasks, write_tasks
from tools.bench.tasktool.process import ENV, age_files

COMMANDS: dict[str, list[str]] = {
    "list --format json": ["list", "--format", "json"],
    "get": ["get", "005", "--format", "json"],
    "next": ["next", "--format", "json"],
    "validate": ["validate", "--format", "json"],
    "tracks": ["tracks", "--format", "json"],
    "stats": ["stats", "--format", "json"],
    "graph": ["graph", "--format", "json"],
}
HEADING = "## Before and after"
REPO = Path(__file__).resolve().parents[3]


def _source(rev: str, into: Path) -> Path:
    """``rev``'s ``packages/`` under ``into``; returns the ``PYTHONPATH`` of its sources."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "packages"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "packages"


def _pythonpath(packages: Path) -> str:
    trees = [packages / "tasktool" / "src", packages / "common" / "src"]
    for tree in trees:
        compileall.compile_dir(tree, quiet=1)
    return os.pathsep.join(str(tree) for tree in trees)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _once(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):  # validate exits 1 on the generated cycles/warnings
        raise SystemExit(f"{argv} failed: {done.stderr.decode()[-500:]}")
    return wall, _cpu() - cpu


def _medians(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def compare(before: str, size: int, runs: int) -> str:
    """Run the comparison and return its Markdown section."""
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        tasks = generate_tasks(size, 0)
        sides: dict[str, tuple[Path, dict[str, str]]] = {}
        for side, packages in (
            ("before", _source(before, work / "src-before")),
            ("after", REPO / "packages"),
        ):
            directory = work / side
            directory.mkdir()
            subprocess.run(["git", "init", "-q", str(directory)], check=True)
            age_files(write_tasks(tasks, directory))
            sides[side] = (directory, {**ENV, "PYTHONPATH": _pythonpath(packages)})
        argv = [sys.executable, "-m", "tasktool"]
        for directory, env in sides.values():  # warm the parse and config caches
            for command in COMMANDS.values():
                _once([*argv, *command], directory, env)
        samples: dict[tuple[str, str], list[tuple[float, float]]] = {
            (name, side): [] for name in COMMANDS for side in sides
        }
        for _ in range(runs):
            for name, command in COMMANDS.items():
                for side, (directory, env) in sides.items():
                    samples[name, side].append(_once([*argv, *command], directory, env))
    lines = [
        HEADING,
        "",
        f"`python -m tools.bench.tasktool.compare --before {before} --size {size} "
        f"--runs {runs}`: {size:,} tasks, warm cache, medians of {runs} alternating "
        f"whole-process runs; load average {os.getloadavg()[0]:.1f} at the end. "
        f"Before = `{before}`, after = this tree.",
        "",
        "| command | before wall (s) | after wall (s) | after / before | "
        "before CPU (s) | after CPU (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in COMMANDS:
        old_wall, old_cpu = _medians(samples[name, "before"])
        new_wall, new_cpu = _medians(samples[name, "after"])
        lines.append(
            f"| `{name}` | {old_wall:.3f} | {new_wall:.3f} | {new_wall / old_wall:.2f} "
            f"| {old_cpu:.3f} | {new_cpu:.3f} |"
        )
    return "\n".join(lines) + "\n"


def replace_section(path: Path, section: str) -> None:
    """Put ``section`` in place of the file's own one (up to the next ``## ``), or append it."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    start = text.find(HEADING)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section if text else section
    else:
        end = text.find("\n## ", start + len(HEADING))
        text = text[:start] + section + (text[end + 1 :] if end >= 0 else "")
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="git revision to compare against")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--out", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    if shutil.which("git") is None:
        raise SystemExit("git is needed to extract the --before revision")
    section = compare(args.before, args.size, args.runs)
    for path in args.out:
        replace_section(path, section)
    print(section)


if __name__ == "__main__":
    main()
