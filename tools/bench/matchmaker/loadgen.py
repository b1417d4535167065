"""Load generator for the matchmaker data plane (loopback only, bounded in count and time).

    python loadgen.py connections --url ws://127.0.0.1:9100/ws --count 10000
    python loadgen.py matching --url ... --rate 1000 --duration 10 --clients 2000
    python loadgen.py relay --url ... --pairs 50 --window 4 --duration 10 [--echo] [--numbered]

Prints one JSON object with the measurements on stdout, after a ``MEASURING``
line when the measured phase starts. ``connections`` prints ``HOLDING`` once
every client is past ``hello`` and holds them until its stdin closes (so the
driver can sample the server's RSS).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

import msgspec
from fastws import FastWebSocket

_decode = msgspec.json.Decoder().decode
HELLO = b'{"id":"h","type":"hello","data":{"v":1,"project":"bench"}}'
SEND = b'{"type":"session.send",'
LEAVE = b'{"id":"l","type":"session.leave","data":{"session_id":"%b"}}'


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def open_many(
    url: str, count: int, on_message: Callable[[FastWebSocket, bytes], None], hello: bool
) -> list[FastWebSocket]:
    """Open ``count`` sockets (200 at a time), past ``hello`` unless told otherwise."""
    gate = asyncio.Semaphore(200)
    sockets: list[FastWebSocket] = []

    async def one() -> None:
        async with gate:
            if not hello:
                sockets.append(await FastWebSocket.open(url, on_message))
                return
            ready: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
            ws = await FastWebSocket.open(url, lambda _, payload: ready.set_result(payload))
            ws.send(HELLO)
            reply = _decode(await ready)
            assert reply["ok"], reply
            ws.on_message = on_message
            sockets.append(ws)

    await asyncio.gather(*(one() for _ in range(count)))
    return sockets


def _ignore(ws: FastWebSocket, payload: bytes) -> None:
    pass


async def connections(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    sockets = await open_many(args.url, args.count, _ignore, hello=True)
    elapsed = time.perf_counter() - started
    print("HOLDING", flush=True)
    loop = asyncio.get_running_loop()
    await asyncio.wait_for(loop.run_in_executor(None, sys.stdin.read), timeout=120)
    alive = sum(1 for s in sockets if not s.closed.done())
    for ws in sockets:
        ws.close()
    return {"connected": len(sockets), "alive_at_end": alive, "connect_s": elapsed}


async def matching(args: argparse.Namespace) -> dict[str, Any]:
    idle: list[FastWebSocket] = []
    entered_at: dict[FastWebSocket, float] = {}
    latencies: list[float] = []
    sessions: set[bytes] = set()
    errors: list[bytes] = []

    def on_message(ws: FastWebSocket, payload: bytes) -> None:
        # Classified by prefix: decoding every reply would cost the generator more than
        # it costs the server.
        if payload.startswith(b'{"type":"session.created"'):
            latencies.append(time.perf_counter() - entered_at.pop(ws))
            start = payload.index(b'"session_id":"') + 14
            session_id = payload[start : payload.index(b'"', start)]
            sessions.add(session_id)
            ws.send(LEAVE % session_id)
            idle.append(ws)
        elif b'"ok":false' in payload:
            errors.append(payload)

    idle.extend(await open_many(args.url, args.clients, on_message, hello=True))
    enter = b'{"id":"e","type":"pool.enter","data":{"policy":"duel"}}'
    interval = 1.0 / args.rate
    print("MEASURING", flush=True)
    start = time.perf_counter()
    offered = starved = 0
    deadline = start + args.duration
    next_at = start
    while (now := time.perf_counter()) < deadline:
        while next_at <= now:  # every entry that is due, catching up if the loop fell behind
            next_at += interval
            if not idle:
                starved += 1
                continue
            ws = idle.pop()
            entered_at[ws] = time.perf_counter()
            offered += 1
            ws.send(enter)
        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
    sessions_in_time = len(sessions)
    drain_until = time.perf_counter() + 2.0
    while True:
        if len(entered_at) <= 1 or time.perf_counter() > drain_until:
            break
        await asyncio.sleep(0.01)
    for ws in [*idle, *entered_at]:
        ws.close()
    return {
        "offered_enters": offered,
        "starved": starved,
        "errors": len(errors),
        "matched_clients": len(latencies),
        "sessions": len(sessions),
        "matches_per_s": sessions_in_time / args.duration,
        "enters_per_s": offered / args.duration,
        "p50_ms": percentile(latencies, 0.50) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "max_ms": max(latencies, default=float("nan")) * 1000,
        "unmatched_at_end": len(entered_at),
    }


async def relay(args: argparse.Namespace) -> dict[str, Any]:
    """Balls in flight: echo bounces socket -> server -> same socket; relay A -> B -> A.
    ``--numbered``: every send carries the next ``seq`` of its socket (exactly once), so
    every event the server sends carries an ``ack``."""
    latencies: list[float] = []
    counted = 0
    measure_from = stop_at = float("inf")
    prefixes: dict[FastWebSocket, bytes] = {}
    seqs: dict[FastWebSocket, int] = {}

    def frame(ws: FastWebSocket, now: float) -> bytes:
        if not prefixes:
            return b'{"t":%r}' % now
        if not args.numbered:
            return b"%b%r}}" % (prefixes[ws], now)
        seq = seqs[ws] = seqs.get(ws, 0) + 1
        return b'%b"seq":%d,%b%r}}' % (SEND, seq, prefixes[ws][len(SEND) :], now)

    def on_message(ws: FastWebSocket, payload: bytes) -> None:
        nonlocal counted
        if args.echo:
            sent = float(payload[5:-1])
        else:
            message = _decode(payload)
            if message["type"] != "session.message":
                return
            sent = float(message["data"]["data"])
        now = time.perf_counter()
        if now >= stop_at:
            return
        if now >= measure_from:
            counted += 1
            if counted % 8 == 0:
                latencies.append(now - sent)
        ws.send(frame(ws, now))

    sockets = await open_many(args.url, args.pairs * 2, on_message, hello=not args.echo)
    if not args.echo:
        for i in range(args.pairs):
            pair = sockets[2 * i : 2 * i + 2]
            session_id = None
            for ws in pair:
                joined: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
                ws.on_message = lambda _, p, f=joined: None if f.done() else f.set_result(p)
                ws.send(
                    b'{"id":"j","type":"session.join","data":{"session":"r%d","create":true}}' % i
                )
                session_id = _decode(await joined)["data"]["session_id"]
                ws.on_message = on_message
            for ws in pair:
                prefixes[ws] = b'%b"data":{"session_id":"%b","data":' % (
                    SEND,
                    session_id.encode(),
                )
    print("MEASURING", flush=True)
    start = time.perf_counter()
    measure_from = start + args.warmup
    stop_at = measure_from + args.duration
    for ws in sockets:
        for _ in range(args.window):
            now = time.perf_counter()
            ws.send(frame(ws, now))
    await asyncio.sleep(args.warmup + args.duration + 0.2)
    for ws in sockets:
        ws.close()
    return {
        "messages": counted,
        "messages_per_s": counted / args.duration,
        "p50_ms": percentile(latencies, 0.50) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=["connections", "matching", "relay"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--window", type=int, default=4, help="balls in flight per socket")
    parser.add_argument("--echo", action="store_true")
    parser.add_argument("--numbered", action="store_true", help="relay: sends carry a seq")
    args = parser.parse_args()
    if not args.url.startswith("ws://127.0.0.1:"):
        parser.error("loopback only: --url must be ws://127.0.0.1:<port>/...")
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    scenario = {"connections": connections, "matching": matching, "relay": relay}[args.scenario]
    cpu0 = time.process_time()
    result = asyncio.run(asyncio.wait_for(scenario(args), timeout=600))
    result["loadgen_cpu_s"] = time.process_time() - cpu0
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
