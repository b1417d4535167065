"""Tables on a terminal against piped output: ``list``, ``board`` and ``stats`` at N tasks.

Usage: ``python -m tools.bench.tasktool.terminal [--size 10000] [--runs 5]``. Each
command runs whole-process, alternately with stdout on a pseudo-terminal of 80x24 and on
a pipe, warm cache, ``--no-pager``; the report gives medians and the terminal/piped ratio
(target: at most 1.3). Writes ``docs/benchmarks/tasktool-terminal.md``.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import statistics
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path

from tools.bench.tasktool.generate import generate_tasks, write_tasks
from tools.bench.tasktool.process import ENV, tasktool_argv

COMMANDS = ("list", "board", "stats")
TARGET = 1.3


def _drain(fd: int, sink: list[int]) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO once the child closed the terminal
            return
        if not chunk:
            return
        sink[0] += len(chunk)


def run_tty(argv: list[str], cwd: Path) -> tuple[float, int]:
    """Wall seconds and bytes written, stdout and stderr on an 80x24 pseudo-terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    received = [0]
    reader = threading.Thread(target=_drain, args=(master, received))
    reader.start()
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=ENV, stdout=slave, stderr=slave, check=False)
    elapsed = time.perf_counter() - start
    os.close(slave)
    reader.join(timeout=60)
    os.close(master)
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited {done.returncode}")
    return elapsed, received[0]


def run_piped(argv: list[str], cwd: Path) -> tuple[float, int]:
    """Wall seconds and bytes written, stdout on a pipe."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited {done.returncode}: {done.stderr!r}")
    return elapsed, len(done.stdout)


def measure(directory: Path, runs: int) -> list[tuple[str, float, float]]:
    """Per command: median piped and terminal seconds (runs alternate, warm cache)."""
    results = []
    for command in COMMANDS:
        argv = [*tasktool_argv(), "--no-pager", command]
        run_piped(argv, directory)  # warm the parse cache
        piped: list[float] = []
        tty: list[float] = []
        for _ in range(runs):
            piped.append(run_piped(argv, directory)[0])
            tty.append(run_tty(argv, directory)[0])
        results.append((command, statistics.median(piped), statistics.median(tty)))
    return results


def report(size: int, runs: int, results: list[tuple[str, float, float]]) -> str:
    lines = [
        "# tasktool: tables on a terminal vs piped",
        "",
        f"`python -m tools.bench.tasktool.terminal --size {size} --runs {runs}`: whole-process",
        "wall time, warm parse cache, `--no-pager`; stdout on an 80x24 pseudo-terminal against",
        "a pipe, runs alternating; medians. Target: terminal at most 1.3x piped.",
        "",
        "| command | piped | terminal | terminal / piped | met |",
        "|---|---|---|---|---|",
    ]
    for command, piped, tty in results:
        ratio = tty / piped
        met = "yes" if ratio <= TARGET else "no"
        lines.append(f"| `{command}` | {piped:.2f} s | {tty:.2f} s | {ratio:.2f} | {met} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/tasktool-bench-terminal"))
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/tasktool-terminal.md"))
    args = parser.parse_args(argv)
    directory = args.work / str(args.size)
    if not (directory / "tasks").is_dir():
        write_tasks(generate_tasks(args.size, 0), directory)
    text = report(args.size, args.runs, measure(directory, args.runs))
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
