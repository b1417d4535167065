"""granian's embedded server (``granian.server.embed``): Rust HTTP and WebSocket I/O.

The embedded server runs its Rust runtime beside the process's own event loop
and schedules the ASGI app on that loop, so it serves the same app object as
hypercorn would and shares the loop with the control plane.

What granian does not do by itself, and how this module closes the gap:

- It binds its own socket from a host and port (with port 0 the real port is
  never reported). ``_BoundServer`` hands it the socket the launcher already
  bound instead, so port 0 and the reported address work as under hypercorn.
- Its ``backpressure`` is the number of TCP connections one worker serves at
  once until their request is answered or upgraded (the embedded default is
  ``backlog``, 128: 128 idle keep-alive or half-open connections would hold
  every new client in the accept queue). It is set to the process's open-file
  limit: the descriptors, not granian, are the bound.
- On stop it stops accepting and runs the lifespan shutdown at once; it does not
  wait for open WebSockets. ``serve`` waits for the app's open connections to
  end (the data plane closes them with 1001 when shutdown is set), up to
  ``grace_s``, before it stops granian.
- It has no WebSocket message-size option: tungstenite's defaults apply (frames
  up to 16 MiB, messages up to 64 MiB are read whole; over that granian closes
  without a close code). The data plane enforces ``max_message`` itself (1009) once a
  frame arrives; docs/operations.md says what that means for memory. The fragments of
  an unfinished message are gathered inside tungstenite, out of the app's sight, and a
  text frame that is not UTF-8 reaches the app as a bare disconnect: neither can be
  closed with its code (1009, 1007) from here (tests/matchmaker/data/test_wire.py pins
  both as known failures).
- Its ``websocket.close`` waits for the lock a pending ``receive`` holds until a
  frame arrives, so a server-initiated close (1001, 3008, a heartbeat timeout)
  of a silent client would hang. ``_WebSocketCall`` cancels the pending receive
  first (granian then drops it and the lock) and hands the app
  ``websocket.disconnect`` once the close frame is out.
- The Rust thread that stops a worker still needs the GIL after the worker's stop
  callback: an interpreter exiting right after ``serve`` aborted the process about one
  time in three ("panic in a function that cannot unwind", the embedded server's open
  granian issue #693). ``serve`` returns only once the threads outside Python that
  appeared while it ran have ended (``_ended``, at most 5 s).
- Each WebSocket holds tungstenite's 128 KiB read buffer (``read_buffer_size``,
  zero-filled the first time the socket is polled for a frame, which is at once),
  which granian does not expose: ~130 KiB more per idle client than hypercorn
  (docs/benchmarks/matchmaker-servers.md, docs/operations.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import threading
from collections.abc import Awaitable
from typing import Any

from granian._granian import SocketHolder
from granian.constants import HTTPModes, Interfaces
from granian.log import LogLevels
from granian.server.embed import Server
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from matchmaker.servers.base import Listener

__all__ = ["serve"]

_log = logging.getLogger("matchmaker")

# granian's own log lines go through the standard logging tree (our handlers and
# format) instead of the stdout handler granian installs by default. Its INFO lines
# ("Spawning worker", "Embedded server is experimental!") repeat what ours say.
_LOGGING = {
    "loggers": {
        "_granian": {"handlers": [], "propagate": True},
        "granian.access": {"handlers": [], "propagate": True},
    }
}


class _Tracked:
    """The app, counting its open HTTP requests and WebSockets (lifespan excluded)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.active = 0
        self.idle = asyncio.Event()
        self.idle.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        self.active += 1
        self.idle.clear()
        try:
            if scope["type"] == "websocket":
                call = _WebSocketCall(receive, send)
                await self.app(scope, call.receive, call.send)
            else:
                await self.app(scope, receive, send)
        finally:
            self.active -= 1
            if not self.active:
                self.idle.set()


class _WebSocketCall:
    """One WebSocket's ``receive``/``send``, so that a close never waits for a frame."""

    __slots__ = ("_closed", "_pending", "_receive", "_send")

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive = receive
        self._send = send
        self._pending: Any = None
        self._closed: asyncio.Future[int] | None = None

    async def receive(self) -> Message:
        self._pending = awaitable = self._receive()
        try:
            return await awaitable
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if self._closed is None or (task is not None and task.cancelling()):
                raise
            return {"type": "websocket.disconnect", "code": await self._closed}
        finally:
            self._pending = None

    def send(self, message: Message) -> Awaitable[None]:
        # Every frame but a close goes straight to granian: no coroutine of ours per send.
        if message["type"] != "websocket.close" or self._pending is None:
            return self._send(message)
        return self._close(message)

    async def _close(self, message: Message) -> None:
        self._closed = closed = asyncio.get_running_loop().create_future()
        self._pending.cancel()
        try:
            await self._send(message)
        finally:
            closed.set_result(message.get("code", 1000))


class _BoundServer(Server):
    """An embedded granian server on a socket we bound (a duplicate of its descriptor)."""

    def __init__(self, fd: int, **options: Any) -> None:
        super().__init__(**options)
        self._bound_fd = fd

    def _init_shared_socket(self) -> None:
        self._ssp = None
        self._shd = _socket_holder(self._bound_fd)

    def begin_stop(self) -> None:
        """Stop accepting, run the lifespan shutdown and return from ``serve``."""
        self.stop()  # type: ignore[no-untyped-call]


def _socket_holder(fd: int) -> Any:
    # granian 2.8 takes (fd, uds, backlog), newer versions (fd, uds); the backlog
    # is already applied by our listen().
    try:
        return SocketHolder(fd, False, 1024)  # type: ignore[call-arg,unused-ignore]
    except TypeError:
        return SocketHolder(fd, False)  # type: ignore[call-arg,unused-ignore]


async def serve(listener: Listener, shutdown: asyncio.Event) -> None:
    """Serve ``listener`` with embedded granian until ``shutdown`` is set."""
    app = _Tracked(listener.app)
    files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    server = _BoundServer(
        os.dup(listener.sock.fileno()),
        target=app,
        interface=Interfaces.ASGI,
        http=HTTPModes.http1,
        websockets=listener.max_message is not None,
        backlog=1024,
        backpressure=max(1024, files),
        log_level=LogLevels.warning,
        log_dictconfig=_LOGGING,
    )
    foreign = _foreign_threads()
    served = asyncio.create_task(server.serve())
    stopping = asyncio.create_task(shutdown.wait())
    try:
        await asyncio.wait({served, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not served.done():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(listener.grace_s):
                    await app.idle.wait()
            if app.active:
                _log.warning("%d connections still open after the grace period", app.active)
            server.begin_stop()
        await served
    finally:
        stopping.cancel()
        if not served.done():
            server.begin_stop()
            await served
        await _ended(foreign)


def _foreign_threads() -> set[int]:
    """The native ids of this process's threads that Python does not run (granian's Rust
    threads among them), from Linux's ``/proc/self/task``; elsewhere none."""
    try:
        listed = os.listdir("/proc/self/task")
    except OSError:
        return set()
    return {int(tid) for tid in listed} - {thread.native_id for thread in threading.enumerate()}


async def _ended(before: set[int], within_s: float = 5.0) -> None:
    """Wait (at most ``within_s``) until no thread outside Python is left but ``before``.

    granian's thread that stops a worker calls its stop callback holding the GIL, and
    still needs the GIL to finish (granian 2.8). Were the interpreter to exit in between
    (``asyncio.run`` returning right after ``serve``), that thread would be ended inside
    Rust code that cannot unwind and the process would abort ("panic in a function that
    cannot unwind"): about one exit in three on a busy machine.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    # No event to wait on: the thread is granian's. Sleeping releases the GIL it needs.
    while _foreign_threads() - before and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.001)
