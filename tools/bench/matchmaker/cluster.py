"""Benchmark ``--cluster``: scaling over 1, 2 and 4 processes, and the cost of crossing one.

    python tools/bench/matchmaker/cluster.py [--redis redis://127.0.0.1:6379/13] [--runs 3]
        [--baseline-src DIR] [--server hypercorn|picows] [--latency-pairs 100] [--unix]

Every server is ``server.py`` (the real launcher, the ``bench`` Project declared on each
member, rate limits lifted), each member of a fresh cluster. Prints one JSON object of
medians over ``--runs`` runs:

- ``throughput``: for 1 process without ``--cluster``, 1 with it, 2 and 4: matches/s
  (``match-connected``: clients past hello enter the ``duel`` policy, are matched, leave,
  enter again) and relay msg/s (pairs in rooms bouncing messages, 4 in flight), each
  driven by the Node ``ws`` load client of ``compare.py`` with its sockets spread over the
  processes in turn (as a load balancer would); the servers' CPU share under load, the
  rates per server CPU second and the client's own CPU share (is the client the limit?);
- ``latency``: p50/p99 of enter->matched (the second entrant's ``pool.enter`` to its
  ``session.created``) and of a relay round trip, over 2 processes, with both clients on
  the pool's owner (``same``) or the second on the other process (``cross``), interleaved;
- ``baseline``: with ``--baseline-src`` (a checkout of main), the single process without
  ``--cluster`` run from that source and from this one alternately, so a cluster cost
  paid by one process would show as a ratio below 1; with ``--only latency`` (or no
  ``--only``), ``latency_main`` is ``latency`` run from that source, alternating with
  this one in every run;
- ``hosting`` (``--only hosting``): p50/p99 of a relay round trip for pairs whose two
  clients share a process, in one process without ``--cluster`` and in a 2-process
  cluster with their pool owned by the other process (the session moves to the
  members' process) or by theirs, and the ratio to the single process (with
  ``--baseline-src``, ``remote_owner_main`` too: the first case run from that source);
- with ``--unix``: the bench starts a redis-server of its own, listening on a free port of
  127.0.0.1 and on a unix socket; every cluster row goes to its TCP port, and ``2_unix``
  (throughput) and ``latency_unix`` (alternating with ``latency`` in every run) to its
  socket: one server, only the members' transport differs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compare import client as load
from run import Server, free_port
from server import BENCH_PROJECT
from websockets.asyncio.client import ClientConnection, connect

from matchmaker.cluster.ring import owner, pool_key

PROJECT = str(BENCH_PROJECT["id"])
POLICY = "duel"


class Cluster:
    """``count`` members of one fresh cluster (or one plain process: ``redis`` is None)."""

    def __init__(
        self,
        count: int,
        redis: str | None,
        env: dict[str, str] | None = None,
        server: str = "hypercorn",
    ) -> None:
        flags: list[str] = []
        if redis is not None:
            flags = ["--cluster", redis, "--cluster-name", f"bench-{uuid.uuid4().hex[:8]}"]
        self.servers: list[Server] = []
        try:
            for _ in range(count):
                self.servers.append(Server(server=server, flags=flags, env=env))
            if redis is not None:
                self._wait_for_members(count)
        except BaseException:
            self.stop()
            raise
        self.url = ",".join(s.url for s in self.servers)

    def _wait_for_members(self, count: int) -> None:
        deadline = time.monotonic() + 15
        while not all(self.health(s)["cluster"]["members"] == count for s in self.servers):
            if time.monotonic() > deadline:
                raise RuntimeError("the members did not find each other")
            time.sleep(0.1)

    @staticmethod
    def health(server: Server) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/healthz", timeout=2) as r:
            health: dict[str, Any] = json.load(r)
            return health

    def cpu_s(self) -> float:
        return sum(s.cpu_s() for s in self.servers)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


def throughput(cluster: Cluster, args: argparse.Namespace) -> dict[str, float]:
    """matches/s and relay msg/s through the Node load client, per server CPU second."""
    duration = str(args.duration)
    match = load(
        cluster, "mm", "match-connected", "--clients", str(args.clients), "--duration", duration
    )
    relay = load(
        cluster,
        "mm",
        "relay",
        *("--pairs", str(args.pairs), "--window", "4", "--duration", duration, "--warmup", "1"),
    )
    return {
        "matches_per_s": match["matches_per_s"],
        "match_server_cpu_share": match["server_cpu_share"],
        "matches_per_cpu_s": match["matches_per_s"] / match["server_cpu_share"],
        "match_p99_ms": match["p99_ms"],
        "match_client_cpu_share": match["client_cpu_share"],
        "relay_msgs_per_s": relay["messages_per_s"],
        "relay_server_cpu_share": relay["server_cpu_share"],
        "relay_msgs_per_cpu_s": relay["messages_per_s"] / relay["server_cpu_share"],
        "relay_p99_ms": relay["p99_ms"],
        "relay_client_cpu_share": relay["client_cpu_share"],
    }


class Client:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = 0

    @classmethod
    async def open(cls, server: Server) -> Client:
        client = cls(await connect(server.url, max_size=None))
        welcome = await client.request("hello", {"v": 1, "project": PROJECT})
        assert welcome["ok"], welcome
        return client

    async def request(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        rid = str(self.ids)
        await self.ws.send(json.dumps({"id": rid, "type": kind, "data": data}))
        while True:
            message: dict[str, Any] = json.loads(await self.ws.recv())
            if message.get("id") == rid:
                return message

    async def event(self, kind: str) -> dict[str, Any]:
        while True:
            message: dict[str, Any] = json.loads(await self.ws.recv())
            if message.get("type") == kind:
                data: dict[str, Any] = message["data"]
                return data


def enter(pool: str) -> dict[str, Any]:
    return {"pool": pool, "create": True, "mode": "auto", "groupSize": 2}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def owned_pool(prefix: str, target: str, members: list[str]) -> str:
    """A pool name that rendezvous hashing gives to ``target``."""
    i = 0
    while owner(pool_key(PROJECT, f"{prefix}{i}"), members) != target:
        i += 1
    return f"{prefix}{i}"


async def relay_round_trip(first: Client, second: Client, session: str, n: int) -> float:
    """Seconds for one message from ``first`` to ``second`` and one back, in ``session``."""
    sent = time.perf_counter()
    payload = {"type": "session.send", "data": {"session_id": session, "data": n}}
    await first.ws.send(json.dumps(payload))
    await second.event("session.message")
    await second.ws.send(json.dumps(payload))
    await first.event("session.message")
    return time.perf_counter() - sent


async def latency(cluster: Cluster, pairs: int) -> dict[str, float]:
    """``same``: both clients and the pool's owner on one process; ``cross``: the second
    entrant on the other process, so its enter, its match and the relay cross Redis."""
    a, b = cluster.servers
    members = [cluster.health(s)["cluster"]["node"] for s in cluster.servers]
    samples: dict[str, dict[str, list[float]]] = {
        k: {"match": [], "relay": []} for k in ("same", "cross")
    }
    for i in range(pairs):
        for kind, other in (("same", a), ("cross", b)):
            first, second = await Client.open(a), await Client.open(other)
            pool = owned_pool(f"lat{kind}{i}-", members[0], members)
            await first.request("pool.enter", enter(pool))
            sent = time.perf_counter()
            second_created = asyncio.ensure_future(second.event("session.created"))
            await second.ws.send(json.dumps({"type": "pool.enter", "data": enter(pool)}))
            created = await second_created
            samples[kind]["match"].append(time.perf_counter() - sent)
            await first.event("session.created")
            session = created["session_id"]
            for n in range(5):
                samples[kind]["relay"].append(await relay_round_trip(first, second, session, n))
            await first.ws.close()
            await second.ws.close()
    out: dict[str, float] = {}
    for kind, by in samples.items():
        for what, values in by.items():
            out[f"{kind}_{what}_p50_ms"] = pct(values, 0.5)
            out[f"{kind}_{what}_p99_ms"] = pct(values, 0.99)
    for what in ("match", "relay"):
        for q in ("p50", "p99"):
            same = out[f"same_{what}_{q}_ms"]
            out[f"cross_over_same_{what}_{q}"] = out[f"cross_{what}_{q}_ms"] / same
    return out


async def relay_only(
    servers: list[Server], owners: dict[str, str | None], pairs: int
) -> dict[str, list[float]]:
    """Relay round trips of ``pairs`` pairs per kind with both clients on ``servers[0]``,
    matched in a pool owned by the kind's member (``owners``: a node, ``None`` for a
    process alone); the kinds interleaved, pair by pair."""
    members = (
        [Cluster.health(s)["cluster"]["node"] for s in servers] if any(owners.values()) else []
    )
    samples: dict[str, list[float]] = {kind: [] for kind in owners}
    for i in range(pairs):
        for kind, pool_owner in owners.items():
            first, second = await Client.open(servers[0]), await Client.open(servers[0])
            prefix = f"hosted{kind}{i}-"
            pool = prefix if pool_owner is None else owned_pool(prefix, pool_owner, members)
            await first.request("pool.enter", enter(pool))
            await second.request("pool.enter", enter(pool))
            session = (await first.event("session.created"))["session_id"]
            await second.event("session.created")
            for n in range(5):
                samples[kind].append(await relay_round_trip(first, second, session, n))
            await first.ws.close()
            await second.ws.close()
    return samples


def hosting(args: argparse.Namespace) -> dict[str, float]:
    """Both clients of a pair on one process (``a``): relayed in a single process without
    ``--cluster`` (``single``), and in a 2-process cluster with their pool owned by the
    other process (``remote_owner``: the session formed there moves to ``a``, where its
    members are) or by ``a`` (``local_owner``), interleaved."""
    single = Cluster(1, None, server=args.server)
    try:
        alone = asyncio.run(relay_only(single.servers, {"single": None}, args.latency_pairs))
    finally:
        single.stop()
    cluster = Cluster(2, args.redis, server=args.server)
    try:
        a, b = (Cluster.health(s)["cluster"]["node"] for s in cluster.servers)
        kinds: dict[str, str | None] = {"remote_owner": b, "local_owner": a}
        both = asyncio.run(relay_only(cluster.servers, kinds, args.latency_pairs))
    finally:
        cluster.stop()
    if args.baseline_src is not None:  # main: the session stays at the pool's owner
        main_cluster = Cluster(2, args.redis, baseline_env(args.baseline_src), args.server)
        try:
            b = Cluster.health(main_cluster.servers[1])["cluster"]["node"]
            main_kinds: dict[str, str | None] = {"remote_owner_main": b}
            both |= asyncio.run(relay_only(main_cluster.servers, main_kinds, args.latency_pairs))
        finally:
            main_cluster.stop()
    out: dict[str, float] = {}
    for name, values in {**alone, **both}.items():
        out[f"{name}_relay_p50_ms"] = pct(values, 0.5)
        out[f"{name}_relay_p99_ms"] = pct(values, 0.99)
    for q in ("p50", "p99"):
        single_q = out[f"single_relay_{q}_ms"]
        out[f"remote_owner_over_single_{q}"] = out[f"remote_owner_relay_{q}_ms"] / single_q
        out[f"local_owner_over_single_{q}"] = out[f"local_owner_relay_{q}_ms"] / single_q
    return out


@contextlib.contextmanager
def own_redis() -> Iterator[tuple[str, str]]:
    """A redis-server of the bench's own (nothing saved) on a free port of 127.0.0.1 and on
    a unix socket: its ``redis://`` and ``unix://`` URLs."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("--unix needs redis-server on the PATH")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="bench-redis-") as directory:
        path = str(Path(directory) / "redis.sock")
        command = [binary, "--port", str(port), "--bind", "127.0.0.1"]
        command += ["--unixsocket", path, "--unixsocketperm", "700"]
        command += ["--save", "", "--appendonly", "no", "--dir", directory]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while not _answers(path):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the bench's redis-server did not start")
                time.sleep(0.05)
            yield f"redis://127.0.0.1:{port}/0", f"unix://{path}?db=0"
        finally:
            process.terminate()
            process.wait(10)


def _answers(path: str) -> bool:
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(0.5)
            sock.connect(path)
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def baseline_env(src: Path) -> dict[str, str]:
    """This environment with ``src``'s packages first on the path, before the editable installs."""
    paths = [str(p) for p in sorted(src.glob("packages/*/src"))]
    if not paths:
        raise SystemExit(f"--baseline-src {src}: no packages/*/src there")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def medians(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(r[key] for r in rows), 3) for key in rows[0]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--latency-pairs", type=int, default=100)
    parser.add_argument(
        "--baseline-src", type=Path, help="a checkout of main, for the 1-process row"
    )
    parser.add_argument("--only", choices=["throughput", "latency", "baseline", "hosting"])
    parser.add_argument(
        "--server",
        choices=["hypercorn", "picows"],
        default="hypercorn",
        help="the data plane's server (picows runs on uvloop, as `matchmaker` does by default)",
    )
    parser.add_argument(
        "--unix",
        action="store_true",
        help="a redis-server of the bench's own, on TCP and on a unix socket: adds the "
        "2_unix and latency_unix rows (--redis is then not used)",
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        unix = None
        if args.unix:
            args.redis, unix = stack.enter_context(own_redis())
        result = measure(args, unix)
    print(json.dumps(result, indent=2))


def measure(args: argparse.Namespace, unix: str | None) -> dict[str, Any]:
    """The rows' medians over ``args.runs`` runs; ``unix``: the URL of the unix-socket rows."""
    setups: dict[str, tuple[int, str | None]] = {
        "1": (1, None),
        "1_cluster": (1, args.redis),
        "2": (2, args.redis),
    }
    if unix is not None:
        setups["2_unix"] = (2, unix)  # next to its TCP row: the two run at close times
    setups["4"] = (4, args.redis)
    rows: dict[str, list[dict[str, float]]] = {}
    for run in range(args.runs):
        if args.only in (None, "throughput"):
            order = list(setups.items())
            for name, (count, redis) in order if run % 2 == 0 else order[::-1]:
                cluster = Cluster(count, redis, server=args.server)
                try:
                    rows.setdefault(name, []).append(throughput(cluster, args))
                finally:
                    cluster.stop()
        if args.only in (None, "latency"):
            sources: list[tuple[str, dict[str, str] | None, str]] = [("latency", None, args.redis)]
            if unix is not None:
                sources.append(("latency_unix", None, unix))
            if args.baseline_src is not None:
                sources.append(("latency_main", baseline_env(args.baseline_src), args.redis))
            for name, env, redis in sources if run % 2 == 0 else sources[::-1]:
                cluster = Cluster(2, redis, env, args.server)
                try:
                    rows.setdefault(name, []).append(
                        asyncio.run(latency(cluster, args.latency_pairs))
                    )
                finally:
                    cluster.stop()
        if args.only in (None, "hosting"):
            rows.setdefault("hosting", []).append(hosting(args))
        if args.baseline_src is not None and args.only in (None, "baseline"):
            pair = [("main", baseline_env(args.baseline_src)), ("this", None)]
            for name, env in pair if run % 2 == 0 else pair[::-1]:  # neither always goes first
                cluster = Cluster(1, None, env, args.server)
                try:
                    rows.setdefault(f"baseline_{name}", []).append(throughput(cluster, args))
                finally:
                    cluster.stop()
        print(json.dumps({name: r[-1] for name, r in rows.items()}), file=sys.stderr)
    result: dict[str, Any] = {name: medians(r) for name, r in rows.items()}
    one = result.get("1")
    for name in ("1_cluster", "2", "4", "2_unix"):
        if one is None or name not in result:
            continue
        row = result[name]
        for key in (
            "matches_per_s",
            "matches_per_cpu_s",
            "relay_msgs_per_s",
            "relay_msgs_per_cpu_s",
        ):
            row[f"{key}_over_1"] = round(row[key] / one[key], 2)
    if "baseline_main" in result:
        main_row, this = result["baseline_main"], result["baseline_this"]
        result["baseline_this_over_main"] = {
            key: round(this[key] / main_row[key], 2)
            for key in (
                "matches_per_s",
                "matches_per_cpu_s",
                "relay_msgs_per_s",
                "relay_msgs_per_cpu_s",
            )
        }
    return result


if __name__ == "__main__":
    main()
