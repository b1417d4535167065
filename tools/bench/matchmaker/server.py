"""The benchmark's servers: the real ``matchmaker`` launcher, or a bare WebSocket echo floor.

    python tools/bench/matchmaker/server.py --port 9100 --management-port 9101 [--default-gc]
    python tools/bench/matchmaker/server.py --port 9100 --echo [--profile out.txt]
    ... [--cluster redis://127.0.0.1:6379/13 --cluster-name NAME]   (one member of a cluster)
    ... [--server hypercorn|picows]   (default hypercorn; picows on uvloop)

Without ``--echo`` this is ``matchmaker`` as users run it (the same CLI and
``serve_until_signalled``: hypercorn's frame cap, ``tune_gc``, the open-file
limit), with a management key, a memory store and the per-connection rate
limits lifted so the load generator measures the server, not the limiter. The
driver declares the ``bench`` Project through ``/admin`` (``BENCH_PROJECT``).
``--default-gc`` replaces ``tune_gc`` with a no-op, for the comparison row.
Runs until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import signal
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import matchmaker.server
from matchmaker.cli import main as matchmaker_main
from matchmaker.servers import Listener, event_loop_factory, serve_function

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

MANAGEMENT_KEY = "bench-management-key"
BENCH_PROJECT = {
    "id": "bench",
    "policies": [{"name": "duel", "mode": "auto", "groupSize": 2, "default": True}],
}
UNLIMITED = [
    "--send-rate-per-s=1e9",
    "--send-burst=1000000000",
    "--control-rate-per-s=1e9",
    "--control-burst=1000000000",
    "--handshake-timeout-s=60",
    "--max-sessions-per-client=1000000",
]


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


class EchoFrames:
    """The floor under picows: every frame sent back through the same frame seam
    (:class:`~matchmaker.servers.base.FrameApp`) the data plane is served on."""

    def answer_get(self, target: str, headers: list[tuple[bytes, bytes]]) -> Any:
        return None

    def open_socket(self, peer: Any) -> Any:
        return _Echo(peer)

    async def startup(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await echo_app(scope, receive, send)


class _Echo:
    def __init__(self, peer: Any) -> None:
        self.on_frame = peer.send

    def pause(self) -> None:
        return None

    def resume(self) -> None:
        return None

    def on_closed(self, code: int) -> None:
        return None


async def serve_echo(port: int, server: str) -> None:
    """The echo app on ``server`` through the launcher's seam (as the data plane is served)."""
    raise_fd_limit()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    sock = socket.create_server(("127.0.0.1", port), backlog=4096)
    sock.setblocking(False)
    app = EchoFrames() if server == "picows" else echo_app
    await serve_function(server)(Listener(app, sock, 1.0, 1 << 20), stop)


# The picows read buffer to try (idle_memory.py's rows); unset: the launcher's.
READ_BUFFER = "BENCH_PICOWS_READ_BUFFER"


def serve_matchmaker(args: argparse.Namespace) -> None:
    if os.environ.get(READ_BUFFER):
        from matchmaker.servers import picows_server

        picows_server.READ_BUFFER_BYTES = int(os.environ[READ_BUFFER])
    if args.default_gc:
        matchmaker.server.tune_gc = lambda: None  # the comparison row: default GC thresholds
    flags = ["--port", str(args.port), "--management-port", str(args.management_port)]
    flags += ["--management-key", MANAGEMENT_KEY, "--store", "memory://", "--log-level", "warning"]
    flags += ["--server", args.server]
    if args.cluster:
        flags += ["--cluster", args.cluster, "--cluster-name", args.cluster_name]
    matchmaker_main([*flags, *UNLIMITED], standalone_mode=True)


def start(args: argparse.Namespace) -> None:
    if args.echo:
        with asyncio.Runner(loop_factory=event_loop_factory(args.server)) as runner:
            runner.run(serve_echo(args.port, args.server))
    else:
        serve_matchmaker(args)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--management-port", type=int, default=0)
    parser.add_argument("--echo", action="store_true")
    parser.add_argument("--server", choices=["hypercorn", "picows"], default="hypercorn")
    parser.add_argument("--default-gc", action="store_true", help="skip tune_gc()")
    parser.add_argument("--cluster", help="join the cluster at this Redis URL")
    parser.add_argument("--cluster-name", default="matchmaker")
    parser.add_argument("--profile", help="write a pyinstrument text profile here")
    arguments = parser.parse_args()
    if arguments.profile:
        from pyinstrument import Profiler

        # click exits with SystemExit after a signalled stop; the profile is written after it.
        with Profiler(async_mode="disabled") as profiler, contextlib.suppress(SystemExit):
            start(arguments)
        with open(arguments.profile, "w") as out:
            out.write(profiler.output_text(unicode=False, color=False, show_all=False))
    else:
        start(arguments)
