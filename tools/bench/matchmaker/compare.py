"""Side by side in one run: our data plane on hypercorn and picows, and Colyseus 0.16.

    python tools/bench/matchmaker/compare.py [--runs 5] [--idle 10000] [--idle-runs 1]
        [--targets picows,colyseus] [--pin]

One Node load client (``peers/loadclient.cjs``, the ``ws`` library; Colyseus's
own client library runs on ``ws`` too) drives every server the same way, and
reports its own CPU so a reader sees where the client, not the server, is the
limit. With ``--pin`` every server runs on core 0 and every load client on core 1
(``taskset``), the same for each target: the two no longer compete for one core, so
the client's CPU share shows plainly when it is the limit. The Node packages
(``peers/package.json``: Colyseus, ``ws``) are installed with npm into
``tools/bench/matchmaker/.cache/`` on first use: never committed, never installed by
CI or the tests.

Writes docs/benchmarks/matchmaker-servers.md: medians of ``--runs`` runs and
ratios against Colyseus measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from run import Server, free_port, raw_results

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PEERS = HERE / "peers"
CACHE = HERE / ".cache"
TICKS = os.sysconf("SC_CLK_TCK")
TARGETS = ("hypercorn", "picows", "colyseus")
# ``--pin``: the command prefixes of servers and load clients (set once in main).
PIN: dict[str, list[str]] = {"server": [], "client": []}


def node_modules() -> Path:
    """The peers' packages, installed into the benchmark's own cache on first use."""
    modules = CACHE / "node_modules"
    if not (modules / "@colyseus" / "core").is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        shutil.copy(PEERS / "package.json", CACHE / "package.json")
        npm = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(CACHE)]
        subprocess.run(npm, check=True, timeout=600)
    return modules


class NodeServer:
    """``colyseus_server.cjs`` or ``echo_server.cjs`` on a free loopback port."""

    def __init__(self, script: str) -> None:
        self.port = free_port()
        env = {**os.environ, "NODE_PATH": str(node_modules())}
        self.process = subprocess.Popen(
            [*PIN["server"], "node", str(PEERS / script), str(self.port)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("listening"):
                break
        else:
            raise RuntimeError(f"{script} did not start")
        self.url = f"ws://127.0.0.1:{self.port}"

    rss_bytes = Server.rss_bytes
    cpu_s = Server.cpu_s
    stop = Server.stop


AnyServer = Server | NodeServer


def start(target: str, echo: bool = False) -> AnyServer:
    if target == "colyseus":
        return NodeServer("echo_server.cjs" if echo else "colyseus_server.cjs")
    return Server(echo=echo, server=target, prefix=PIN["server"])


def client(
    server: AnyServer, proto: str, scenario: str, *args: str, procs: int = 1, hold: bool = False
) -> dict[str, Any]:
    """Run the load client (``procs`` processes at once); merged result with CPU shares."""
    url = server.url
    command = [*PIN["client"], "node", str(PEERS / "loadclient.cjs"), scenario]
    command += ["--proto", proto, "--url", url]
    env = {**os.environ, "NODE_PATH": str(node_modules())}
    cpu0, wall0 = server.cpu_s(), time.monotonic()
    running = [
        subprocess.Popen(
            [*command, *args], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for _ in range(procs)
    ]
    results: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    for process in running:
        assert process.stdout is not None
        assert process.stdin is not None
        for line in process.stdout:
            if line.startswith("MEASURING") and "measuring" not in extra:
                extra["measuring"] = (server.cpu_s(), time.monotonic())
            elif line.startswith("HOLDING"):
                time.sleep(1.0)
                extra["server_rss_bytes"] = server.rss_bytes()
                process.stdin.close()
            elif line.startswith("{"):
                results.append(json.loads(line))
                break
        process.wait(timeout=120)
    if len(results) != procs:
        raise RuntimeError(f"{scenario} on {url}: a load client failed")
    # The server's CPU share under load: from MEASURING (set-up done) if the scenario says so.
    cpu0, wall0 = extra.pop("measuring", (cpu0, wall0))
    wall = time.monotonic() - wall0
    merged = merge(results)
    merged["server_cpu_share"] = (server.cpu_s() - cpu0) / wall
    merged["client_cpu_share"] = sum(r["client_cpu_s"] for r in results) / max(
        r["client_wall_s"] for r in results
    )
    return {**merged, **extra}


def merge(results: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for key in ("matched_clients", "unmatched", "errors", "messages", "connected"):
        if key in results[0]:
            merged[key] = sum(r[key] for r in results)
    for key in ("matches_per_s", "messages_per_s"):
        if key in results[0]:
            merged[key] = sum(r[key] for r in results)
    latencies = sorted(x for r in results for x in r.get("latencies_ms", []))
    if latencies:
        merged["p50_ms"] = latencies[len(latencies) // 2]
        merged["p99_ms"] = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
    return merged


def scenario_runs(args: argparse.Namespace) -> list[tuple[str, str, Callable[[str], bool], Any]]:
    """(name, loadclient scenario, which targets, loadclient arguments / procs)."""
    every: Callable[[str], bool] = lambda target: True  # noqa: E731
    ours: Callable[[str], bool] = lambda target: target != "colyseus"  # noqa: E731
    clients = str(args.clients)
    half = str(args.clients // 2)
    timing = ["--window", "4", "--duration", str(args.duration), "--warmup", "1"]
    relay = ["--pairs", str(args.pairs), *timing]
    relay_half = ["--pairs", str(args.pairs // 2), *timing]
    return [
        ("connect_match", "connect-match", every, (["--clients", clients, "--inflight", "50"], 1)),
        (
            "connect_match_2procs",
            "connect-match",
            every,
            (["--clients", half, "--inflight", "50"], 2),
        ),
        (
            "match_connected",
            "match-connected",
            ours,
            (["--clients", clients, "--duration", str(args.duration)], 1),
        ),
        ("relay", "relay", every, (relay, 1)),
        # The same pairs split over two load-client processes: is one client the limit?
        ("relay_2procs", "relay", every, (relay_half, 2)),
    ]


def run_once(args: argparse.Namespace, index: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for target in args.targets:
        proto = "colyseus" if target == "colyseus" else "mm"
        row: dict[str, Any] = {}
        if not args.scenarios or "echo" in args.scenarios:
            server = start(target, echo=True)
            try:
                row["echo"] = client(
                    server, proto, "echo", "--sockets", "200", "--messages", str(args.messages)
                )
            finally:
                server.stop()
        for name, scenario, applies, (extra, procs) in scenario_runs(args):
            if not applies(target) or (args.scenarios and name not in args.scenarios):
                continue
            server = start(target)
            try:
                row[name] = client(server, proto, scenario, *extra, procs=procs)
            finally:
                server.stop()
        if index < args.idle_runs:
            server = start(target)
            try:
                baseline = server.rss_bytes()
                held = client(server, proto, "hold", "--clients", str(args.idle))
                held["baseline_rss_bytes"] = baseline
                held["kib_per_connection"] = (
                    (held["server_rss_bytes"] - baseline) / held["connected"] / 1024
                )
                row["idle"] = held
            finally:
                server.stop()
        results[target] = row
        print(f"run {index + 1}: {target} done", file=sys.stderr, flush=True)
    return results


def derive(runs: list[dict[str, Any]]) -> None:
    """Throughput per second of server CPU: the figure a busy shared machine moves least."""
    for run in runs:
        for row in run.values():
            for name, result in row.items():
                rate = result.get("matches_per_s", result.get("messages_per_s"))
                if name != "idle" and rate is not None and result.get("server_cpu_share"):
                    result["per_cpu"] = rate / result["server_cpu_share"]


def median(runs: list[dict[str, Any]], target: str, scenario: str, key: str) -> float | None:
    values = [r[target][scenario].get(key) for r in runs if scenario in r[target]]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


NOTES = """
## Method

- **servers**: "hypercorn" and "picows" are the real `matchmaker` launcher
  (`tools/bench/matchmaker/server.py`, so `serve_until_signalled`: `tune_gc()`, the
  open-file limit, a `memory://` store and the `bench` Project declared through
  `/admin`, per-connection rate limits lifted), with `--server hypercorn` (standard
  asyncio loop) or `--server picows` (picows on uvloop). "Colyseus" is
  `@colyseus/core` 0.16 with `@colyseus/ws-transport` (`peers/colyseus_server.cjs`):
  a `duel` room with `maxClients` 2 that broadcasts `matched` once both members are
  in and relays every `relay` message to the other member. No state schema.
- **echo floor**: each server's bare WebSocket echo through the launcher's seam, as
  the data plane is served (hypercorn: an ASGI echo app; picows: an echo where the
  data plane's connection would be), and for Colyseus the bare `ws` server it runs
  on; 200 sockets × `--messages` messages, one in flight per socket.
- **connect+match**: `--clients` clients, 50 in flight: open a WebSocket, `hello`,
  `pool.enter` (policy `duel`, `auto`, groupSize 2), wait for `session.created`,
  close. Colyseus: `client.joinOrCreate("duel")` (its HTTP matchmake request, then
  the room's WebSocket), wait for `matched`, leave. Latency runs from the start of
  the connection to the match. "2 client processes" splits the same clients over two
  load-client processes, to show whether one client process was the limit.
- **matching of connected clients** (ours only): `--clients` clients past `hello`
  enter, match, leave and enter again, for `--duration` s; latency from `pool.enter`
  to `session.created`. Colyseus has no equivalent: every match is a new WebSocket
  to the room (its matchmaking is the connect+match row).
- **relay**: `--pairs` pairs in 2-member sessions (rooms), 4 messages in flight per
  socket, each bounced back on arrival (A → server → B → server → A), for
  `--duration` s after 1 s of warm-up; p50/p99 of the round half-trips. "2 client
  processes" splits the pairs over two load-client processes (each its own sessions).
- **idle**: `--idle` clients past `hello` (Colyseus: in `duel` rooms), held idle;
  (RSS held − RSS of the fresh server) / clients.
- **runs**: runs can be split over several invocations (each one's JSON lines
  appended to a log) and merged with `--rerender LOG`, which renders the medians
  of every run in the log. `--targets` and `--scenarios` narrow a run; `--pin` puts
  every server on core 0 and every load client on core 1.
- **CPU**: `server CPU` is the share of one core the server process got during the
  scenario (`/proc/<pid>/stat`; for match-connected and relay from the client's
  `MEASURING` line, once its connections are set up); `client CPU` the load
  client's own. A client near 100% is the limit of that row, not the server.

What each server spends its time on, and the granian measurements from before it
was removed: `docs/benchmarks/matchmaker-picows.md`.
"""


def node_version() -> str:
    done = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def report(args: argparse.Namespace, runs: list[dict[str, Any]]) -> str:
    def m(target: str, scenario: str, key: str) -> float | None:
        return median(runs, target, scenario, key)

    def ratio(target: str, scenario: str, key: str, base: str = "colyseus") -> str:
        ours, theirs = m(target, scenario, key), m(base, scenario, key)
        if ours is None or not theirs:
            return "n/a"
        text = f"{ours / theirs:.2f}×"
        ours_cpu, theirs_cpu = m(target, scenario, "per_cpu"), m(base, scenario, "per_cpu")
        if ours_cpu is not None and theirs_cpu:
            text += f"; per CPU s {ours_cpu / theirs_cpu:.2f}×"
        return text

    targets = args.targets
    ours = [t for t in targets if t != "colyseus"]
    names = {"colyseus": "Colyseus 0.16"}
    # Each of our servers against Colyseus; the fastest of ours (picows) against the others.
    ratios = [(t, "colyseus") for t in ours]
    ratios += [("picows", t) for t in ours if "picows" in ours and t != "picows"]
    rows = [
        "| scenario | "
        + " | ".join(names.get(t, t) for t in targets)
        + " | "
        + " | ".join(f"{t} / {names.get(b, b)}" for t, b in ratios)
        + " |",
        "|---" * (1 + len(targets) + len(ratios)) + "|",
    ]

    def cell(target: str, scenario: str, key: str, unit: str) -> str:
        value = m(target, scenario, key)
        if value is None:
            return "n/a"
        text = f"{value:,.0f} {unit}"
        p50, p99 = m(target, scenario, "p50_ms"), m(target, scenario, "p99_ms")
        if p99 is not None:
            text += f", p50 {p50:.0f} ms, p99 {p99:.0f} ms"
        server, client = (
            m(target, scenario, "server_cpu_share"),
            m(target, scenario, "client_cpu_share"),
        )
        per_cpu = m(target, scenario, "per_cpu")
        if server is not None and client is not None and per_cpu is not None:
            text += f"; {per_cpu:,.0f} per server CPU s (server CPU {server:.0%}, "
            text += f"client {client:.0%})"
        return text

    scenarios = [
        ("echo", "messages_per_s", "msg/s", "bare echo floor, 200 sockets"),
        ("connect_match", "matches_per_s", "matches/s", "connect+match, 1 client process"),
        ("connect_match_2procs", "matches_per_s", "matches/s", "connect+match, 2 client processes"),
        ("match_connected", "matches_per_s", "matches/s", "matching of connected clients"),
        ("relay", "messages_per_s", "msg/s", f"relay, {args.pairs} pairs × 4 in flight"),
        ("relay_2procs", "messages_per_s", "msg/s", "same, 2 client processes"),
    ]
    for scenario, key, unit, label in scenarios:
        rows.append(
            f"| {label} | "
            + " | ".join(cell(t, scenario, key, unit) for t in targets)
            + " | "
            + " | ".join(ratio(t, scenario, key, b) for t, b in ratios)
            + " |"
        )
    idle = [m(target, "idle", "kib_per_connection") for target in targets]
    rss = [m(target, "idle", "server_rss_bytes") for target in targets]
    rows.append(
        f"| idle clients ({args.idle:,}), KiB per connection (server RSS) | "
        + " | ".join(
            "n/a" if k is None or r is None else f"{k:.1f} KiB ({r / 2**20:.0f} MiB)"
            for k, r in zip(idle, rss, strict=True)
        )
        + " | "
        + " | ".join(ratio(t, "idle", "kib_per_connection", b) for t, b in ratios)
        + " |"
    )
    lines = [
        "# matchmaker servers side by side: " + ", ".join(names.get(t, t) for t in targets),
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on this machine "
        f"({os.cpu_count()} cores shared with other work, Python {platform.python_version()}, "
        f"Node {node_version()}). "
        f"Medians of {len(runs)} runs (idle memory: {min(args.idle_runs, len(runs))}); every "
        "server started fresh per scenario; all in one run, so the ratios compare like with "
        f"like. Clients {args.clients:,}, relay/matching {args.duration:g} s. "
        + ("Pinned: every server on core 0, every load client on core 1. " if args.pin else "")
        + f"Reproduce: `python tools/bench/matchmaker/compare.py{' --pin' if args.pin else ''}`.",
        "",
        *rows,
        "",
        NOTES,
        *raw_results(runs),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--idle", type=int, default=10_000)
    parser.add_argument("--idle-runs", type=int, default=1)
    parser.add_argument(
        "--targets",
        type=lambda text: tuple(text.split(",")),
        default=TARGETS,
        help="comma-separated, of " + ", ".join(TARGETS),
    )
    parser.add_argument(
        "--scenarios",
        type=lambda text: tuple(text.split(",")),
        default=(),
        help="only these (echo, connect_match, connect_match_2procs, match_connected, relay, "
        "relay_2procs; idle is --idle-runs); default: all",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="servers on core 0, load clients on core 1 (taskset), for every target alike",
    )
    parser.add_argument("--rerender", type=Path, help="rewrite the report from a run log")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "docs" / "benchmarks" / "matchmaker-servers.md"
    )
    args = parser.parse_args()
    if args.pin:
        PIN["server"], PIN["client"] = ["taskset", "-c", "0"], ["taskset", "-c", "1"]
    if args.rerender:
        runs = [json.loads(x) for x in args.rerender.read_text().splitlines() if x[:1] == "{"]
    else:
        runs = []
        for index in range(args.runs):
            runs.append(run_once(args, index))
            print(json.dumps(runs[-1]), flush=True)
    derive(runs)
    args.out.write_text(report(args, runs))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
