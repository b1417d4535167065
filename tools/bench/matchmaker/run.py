"""Drive the matchmaker benchmark: fresh server process per scenario, load from another.

    python tools/bench/matchmaker/run.py [--runs 3] [--count 10000] [--profile DIR]

Writes docs/benchmarks/matchmaker.md (medians of the runs, and the ratio of
relay to a bare hypercorn echo server measured in the same run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PY = sys.executable
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, echo: bool = False) -> None:
        self.port = free_port()
        command = [PY, str(HERE / "server.py"), "--port", str(self.port)]
        if echo:
            command.append("--echo")
        self.process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.05)
        self.url = f"ws://127.0.0.1:{self.port}/ws"

    def rss_bytes(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def loadgen(
    server: Server, *args: str, profile: Path | None = None, hold: bool = False
) -> dict[str, Any]:
    command = [PY, str(HERE / "loadgen.py"), *args, "--url", server.url]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdin is not None
    extra: dict[str, Any] = {}
    spy: subprocess.Popen[bytes] | None = None
    cpu0 = wall0 = 0.0
    for line in process.stdout:
        if line.startswith("HOLDING"):
            time.sleep(1.0)
            extra["server_rss_bytes"] = server.rss_bytes()
            process.stdin.close()
        elif line.startswith("MEASURING"):
            cpu0, wall0 = server.cpu_s(), time.monotonic()
            if profile is not None:
                spy = subprocess.Popen(
                    [
                        str(Path(PY).parent / "py-spy"),
                        "record",
                        "-p",
                        str(server.process.pid),
                        "-d",
                        "5",
                        "-r",
                        "200",
                        "-f",
                        "raw",
                        "-o",
                        str(profile),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
        elif line.startswith("{"):
            result: dict[str, Any] = json.loads(line)
            if wall0:
                result["server_cpu_share"] = (server.cpu_s() - cpu0) / (time.monotonic() - wall0)
            break
    process.wait(timeout=60)
    if spy is not None:
        spy.wait(timeout=60)
    return {**result, **extra}


def run_once(args: argparse.Namespace, index: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    server = Server()
    try:
        baseline = server.rss_bytes()
        held = loadgen(server, "connections", "--count", str(args.count))
        held["baseline_rss_bytes"] = baseline
        held["rss_per_connection"] = (held["server_rss_bytes"] - baseline) / held["connected"]
        results["connections"] = held
    finally:
        server.stop()
    for name, rate in (("matching_1000", 1000), ("matching_max", args.max_rate)):
        server = Server()
        try:
            profile = args.profile / f"{name}-{index}.raw" if args.profile else None
            results[name] = loadgen(
                server,
                "matching",
                "--rate",
                str(rate),
                "--duration",
                str(args.duration),
                "--clients",
                "2000",
                profile=profile,
            )
        finally:
            server.stop()
    for name, echo in (("relay", False), ("echo", True)):
        server = Server(echo=echo)
        try:
            profile = args.profile / f"{name}-{index}.raw" if args.profile else None
            extra = ["--echo"] if echo else []
            results[name] = loadgen(
                server,
                "relay",
                "--pairs",
                str(args.pairs),
                "--window",
                "4",
                "--duration",
                str(args.duration),
                *extra,
                profile=profile,
            )
        finally:
            server.stop()
    results["relay_ratio"] = results["relay"]["messages_per_s"] / results["echo"]["messages_per_s"]
    return results


def median(runs: list[dict[str, Any]], scenario: str, key: str) -> float:
    if scenario:
        return statistics.median(run[scenario][key] for run in runs)
    return statistics.median(run[key] for run in runs)


def report(args: argparse.Namespace, runs: list[dict[str, Any]]) -> str:
    m = lambda scenario, key: median(runs, scenario, key)  # noqa: E731
    per_run = lambda scenario, key, fmt: ", ".join(fmt.format(r[scenario][key]) for r in runs)  # noqa: E731
    mib = 1024 * 1024
    ratios = ", ".join(f"{r['relay_ratio']:.2f}" for r in runs)
    rss_total = m("connections", "server_rss_bytes") / mib
    lines = [
        "# matchmaker data-plane benchmark",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on this machine "
        f"({os.cpu_count()} cores, shared with other work; Python {platform.python_version()}, "
        "hypercorn + wsproto, default asyncio loop). Server and load generator are separate "
        "processes on 127.0.0.1; each scenario starts a fresh server. "
        f"Medians of {len(runs)} runs; per-run values in brackets. "
        "Reproduce: `python tools/bench/matchmaker/run.py`.",
        "",
        "| scenario | result | target | met |",
        "|---|---|---|---|",
        f"| {args.count:,} idle clients past `hello` | server RSS {rss_total:.0f} MiB, "
        f"{m('connections', 'rss_per_connection') / 1024:.1f} KiB/connection "
        f"[{per_run('connections', 'rss_per_connection', '{:.0f} B')}] | 10,000 under 1 GiB | "
        f"{'yes' if m('connections', 'connected') >= 10_000 and rss_total < 1024 else 'no'} |",
        "| `auto` groupSize 2 at 1,000 enters/s | "
        f"{m('matching_1000', 'matches_per_s'):.0f} matches/s, "
        f"p50 {m('matching_1000', 'p50_ms'):.1f} ms, p99 {m('matching_1000', 'p99_ms'):.1f} ms "
        f"[p99 {per_run('matching_1000', 'p99_ms', '{:.1f}')}] | p99 < 50 ms | "
        f"{'yes' if m('matching_1000', 'p99_ms') < 50 else 'no'} |",
        f"| `auto` groupSize 2, offered {args.max_rate:,} enters/s | "
        f"{m('matching_max', 'matches_per_s'):.0f} matches/s sustained "
        f"[{per_run('matching_max', 'matches_per_s', '{:.0f}')}], "
        f"p99 {m('matching_max', 'p99_ms'):.0f} ms, "
        f"server CPU {m('matching_max', 'server_cpu_share'):.0%}, load generator CPU "
        f"{m('matching_max', 'loadgen_cpu_s') / args.duration:.0%} | ≥ 2,000 matches/s | "
        f"{'yes' if m('matching_max', 'matches_per_s') >= 2000 else 'no'} |",
        f"| relay, {args.pairs} pairs × 8 in flight | {m('relay', 'messages_per_s'):,.0f} msg/s, "
        f"p50 {m('relay', 'p50_ms'):.1f} ms, p99 {m('relay', 'p99_ms'):.1f} ms | | |",
        f"| bare hypercorn echo, same load | {m('echo', 'messages_per_s'):,.0f} msg/s, "
        f"p50 {m('echo', 'p50_ms'):.1f} ms, p99 {m('echo', 'p99_ms'):.1f} ms | | |",
        f"| relay / echo throughput | {m('', 'relay_ratio'):.2f} "
        f"[{ratios}] | ≥ 0.6 | "
        f"{'yes' if m('', 'relay_ratio') >= 0.6 else 'no'} |",
        "",
        "Raw results (JSON, one object per run):",
        "",
        "```json",
        *(json.dumps(run, sort_keys=True) for run in runs),
        "```",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--max-rate", type=int, default=5000)
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "matchmaker.md")
    args = parser.parse_args()
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    runs = []
    for index in range(args.runs):
        runs.append(run_once(args, index))
        print(json.dumps(runs[-1]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report(args, runs))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
