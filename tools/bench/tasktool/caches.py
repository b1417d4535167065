"""What each of tasktool's caches saves: the same command with the cache and with it blocked.

Usage: ``python -m tools.bench.tasktool.caches [--size 10000] [--runs 3] [--rev REV]
``.

The repositories of :mod:`tools.bench.tasktool.worktrees` (one worktree, and one with two
sibling worktrees), warm. A cache is blocked by putting a directory where its file goes
(or a file where its folder goes): reading it fails, writing it fails, so each run does
the work the cache spares it, as a run without that cache would (plus a failed write).
Each round runs every case with the cache and then without, so the machine's load hits
both alike; the report gives medians of whole-process wall and CPU time and their ratio.
``--rev`` measures a git revision's ``packages/`` instead of the working tree's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tools.bench.tasktool.compare import REPO, _once, _pythonpath, _source
from tools.bench.tasktool.process import ENV
from tools.bench.tasktool.worktrees import build

HEADING = "## What each cache saves"
#: ``get`` without the columns of ids: the full path (every task decoded, ``by_id``, the
#: graph), in a process of its own as the CLI's ``get`` would run it.
_FULL_GET = (
    "from tasktool.planning.repository import load_context\n"
    "from tasktool.present.documents import task_detail\n"
    "repo = load_context()\n"
    "task_detail(repo, repo.get('005'))\n"
)
_INDEXED_GET = (
    "from tasktool.planning.repository import load_context\n"
    "from tasktool.present.documents import get_document\n"
    "get_document(load_context(), '005')\n"
)


@dataclass(frozen=True)
class Case:
    """One command, run in ``where``, with ``blocked`` (paths relative to its task
    directory's state folder, globs allowed) blocked in both variants and ``cache`` blocked
    in the second; or, with ``without``, another command for the second variant."""

    name: str
    where: str
    argv: list[str]
    cache: list[str]
    blocked: tuple[str, ...] = ()
    without: list[str] | None = None


CASES = [
    Case("parse cache (`list --format json`)", "single", ["list", "--format", "json"],
         ["cache"], ("output",)),
    Case("output memo (`list --format json`)", "single", ["list", "--format", "json"],
         ["output"]),
    Case("derived memo (`next`)", "single", ["next", "--format", "json"],
         ["derived-next.msgpack"]),
    Case("derived memo (`stats`)", "single", ["stats", "--format", "json"],
         ["derived-stats.msgpack"]),
    Case("derived memo (`validate`)", "single", ["validate", "--format", "json"],
         ["derived-validate.msgpack"]),
    Case("id columns kept (`get`)", "single", ["get", "005", "--format", "json"],
         ["cache/rows-*.ids.msgpack"]),
    Case("get from the columns vs every task decoded", "single", ["-c", _INDEXED_GET], [],
         without=["-c", _FULL_GET]),
    Case("overlay memo (unified `list --format json`)", "multi", ["list", "--format", "json"],
         ["overlay.msgpack"], ("output",)),
    Case("sibling indexes (unified `list --format json`)", "multi",
         ["list", "--format", "json"], ["worktrees"], ("output", "overlay.msgpack")),
]  # fmt: skip


@contextmanager
def _blocking(state: Path, patterns: list[str] | tuple[str, ...]) -> Iterator[None]:
    """Each path under ``state`` matching ``patterns`` replaced by its opposite (a folder
    by a file, a file by a folder), then put back."""
    moved: list[tuple[Path, Path]] = []
    state.mkdir(parents=True, exist_ok=True)
    for pattern in patterns:
        for path in sorted(state.glob(pattern)) or [state / pattern]:
            aside = path.with_name(path.name + ".aside")
            folder = path.is_dir() or path.name in ("cache", "output", "worktrees")
            if path.exists():
                path.rename(aside)
                moved.append((path, aside))
            if folder:
                path.write_bytes(b"")
            else:
                path.mkdir()
    try:
        yield
    finally:
        for pattern in patterns:
            for path in state.glob(pattern):
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        for path, aside in moved:
            aside.rename(path)


def _run(case: Case, cwd: Path, env: dict[str, str], *, cached: bool) -> tuple[float, float]:
    state = cwd / "tasks" / ".tasktool"
    python = [sys.executable] if case.argv[0] == "-c" else [sys.executable, "-m", "tasktool"]
    argv = case.argv if cached or case.without is None else case.without
    blocked = [*case.blocked, *([] if cached else case.cache)]
    with _blocking(state, blocked):
        return _once([*python, *argv], cwd, env)


def measure(rev: str | None, size: int, runs: int) -> str:
    """Run every case and return the Markdown section."""
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        packages = _source(rev, work / "src") if rev else REPO / "packages"
        env = {**ENV, "PYTHONPATH": _pythonpath(packages)}
        variants = build(work / "repos", size)
        where = {"single": variants["single worktree (baseline)"][0]}
        where["multi"] = variants["3 worktrees, unified (overlay)"][0]
        for case in CASES:  # warm every cache
            _run(case, where[case.where], env, cached=True)
            _run(case, where[case.where], env, cached=True)
        samples: dict[tuple[str, bool], list[tuple[float, float]]] = {}
        for _ in range(runs):
            for case in CASES:
                for cached in (True, False):
                    found = _run(case, where[case.where], env, cached=cached)
                    samples.setdefault((case.name, cached), []).append(found)
    lines = [
        HEADING,
        "",
        f"`python -m tools.bench.tasktool.caches --size {size} --runs {runs}"
        f"{f' --rev {rev}' if rev else ''}`: {size:,} tasks, medians of {runs} rounds, each "
        "case run with its cache and then with it blocked; load average "
        f"{os.getloadavg()[0]:.1f} at the end.",
        "",
        "| cache | with: wall (s) | without: wall (s) | without / with | "
        "with: CPU (s) | without: CPU (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for case in CASES:
        with_wall = statistics.median(w for w, _ in samples[case.name, True])
        with_cpu = statistics.median(c for _, c in samples[case.name, True])
        out_wall = statistics.median(w for w, _ in samples[case.name, False])
        out_cpu = statistics.median(c for _, c in samples[case.name, False])
        lines.append(
            f"| {case.name} | {with_wall:.3f} | {out_wall:.3f} | {out_wall / with_wall:.2f} "
            f"| {with_cpu:.3f} | {out_cpu:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rev", help="git revision to measure instead of the working tree")
    args = parser.parse_args(argv)
    print(measure(args.rev, args.size, args.runs))


if __name__ == "__main__":
    main()
