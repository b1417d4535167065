"""Serve the matchmaker data app (or a bare WebSocket echo app) with hypercorn, for benchmarks.

    python tools/bench/matchmaker/server.py --port 9100 [--echo] [--profile out.html]

Runs until SIGTERM/SIGINT. Raises RLIMIT_NOFILE to its hard limit so it can
hold many connections.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import signal
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from hypercorn.asyncio import serve
from hypercorn.config import Config

from matchmaker.config import Limits, ServerConfig
from matchmaker.data import create_data_app, tune_gc, websocket_max_message_size
from matchmaker.directory import ProjectDirectory
from matchmaker.model import MatchmakingPolicy, Project

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

BENCH_PROJECT = Project(
    id="bench",
    policies=(MatchmakingPolicy(name="duel", mode="auto", group_size=2, default=True),),
)


async def echo_app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
    """The floor: a bare ASGI WebSocket echo on the same hypercorn."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] != "websocket":
        return
    await receive()
    await send({"type": "websocket.accept"})
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return
        await send({"type": "websocket.send", "text": message.get("text")})


def raise_fd_limit() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def main(args: argparse.Namespace) -> None:
    raise_fd_limit()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    hyper = Config()
    hyper.bind = [f"127.0.0.1:{args.port}"]
    hyper.backlog = 4096
    hyper.accesslog = None
    hyper.graceful_timeout = 1.0
    app: Any
    if args.echo:
        app = echo_app
    else:
        limits = Limits(
            send_rate_per_s=1e9,
            send_burst=10**9,
            control_rate_per_s=1e9,
            control_burst=10**9,
            handshake_timeout_s=60.0,
            max_sessions_per_client=10**6,
        )
        config = ServerConfig(port=args.port, limits=limits)
        hyper.websocket_max_message_size = websocket_max_message_size(config)
        app = create_data_app(
            config,
            ProjectDirectory([BENCH_PROJECT]),
            shutdown=asyncio.Event(),
        )
    if not args.default_gc:
        tune_gc()
    await serve(app, hyper, shutdown_trigger=stop.wait)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--echo", action="store_true")
    parser.add_argument("--default-gc", action="store_true", help="skip tune_gc()")
    parser.add_argument("--profile", help="write a pyinstrument HTML profile here")
    arguments = parser.parse_args()
    if arguments.profile:
        from pyinstrument import Profiler

        with Profiler(async_mode="disabled") as profiler:
            asyncio.run(main(arguments))
        with open(arguments.profile, "w") as out:
            out.write(profiler.output_text(unicode=False, color=False, show_all=False))
    else:
        asyncio.run(main(arguments))
