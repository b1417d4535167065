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
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from server import BENCH_PROJECT, MANAGEMENT_KEY

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PY = sys.executable
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``server.py``: the real launcher (the ``bench`` Project declared through /admin) or echo."""

    def __init__(
        self,
        echo: bool = False,
        default_gc: bool = False,
        server: str = "hypercorn",
        flags: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        *,
        prefix: Sequence[str] = (),
    ) -> None:
        """``flags`` go to ``server.py`` (``--cluster``); ``env`` replaces the environment;
        ``prefix`` runs before it (``taskset -c 0``: pinned to a core)."""
        self.server = server
        self.prefix = list(prefix)
        self.flags = list(flags)
        self.env = env
        # A port picked free can be taken again before the server binds it (the load
        # generator opens thousands of sockets): start again on other ports.
        for attempt in range(3):
            try:
                self._start(echo, default_gc)
                return
            except RuntimeError as error:
                print(f"server start failed (attempt {attempt + 1}): {error}", file=sys.stderr)
        raise RuntimeError("the server did not start three times")

    def _start(self, echo: bool, default_gc: bool) -> None:
        self.port = free_port()
        command = [*self.prefix, PY, str(HERE / "server.py"), "--port", str(self.port)]
        command += ["--server", self.server]
        management_port = free_port()
        if echo:
            command.append("--echo")
        else:
            command += ["--management-port", str(management_port)]
        if default_gc:
            command.append("--default-gc")
        command += self.flags
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the server)
        self.process = subprocess.Popen(command, stderr=self.stderr, env=self.env)
        try:
            self._wait_for(self.port)
            if not echo:
                self._wait_for(management_port)
                declare_bench_project(management_port)
        except (RuntimeError, OSError) as error:
            self.stop()
            self.stderr.seek(0)
            tail = self.stderr.read()[-2000:].decode(errors="replace")
            raise RuntimeError(f"{error}: {tail}") from None
        self.url = f"ws://127.0.0.1:{self.port}/ws"

    def _wait_for(self, port: int) -> None:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                    return
            except urllib.error.HTTPError:
                return  # the echo floor answers every HTTP request with an error: it is up
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.05)

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


def declare_bench_project(management_port: int) -> None:
    request = urllib.request.Request(
        f"http://127.0.0.1:{management_port}/admin/projects",
        data=json.dumps(BENCH_PROJECT).encode(),
        headers={
            "Authorization": f"Bearer {MANAGEMENT_KEY}",
            "Content-Type": "application/json",
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 201, response.status


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
    matching = (
        ("matching_1000", 1000, False),
        ("matching_1000_default_gc", 1000, True),
        ("matching_max", args.max_rate, False),
    )
    for name, rate, default_gc in matching:
        server = Server(default_gc=default_gc)
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
    derive(results)
    return results


def derive(results: dict[str, Any]) -> None:
    """Ratios, and throughput per second of server CPU (robust to a busy machine)."""
    for name, key in (("matching_max", "matches_per_s"), ("relay", "messages_per_s")):
        results[name]["per_server_cpu_s"] = results[name][key] / results[name]["server_cpu_share"]
    echo = results["echo"]
    echo["per_server_cpu_s"] = echo["messages_per_s"] / echo["server_cpu_share"]
    results["relay_ratio"] = results["relay"]["messages_per_s"] / echo["messages_per_s"]
    results["relay_cpu_ratio"] = results["relay"]["per_server_cpu_s"] / echo["per_server_cpu_s"]


NOTES = """
## Method

- **server**: the matchmaker scenarios run the real launcher (`matchmaker.cli.main`, so
  `serve_until_signalled`: hypercorn's 1009 frame cap, `tune_gc()`, the open-file limit)
  with a management key, a `memory://` store and the `bench` Project (policy `duel`,
  `auto`, groupSize 2) declared through `POST /admin/projects`. Only the per-connection
  rate limits are lifted by flags (`--send-rate-per-s` ...), so the load generator
  measures the server rather than the limiter.

- **connections**: the load generator opens N WebSockets (200 at a time), completes
  `hello` on each and holds them idle; the driver samples the server's `VmRSS` 1 s
  later. RSS/connection = (held RSS − RSS of the fresh server) / N. Both processes
  raise `RLIMIT_NOFILE` to the hard limit (20,000 here).
- **matching**: 2,000 clients past `hello`; an open-loop scheduler sends `pool.enter`
  (policy `duel`, `auto`, groupSize 2) at a fixed offered rate from idle clients.
  Latency runs from sending `pool.enter` to receiving `session.created`, for both
  members (the first includes waiting for a partner). A matched client sends
  `session.leave` and becomes idle again, so the server also does the leave and the
  `member_left`. "Sustained" counts sessions formed inside the measured window.
- **relay**: 50 pairs in rooms; 4 messages in flight per socket, each bounced back on
  arrival (A → server → B → server → A). The floor is a bare ASGI echo app on the same
  hypercorn, driven by the same load generator with the same sockets and messages in
  flight; one message is one frame in and one frame out of the server in both.
- **per server CPU second**: throughput divided by the share of a core the server
  process actually got (from `/proc/<pid>/stat`). The machine's two cores were shared
  with other builds during the runs (load average 3-5), so the server often got only
  half a core; this column is the figure that does not depend on the neighbours.
- The load generator (`fastws.py`) frames by hand on an asyncio Protocol: with the
  `websockets` library it used more CPU per frame than the server and became the
  bottleneck (it saturated at about 1,500 matches/s).

## Profile (py-spy, `run.py --profile DIR`) and what was fixed

- matching, at saturation: hypercorn + wsproto (frame parsing, `send`/drain) take about
  80% of the server's samples; the data plane's own code (decode, Project and pool
  resolution, the core, encoding) about 15%, the matching core itself about 3%.
- relay: the data plane's own code is about 7% of samples (decode, membership check,
  one encode per message, queueing); the rest is hypercorn's receive and send path.
- **Garbage collection was the latency tail.** Each connection owns about 140 GC-tracked
  objects (mostly hypercorn's and asyncio's), so with 2,000 clients a full collection
  walks ~280,000 objects; with the default thresholds, young collections promoted enough
  per-frame garbage to trigger full collections during the run, stalling the loop for
  60-250 ms (measured with `gc.callbacks`). `matchmaker.data.runtime.tune_gc()` (freeze startup
  objects, young threshold 20,000) removes them; the wire Structs are also GC-untracked
  (`gc=False`). The row "default GC thresholds" above is the same scenario without it.
  The `matchmaker` command calls `tune_gc()` once its apps are built
  (`serve_until_signalled`), so users get it without doing anything.
- Starlette's middleware wrapped every WebSocket `send`; `/ws` now goes to the plane
  directly (Starlette still serves `/healthz`).
- An early load generator never left its sessions; sessions piled up and collection
  cost grew with them. A real client leaves, and so does this one.

## The control plane's share

`docs/benchmarks/matchmaker-control.md` (`tools/bench/matchmaker-control/`) measures
what a declared Project costs the data plane: `hello` resolves a credential or a
Project id in the in-memory directory (about 0.14 µs a lookup there), where a store
round trip would cost about 900× (SQLite) to 4,000× (PostgreSQL) more. That is why
no data-plane operation touches the store; `/admin` writes (100-460 creates/s
depending on the store) are operator traffic and never on the matching path. The
scenarios above run with the control plane up (a `memory://` store, the `bench`
Project declared through it), as a user's server does.

## Caveats

- The two cores were shared with other builds during some runs; per-run values show
  the spread, and the "per server CPU second" rows are the figures least affected.
- Hypercorn's per-frame cost is the ceiling for both matching and relay: the data
  plane cannot beat the bare echo floor by much, and more throughput per process would
  need a cheaper WebSocket server underneath, not a faster core.
"""


def median(runs: list[dict[str, Any]], scenario: str, key: str) -> float:
    if scenario:
        return statistics.median(run[scenario][key] for run in runs)
    return statistics.median(run[key] for run in runs)


def report(args: argparse.Namespace, runs: list[dict[str, Any]]) -> str:
    m = lambda scenario, key: median(runs, scenario, key)  # noqa: E731
    per_run = lambda scenario, key, fmt: ", ".join(fmt.format(r[scenario][key]) for r in runs)  # noqa: E731
    mib = 1024 * 1024
    ratios = ", ".join(f"{r['relay_ratio']:.2f}" for r in runs)
    cpu_ratios = ", ".join(f"{r['relay_cpu_ratio']:.2f}" for r in runs)
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
        "| same, default GC thresholds (no `tune_gc()`) | "
        f"p50 {m('matching_1000_default_gc', 'p50_ms'):.1f} ms, "
        f"p99 {m('matching_1000_default_gc', 'p99_ms'):.1f} ms "
        f"[p99 {per_run('matching_1000_default_gc', 'p99_ms', '{:.1f}')}] | p99 < 50 ms | "
        f"{'yes' if m('matching_1000_default_gc', 'p99_ms') < 50 else 'no'} |",
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
        f"| relay / echo, per server CPU second | {m('', 'relay_cpu_ratio'):.2f} "
        f"[{cpu_ratios}] | ≥ 0.6 | "
        f"{'yes' if m('', 'relay_cpu_ratio') >= 0.6 else 'no'} |",
        f"| matches per server CPU second (offered {args.max_rate:,}/s) | "
        f"{m('matching_max', 'per_server_cpu_s'):,.0f} "
        f"[{per_run('matching_max', 'per_server_cpu_s', '{:,.0f}')}] | ≥ 2,000 | "
        f"{'yes' if m('matching_max', 'per_server_cpu_s') >= 2000 else 'no'} |",
        "",
        NOTES,
        *raw_results(runs),
    ]
    return "\n".join(lines)


def raw_results(runs: list[dict[str, Any]]) -> list[str]:
    """The closing section of a report: every run's results, one JSON object a line."""
    return [
        "## Raw results (JSON, one object per run)",
        "",
        "```json",
        *(json.dumps(run, sort_keys=True) for run in runs),
        "```",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--max-rate", type=int, default=5000)
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--rerender", type=Path, help="rewrite the report from a run log")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "matchmaker.md")
    args = parser.parse_args()
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    runs = []
    if args.rerender:
        runs = [
            json.loads(line) for line in args.rerender.read_text().splitlines() if line[:1] == "{"
        ]
        for run in runs:
            derive(run)
    for index in range(0 if args.rerender else args.runs):
        runs.append(run_once(args, index))
        print(json.dumps(runs[-1]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report(args, runs))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
