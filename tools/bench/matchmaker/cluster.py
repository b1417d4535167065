"""Benchmark ``--cluster``: cross-process against same-process latency, matching per CPU second.

    python tools/bench/matchmaker/cluster.py [--redis redis://127.0.0.1:6379/13] [--pairs 200]

Starts real ``matchmaker`` launchers (hypercorn, zero-config) in one fresh cluster,
drives them from this process over loopback and prints one JSON object:

- ``latency``: p50/p99 of enter->matched (the second entrant's ``pool.enter`` sent to its
  ``session.created``) and of a relay round trip, with both clients on one process
  (``same``) and on two (``cross``), measured interleaved in the same run, and their ratios;
- ``matching``: matches/s and matches per server CPU second (utime+stime from /proc)
  with 1 and 2 processes, each entering clients re-entering as soon as matched.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from matchmaker.cluster.ring import owner, pool_key

TICKS = os.sysconf("SC_CLK_TCK")


class Process:
    def __init__(self, redis: str, name: str) -> None:
        script = shutil.which("matchmaker", path=str(Path(sys.executable).parent))
        assert script is not None
        self.log = tempfile.NamedTemporaryFile(suffix=".log")  # noqa: SIM115
        args = ["--host", "127.0.0.1", "--port", "0", "--server", "hypercorn"]
        args += ["--send-rate-per-s=1e9", "--send-burst=1000000000"]
        args += ["--control-rate-per-s=1e9", "--control-burst=1000000000"]
        self.process = subprocess.Popen(
            [script, *args, "--cluster", redis, "--cluster-name", name],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while True:
            text = Path(self.log.name).read_text()
            if "data plane listening on http://127.0.0.1:" in text:
                port = text.split("data plane listening on http://127.0.0.1:")[1].split()[0]
                self.port = int(port)
                break
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(text)
            time.sleep(0.05)
        self.url = f"ws://127.0.0.1:{self.port}/ws"

    def cluster(self) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.port}/healthz"
        with urllib.request.urlopen(url, timeout=2) as response:
            cluster: dict[str, Any] = json.load(response)["cluster"]
            return cluster

    def members(self) -> int:
        members: int = self.cluster()["members"]
        return members

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def start(redis: str, count: int) -> list[Process]:
    name = f"bench-{uuid.uuid4().hex[:8]}"
    processes = [Process(redis, name) for _ in range(count)]
    deadline = time.monotonic() + 15
    while not all(p.members() == count for p in processes):
        if time.monotonic() > deadline:
            raise RuntimeError("the members did not find each other")
        time.sleep(0.1)
    return processes


class Client:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = 0
        self.project = ""

    @classmethod
    async def open(cls, url: str) -> Client:
        client = cls(await connect(url, max_size=None))
        welcome = await client.request("hello", {"v": 1})
        client.project = welcome["data"]["project"]
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


def owned_pool(prefix: str, project: str, target: str, members: list[str]) -> str:
    """A pool name that rendezvous hashing gives to ``target``."""
    i = 0
    while owner(pool_key(project, f"{prefix}{i}"), members) != target:
        i += 1
    return f"{prefix}{i}"


async def latency(processes: list[Process], pairs: int) -> dict[str, Any]:
    """``same``: both clients and the pool's owner on one process; ``cross``: the second
    entrant on the other process, so its enter, its match and the relay cross Redis."""
    a, b = processes
    members = [p.cluster()["node"] for p in processes]
    samples: dict[str, dict[str, list[float]]] = {
        k: {"match": [], "relay": []} for k in ("same", "cross")
    }
    for i in range(pairs):
        for kind, other in (("same", a), ("cross", b)):
            first, second = await Client.open(a.url), await Client.open(other.url)
            pool = owned_pool(f"lat{kind}{i}-", first.project, members[0], members)
            await first.request("pool.enter", enter(pool))
            sent = time.perf_counter()
            second_created = asyncio.ensure_future(second.event("session.created"))
            await second.ws.send(json.dumps({"type": "pool.enter", "data": enter(pool)}))
            created = await second_created
            samples[kind]["match"].append(time.perf_counter() - sent)
            await first.event("session.created")
            session = created["session_id"]
            for n in range(5):
                sent = time.perf_counter()
                payload = {"type": "session.send", "data": {"session_id": session, "data": n}}
                await first.ws.send(json.dumps(payload))
                await second.event("session.message")
                await second.ws.send(json.dumps(payload))
                await first.event("session.message")
                samples[kind]["relay"].append(time.perf_counter() - sent)
            await first.ws.close()
            await second.ws.close()
    out: dict[str, Any] = {}
    for kind, by in samples.items():
        for what, values in by.items():
            out[f"{kind}_{what}_p50_ms"] = round(pct(values, 0.5), 3)
            out[f"{kind}_{what}_p99_ms"] = round(pct(values, 0.99), 3)
    for what in ("match", "relay"):
        for q in ("p50", "p99"):
            same = out[f"same_{what}_{q}_ms"]
            out[f"cross_over_same_{what}_{q}"] = round(out[f"cross_{what}_{q}_ms"] / same, 2)
    return out


async def matching(processes: list[Process], clients: int, seconds: float) -> dict[str, Any]:
    """Each client re-enters one of 20 pools as soon as it is matched, for ``seconds``."""
    opened = [await Client.open(processes[i % len(processes)].url) for i in range(clients)]
    matches = 0
    stop = time.monotonic() + seconds

    async def loop(client: Client, pool: str) -> None:
        nonlocal matches
        while time.monotonic() < stop:
            reply = await client.request("pool.enter", enter(pool))
            if not reply.get("ok"):
                raise RuntimeError(reply)
            created = await client.event("session.created")
            await client.request("session.leave", {"session_id": created["session_id"]})
            matches += 1

    cpu = sum(p.cpu_s() for p in processes)
    started = time.monotonic()
    tasks = [asyncio.ensure_future(loop(c, f"m{i % 20}")) for i, c in enumerate(opened)]
    # At the deadline some clients still wait for a partner that stopped: stop them too.
    await asyncio.wait(tasks, timeout=seconds + 2)
    elapsed = time.monotonic() - started
    cpu = sum(p.cpu_s() for p in processes) - cpu
    for task in tasks:
        task.cancel()
    for task in tasks:
        if not task.cancelled() and task.done() and task.exception() is not None:
            raise RuntimeError("a client failed") from task.exception()
    for client in opened:
        await client.ws.close()
    pairs = matches / 2
    return {
        "processes": len(processes),
        "matches_per_s": round(pairs / min(elapsed, seconds), 1),
        "server_cpu_s": round(cpu, 2),
        "matches_per_cpu_s": round(pairs / cpu, 1) if cpu else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    result: dict[str, Any] = {}
    processes = start(args.redis, 2)
    try:
        result["latency"] = asyncio.run(latency(processes, args.pairs))
        print(json.dumps(result["latency"]), file=sys.stderr)
    finally:
        for p in processes:
            p.stop()
    result["matching"] = []
    for count in (1, 2):
        processes = start(args.redis, count)
        try:
            result["matching"].append(asyncio.run(matching(processes, args.clients, args.seconds)))
        finally:
            for p in processes:
                p.stop()
    one, two = result["matching"]
    if one["matches_per_cpu_s"] and two["matches_per_cpu_s"]:
        result["two_over_one_per_cpu_s"] = round(
            two["matches_per_cpu_s"] / one["matches_per_cpu_s"], 2
        )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
