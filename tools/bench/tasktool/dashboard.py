"""The dashboard at scale, before and after, in one run: page bytes, elements and load time in
Chromium, and the JSON API's answer time.

Usage: ``python -m tools.bench.tasktool.dashboard --before REV [--sizes 10000 100000]
[--repo 100000=/work/bench-100k] [--runs 5] [--before-page-runs 1] [--out FILE]``.

For each size, one repository (generated with ``tools.bench.tasktool.generate``, or
a copy of the ``--repo`` given for that size) is served by two real
``tasktool web start`` processes on loopback: ``REV``'s ``packages/`` (``git
archive``) and this working tree's. Both are warmed (every page and request
once), then each round requests everything from each side in turn, so a busy
spell on the shared machine hits both alike. Pages are loaded in Debian's
Chromium (Playwright, a fresh context per load, ``load`` event): wall time to the
event, elements in the document (``getElementsByTagName('*')``) and the HTML's
bytes. API requests are timed over one keep-alive connection (httpx). The
report gives medians and the after / before ratio of each, against the issue's
targets. Two rows see past what the dashboard remembers: a list filtered by
another word each round, and the table page loaded right after a task file
changed (the repository loads again). ``--before-page-runs`` bounds the before
side's page loads, which take minutes at 100,000 tasks.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tools.bench.tasktool.compare import REPO, _pythonpath, _source
from tools.bench.tasktool.generate import generate_tasks, write_tasks
from tools.bench.tasktool.process import ENV, age_files

PAGES = ("/", "/board", "/graph")
REQUESTS = (
    "/api/tasks",
    "/api/tasks?offset=5000&limit=100",
    "/api/tasks?filter=status=pending",
    "/api/board",
    "/api/graph",
)
#: Asked with another word each round, so no answer can come from a remembered list.
FIRST_ASK = "/api/tasks?filter=title~{word}"
WORDS = ("cache", "login", "search", "billing", "sync", "audit", "keys", "mode", "split")
#: Loaded right after a task file changed (the repository loads again).
CHANGED = "/ after a task file changed"
SETTLE_S = 1.0
PAGE_SECONDS, PAGE_ELEMENTS, API_SECONDS = 2.0, 5_000, 0.3
#: The issue's targets are for this many tasks, warm; smaller sizes must not get slower.
TARGET_SIZE = 100_000
HEADING = "## Dashboard at scale"


@dataclass
class Side:
    """One version's server and what was measured of it."""

    name: str
    url: str
    process: subprocess.Popen[str]
    loads: dict[str, list[float]] = field(default_factory=dict)
    elements: dict[str, int] = field(default_factory=dict)
    bytes: dict[str, int] = field(default_factory=dict)
    answers: dict[str, list[float]] = field(default_factory=dict)


@contextmanager
def serving(name: str, repo: Path, pythonpath: str) -> Iterator[Side]:
    """``tasktool web start --port 0`` of one version in ``repo``; stopped on the way out."""
    env = {**ENV, "PYTHONPATH": pythonpath}
    argv = [sys.executable, "-m", "tasktool", "web", "start", "--port", "0", "--no-open"]
    process = subprocess.Popen(argv, cwd=repo, env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        for line in process.stderr:
            found = re.search(r"dashboard on (http://\S+?)/?;", line)
            if found:
                break
        else:
            raise SystemExit(f"{name}'s dashboard did not start")
        # Keep reading what it says, so a full pipe never stops the server.
        threading.Thread(target=process.stderr.read, daemon=True).start()
        yield Side(name, found.group(1), process)
    finally:
        process.terminate()
        process.wait(30)


def _load(browser: Any, url: str) -> tuple[float, int]:
    """Seconds to the ``load`` event of ``url`` in a fresh context, and its elements."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(600_000)
    start = time.perf_counter()
    page.goto(url, wait_until="load")
    elapsed = time.perf_counter() - start
    elements = int(page.evaluate("document.getElementsByTagName('*').length"))
    context.close()
    return elapsed, elements


def _answer(client: httpx.Client, url: str) -> tuple[float, int]:
    start = time.perf_counter()
    answer = client.get(url)
    elapsed = time.perf_counter() - start
    answer.raise_for_status()
    return elapsed, len(answer.content)


def _touch(repo: Path, round_number: int) -> None:
    """Change one task file's text (its title keeps), then give the watcher time to see it."""
    path = min((repo / "tasks").rglob("*.md"))
    text = path.read_text(encoding="utf-8").rstrip("\n")
    path.write_text(text + f"\n\nround {round_number}\n", encoding="utf-8")
    time.sleep(SETTLE_S)


def measure(sides: list[Side], browser: Any, repo: Path, runs: int, before_page_runs: int) -> None:
    """Warm both, then ``runs`` alternating rounds of every page and request."""
    clients = {side.name: httpx.Client(timeout=900) for side in sides}
    for side in sides:
        for path in (*PAGES, *REQUESTS):
            _, size = _answer(clients[side.name], side.url + path)
            if path in PAGES:
                side.bytes[path] = size
    for round_number in range(runs):
        for path in PAGES:
            for side in sides:
                if side.name == "before" and round_number >= before_page_runs:
                    continue
                elapsed, elements = _load(browser, side.url + path)
                side.loads.setdefault(path, []).append(elapsed)
                side.elements[path] = elements
        for path in REQUESTS:
            for side in sides:
                elapsed, _ = _answer(clients[side.name], side.url + path)
                side.answers.setdefault(path, []).append(elapsed)
        asked = FIRST_ASK.format(word=WORDS[round_number % len(WORDS)])
        for side in sides:
            elapsed, _ = _answer(clients[side.name], side.url + asked)
            side.answers.setdefault(FIRST_ASK, []).append(elapsed)
        _touch(repo, round_number)
        for side in sides:
            if side.name == "before" and round_number >= before_page_runs:
                continue
            elapsed, elements = _load(browser, side.url + "/")
            side.loads.setdefault(CHANGED, []).append(elapsed)
            side.elements[CHANGED] = elements
            side.bytes[CHANGED] = side.bytes["/"]
    for client in clients.values():
        client.close()


def _repository(size: int, given: Path | None, work: Path) -> Path:
    """A repository of ``size`` tasks of the bench's own: a copy of ``given`` (one of its
    files changes each round), else generated."""
    directory = work / f"repo-{size}"
    if given is not None:
        shutil.copytree(given, directory, symlinks=True)
        return directory
    directory.mkdir()
    subprocess.run(["git", "init", "-q", str(directory)], check=True)
    age_files(write_tasks(generate_tasks(size, 0), directory))
    return directory


def _met(value: float, target: float) -> str:
    return "yes" if value <= target else "no"


def report(size: int, before: Side, after: Side, runs: int, before_page_runs: int) -> list[str]:
    med = statistics.median
    lines = [
        f"**{size:,} tasks.** Pages: medians of {runs} loads after, "
        f"{min(runs, before_page_runs)} before; requests: medians of {runs}.",
        "",
        "| page | before bytes | after bytes | before elements | after elements "
        "| before load (s) | after load (s) | after / before | target | met |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for path in (*PAGES, CHANGED):
        old, new = med(before.loads[path]), med(after.loads[path])
        elements = after.elements[path]
        label = path if path == CHANGED else f"`{path}`"
        lines.append(
            f"| {label} | {before.bytes[path]:,} | {after.bytes[path]:,} "
            f"| {before.elements[path]:,} | {elements:,} | {old:.3f} | {new:.3f} "
            f"| {new / old:.3f} | "
            + (
                f"≤ {PAGE_SECONDS:g} s, ≤ {PAGE_ELEMENTS:,} elements "
                f"| {'yes' if new <= PAGE_SECONDS and elements <= PAGE_ELEMENTS else 'no'} |"
                if size >= TARGET_SIZE and path != CHANGED
                else "(warm, at 100,000) | |"
            )
        )
    lines += [
        "",
        "| request | before (s) | after (s) | after / before | target | met |",
        "|---|---:|---:|---:|---|---|",
    ]
    for path in (*REQUESTS, FIRST_ASK):
        old, new = med(before.answers[path]), med(after.answers[path])
        lines.append(
            f"| `GET {path}` | {old:.3f} | {new:.3f} | {new / old:.3f} "
            + (
                f"| ≤ {API_SECONDS:g} s | {_met(new, API_SECONDS)} |"
                if size >= TARGET_SIZE
                else "| (at 100,000) | |"
            )
        )
    return lines


def bench(
    before: str, sizes: list[int], repos: dict[int, Path], runs: int, before_page_runs: int
) -> str:
    """Run every size and return the Markdown section."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        raise SystemExit("Debian's chromium is needed (apt-get install chromium)")
    lines = [
        HEADING,
        "",
        f"`python -m tools.bench.tasktool.dashboard --before {before} --sizes "
        f"{' '.join(map(str, sizes))} --runs {runs} --before-page-runs {before_page_runs}`"
        f" ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). Before = `{before}`, "
        "after = this tree; both served by `tasktool web start`, interleaved.",
        "",
    ]
    with tempfile.TemporaryDirectory() as temporary, sync_playwright() as playwright:
        work = Path(temporary)
        paths = {
            "before": _pythonpath(_source(before, work / "src-before")),
            "after": _pythonpath(REPO / "packages"),
        }
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        for size in sizes:
            repo = _repository(size, repos.get(size), work)
            with (
                serving("before", repo, paths["before"]) as old,
                serving("after", repo, paths["after"]) as new,
            ):
                measure([old, new], browser, repo, runs, before_page_runs)
            lines += [*report(size, old, new, runs, before_page_runs), ""]
        browser.close()
    lines.append(f"Load average at the end: {os.getloadavg()[0]:.1f}.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="git revision to compare against")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--repo", action="append", default=[], help="SIZE=DIR: serve DIR for that size"
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before-page-runs", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    repos = {int(size): Path(path) for size, _, path in (r.partition("=") for r in args.repo)}
    section = bench(args.before, args.sizes, repos, args.runs, args.before_page_runs)
    print(section)
    if args.out:
        args.out.write_text(section, encoding="utf-8")


if __name__ == "__main__":
    main()
