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

- **servers**: "hypercorn" and "granian" are the real `matchmaker` launcher
  (`tools/bench/matchmaker/server.py`, so `serve_until_signalled`: `tune_gc()`, the
  open-file limit, a `memory://` store and the `bench` Project declared through
  `/admin`, per-connection rate limits lifted), with `--server hypercorn` (standard
  asyncio loop) or `--server granian` (embedded granian on uvloop). "Colyseus" is
  `@colyseus/core` 0.16 with `@colyseus/ws-transport` (`peers/colyseus_server.cjs`):
  a `duel` room with `maxClients` 2 that broadcasts `matched` once both members are
  in and relays every `relay` message to the other member. No state schema.
- **echo floor**: each server's bare WebSocket echo (an ASGI echo app on the same
  server through the launcher's seam; for Colyseus the bare `ws` server it runs on),
  200 sockets × `--messages` messages, one in flight per socket.
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
  of every run in the log.
- **CPU**: `server CPU` is the share of one core the server process got during the
  scenario (`/proc/<pid>/stat`; for match-connected and relay from the client's
  `MEASURING` line, once its connections are set up); `client CPU` the load
  client's own. A client near 100% is the limit of that row, not the server.

## Idle memory: why granian holds more, and what does not change it

Measured directly (1,000 sockets, `matchmaker --server X`): granian 154.7 KiB per
socket that never sent a frame and 156.5 KiB past `hello`; hypercorn 22.4 and 23.3 KiB.
The ~130 KiB difference is tungstenite's read buffer, and it is touched memory, not
a reservation: granian 2.8.7 (the release measured, pinned in `.ci/constraints.txt`;
it pins tokio-tungstenite 0.30)
upgrades every WebSocket with `WebSocketConfig` `None`, so `read_buffer_size` is
tungstenite's default 128 KiB, and tungstenite's `FrameCodec::read_in` calls
`in_buffer.resize(capacity, 0)` (a memset of the whole buffer) before every read,
the first as soon as the app waits in `receive()`. Pages written with zeros are
resident like any other, so no allocator setting can return them while the socket
is open. Tried (`python tools/bench/matchmaker/idle_memory.py`, 1,000 clients past
`hello`, medians of 3): the wheel's allocator is jemalloc 5.3.1 (tikv-jemallocator,
read from `_RJEM_MALLOC_CONF`; not mimalloc: its `MIMALLOC_*` variables are not read),
and neither one arena without thread caches and with dirty/muzzy pages returned at
once, nor no transparent huge pages, nor glibc's `MALLOC_ARENA_MAX=1` for the Python
side moved it by more than the run-to-run spread (table below). granian's own
options do not reach the buffer either (measured with the launcher patched for the
trial, 1,000 clients): `runtime_threads` 2 155.5 KiB, HTTP/1 `max_buffer_size`
8 KiB 157.1 KiB, `blocking_threads`/`runtime_blocking_threads` 1 157.2 KiB,
against 157.4 KiB with the launcher's settings. So the launcher sets no allocator
variable, and the target (≤ 40 KiB per idle connection) is met by hypercorn only;
closing it under granian needs a granian that passes a smaller `read_buffer_size`
(the server cannot be rebuilt here: crates.io is out of reach). `docs/operations.md`
says which server to run for many idle clients.

| server | setting (jemalloc: `_RJEM_MALLOC_CONF`) | KiB per idle connection |
|---|---|---|
| hypercorn | defaults | 22.2 |
| granian | defaults | 156.8 |
| granian | jemalloc `narenas:1,tcache:false,dirty_decay_ms:0,muzzy_decay_ms:0` | 152.5 |
| granian | jemalloc `thp:never,metadata_thp:disabled` (no huge pages) | 156.7 |
| granian | glibc `MALLOC_ARENA_MAX=1` | 156.7 |

## Where granian's relay time goes

Server CPU per relayed message in the run above (server CPU share / messages per
second, medians): granian about 23 µs, hypercorn about 37 µs, Colyseus about 10 µs.
Our own synchronous work per message, timed without any server
(`python tools/bench/matchmaker/hotpath.py`: frame in, decode, the core's relay,
encode once, seq and replay buffer, metrics, queued for the recipient) is about
3.6 µs:

| step | µs per message |
|---|---|
| on_frame: the whole path (frame in, frame queued) | 3.63 |
| decode (msgspec, to the request Struct) | 0.24 |
| command (request to core command) | 0.22 |
| core: Conversation.receive (rate limit, relay) | 1.06 |
| encode the event once (event_head) | 0.52 |
| deliver: encode, seq, replay buffer, metrics, queue | 1.41 |

The rest is the bridge between granian's Rust thread and the Python thread, paid
twice per relayed message (one `receive`, one `send`): each call creates a
granian future and spawns a tokio task; its completion is handed to granian's
"blocking" thread, which takes the GIL for that one completion and schedules the
Python side with `call_soon_threadsafe`, and the Python task then takes its step
on uvloop. py-spy (`--native`, relay, 50 pairs, on the shared machine): about
45% of the process's samples on the Python thread, a quarter of those in our
code, the rest in uvloop's callbacks and the granian calls; the blocking thread
spins in `sched_yield` (crossbeam's channel backs off by yielding before it
parks) in about 15% of samples. granian's
own bare echo (no matchmaker code at all) moves 0.48× what Colyseus's `ws` echo does
in the same run, and our relay on granian already moves more than granian's bare
echo (the echo app alternates `receive` and `send`, the relay overlaps them). So
relay ≥ 1× Colyseus cannot be reached from the app on granian 2.8.7: even with our
3.6 µs at zero, granian's path would cost about 19 µs per message against
Colyseus's whole 10 µs. granian options tried on the relay (3 alternating runs each
on the quiet machine): `sys.setswitchinterval` 1 ms and 0.2 ms, `task_impl` `rust`;
none moved the rate beyond the run-to-run spread (31-46k msg/s for all, defaults
included), nor did `runtime_threads` 2 (tried on the busy machine only), so the
launcher keeps granian's defaults.

What was cut: the launcher's socket sets `TCP_NODELAY` (granian's handed-in
sockets had none: the fastest connect+match took 44 ms behind delayed ACKs, 20 ms
after); frames other than a close go to granian's `send` without a coroutine of
ours in between; the connection's writer waits on one bare future per idle period
instead of an `asyncio.Event` (whose `wait` is a coroutine and a waiter list per
wake-up); encoding an event checks for a relayed message first. The sans-I/O
core was not touched. The next lever, not taken: a writer that chains granian's
send futures with a done-callback instead of a task (one task step less per
relayed message, a few percent of the 23 µs), at the price of a second writer
path for servers whose `send` is a coroutine.
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
