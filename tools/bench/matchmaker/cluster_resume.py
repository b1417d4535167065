"""Benchmark resume across ``--cluster`` processes: what resuming elsewhere costs.

    python tools/bench/matchmaker/cluster_resume.py [--redis redis://127.0.0.1:6379/13]
        [--runs 3] [--pairs 40]

Two members, a and b. Each pair: ``first`` says hello to a, ``second`` to b, matched in
a pool a owns; ``first`` drops its socket and, once ``second`` sees it away, resumes on
a (``home``: its token's issuer) or on b (``relayed``: b hands the connection to a),
alternately. Measured per pair: the resume (``hello`` with the token sent -> its reply)
and relay round trips first -> second -> first after it. Prints one JSON object of
medians over ``--runs`` runs of p50/p99 in milliseconds, and relayed over home.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from cluster import Client, Cluster, enter, medians, owned_pool, pct, relay_round_trip
from run import Server
from server import BENCH_PROJECT
from websockets.asyncio.client import connect

PROJECT = str(BENCH_PROJECT["id"])
ROUND_TRIPS = 20


async def hello(server: Server, **fields: Any) -> tuple[Client, dict[str, Any]]:
    client = Client(await connect(server.url, max_size=None))
    welcome = await client.request("hello", {"v": 1, "project": PROJECT, **fields})
    assert welcome["ok"], welcome
    return client, welcome["data"]


async def one_pair(
    cluster: Cluster, members: list[str], i: int, where: str
) -> tuple[float, list[float]]:
    """The resume time and the relay round trips of one pair resumed at ``where``."""
    a, b = cluster.servers
    first, welcome = await hello(a)
    second, _ = await hello(b)
    pool = owned_pool(f"resume{where}{i}-", members[0], members)
    await first.request("pool.enter", enter(pool))
    await second.request("pool.enter", enter(pool))
    session = (await first.event("session.created"))["session_id"]
    await second.event("session.created")
    first.ws.transport.abort()  # lost, not closed: the client is away
    await second.event("session.member_status")
    sent = time.perf_counter()
    resume = {"token": welcome["resume_token"], "last_seq": 1}
    back, resumed = await hello(a if where == "home" else b, resume=resume)
    took = time.perf_counter() - sent
    assert resumed["resumed"], resumed
    trips: list[float] = []
    for n in range(ROUND_TRIPS):
        trips.append(await relay_round_trip(back, second, session, n))
    await back.ws.close()
    await second.ws.close()
    return took, trips


async def measure(cluster: Cluster, pairs: int) -> dict[str, float]:
    members = [cluster.health(s)["cluster"]["node"] for s in cluster.servers]
    resumes: dict[str, list[float]] = {"home": [], "relayed": []}
    trips: dict[str, list[float]] = {"home": [], "relayed": []}
    for i in range(pairs):
        for where in ("home", "relayed"):
            took, round_trips = await one_pair(cluster, members, i, where)
            resumes[where].append(took)
            trips[where].extend(round_trips)
    out: dict[str, float] = {}
    for where in ("home", "relayed"):
        for q, name in ((0.5, "p50"), (0.99, "p99")):
            out[f"{where}_resume_{name}_ms"] = pct(resumes[where], q)
            out[f"{where}_relay_{name}_ms"] = pct(trips[where], q)
    for what in ("resume", "relay"):
        for name in ("p50", "p99"):
            home = out[f"home_{what}_{name}_ms"]
            out[f"relayed_over_home_{what}_{name}"] = out[f"relayed_{what}_{name}_ms"] / home
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=40)
    args = parser.parse_args()
    rows: list[dict[str, float]] = []
    for _ in range(args.runs):
        cluster = Cluster(2, args.redis)
        try:
            rows.append(asyncio.run(measure(cluster, args.pairs)))
        finally:
            cluster.stop()
        print(json.dumps(rows[-1]), file=sys.stderr)
    print(json.dumps(medians(rows), indent=2))


if __name__ == "__main__":
    main()
