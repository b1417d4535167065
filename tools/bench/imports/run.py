"""Import time of ``import matchmaker`` and ``import tasktool`` against ``python -c pass``.

    python tools/bench/imports/run.py [--runs 21]

Each round starts a fresh interpreter with ``-X importtime`` for the baseline
(``-c pass``) and for each package, in turn, so load on the shared machine hits
them alike. Reported per command, as medians over the rounds:

- wall: the whole process, start to exit (what a user waits for);
- over baseline: wall minus the baseline's median wall (what the import adds);
- imports over baseline: the time ``-X importtime`` reports for all imports (the
  sum of its top-level lines) minus the baseline's (interpreter startup's own).

Prints a Markdown table (docs/benchmarks/imports.md has a run's output).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "baseline": "pass",
    "import matchmaker": "import matchmaker",
    "import tasktool": "import tasktool",
    "import matchmaker; matchmaker.Client": "import matchmaker; matchmaker.Client",
    "import tasktool; tasktool.load_context": "import tasktool; tasktool.load_context",
    "the matchmaker command's module": "import matchmaker.cli",
}


def importtime_us(stderr: str) -> int:
    """Microseconds spent importing: the sum of the top-level ``-X importtime`` lines' cumulative
    times (every import is under one of them, lazy ones such as websockets' included)."""
    total = 0
    for line in stderr.splitlines():
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        if not parts[2][1:].startswith(" "):  # one space after the bar; more mean nested
            total += int(parts[1])
    return total


def measure(code: str) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    return (time.perf_counter() - started) * 1000, result.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=21)
    runs = parser.parse_args().runs
    walls: dict[str, list[float]] = {label: [] for label in COMMANDS}
    imported: dict[str, list[float]] = {label: [] for label in COMMANDS}
    for _ in range(runs):
        for label, code in COMMANDS.items():
            wall, stderr = measure(code)
            walls[label].append(wall)
            imported[label].append(importtime_us(stderr) / 1000)
    baseline = statistics.median(walls["baseline"])
    baseline_imports = statistics.median(imported["baseline"])
    print(f"{runs} rounds, Python {sys.version.split()[0]}\n")
    print("| command | wall | wall over baseline | imports over baseline (`-X importtime`) |")
    print("|---|---|---|---|")
    for label, code in COMMANDS.items():
        wall = statistics.median(walls[label])
        over = "" if label == "baseline" else f"{wall - baseline:.1f} ms"
        imports = statistics.median(imported[label])
        mine = f"{imports - baseline_imports:.1f} ms"
        if label == "baseline":
            mine = f"({imports:.1f} ms of startup imports)"
        print(f'| `python -c "{code}"` | {wall:.1f} ms | {over} | {mine} |')


if __name__ == "__main__":
    main()
