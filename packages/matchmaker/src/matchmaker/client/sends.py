"""Exactly-once sending over whichever connection is current (``docs/protocol.md``,
"Exactly once"): number and hold each send, write the held ones the connection has not
seen, in order, forget them at the server's ``ack``, ask for an ``ack`` past half the cap,
and write again what the server did not take.

The client gives it how to write (``False``: the socket is gone, the resume will write
again), whether it is open, and how to run a task; it knows nothing else of the client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from matchmaker.client.pace import Pace
from matchmaker.client.unacked import Unacked
from matchmaker.client.wire import encode

__all__ = ["Sends"]

PING = '{"type":"ping"}'


@dataclass
class Sends:
    """The numbered sends of one client, across its connections."""

    unacked: Unacked
    write: Callable[[str], Awaitable[bool]]
    is_open: Callable[[], bool]
    spawn: Callable[[Coroutine[Any, Any, None]], None]
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    pace: Pace | None = None  # the server's send bucket, once hello told it
    asked_ack: bool = False  # a ping for an ack is on its way
    flush_due: bool = False  # held sends are to be written later (pacing, a refusal)

    async def send(self, message: dict[str, Any]) -> None:
        """Number and hold ``message`` (``session.send`` data), then write it if open;
        past the cap ``client.backpressure``, over a frame ``protocol.too_large``."""
        self.unacked.hold(lambda seq: encode({"type": "session.send", "seq": seq, "data": message}))
        if self.is_open():
            await self.flush()

    def acknowledged(self, ack: int) -> None:
        """The server's ``ack``, from any frame."""
        self.unacked.acknowledge(ack)
        self.asked_ack = False

    def welcome(self, reply: dict[str, Any]) -> int:
        """A ``hello`` reply: the frame cap, and (resuming) the ``ack`` of what the server
        took; the rest are for this connection to write again. Returns how many."""
        self.unacked.frame_limit = reply["limits"]["max_frame_bytes"]
        self.pace = Pace.full(reply["limits"], asyncio.get_running_loop().time())
        self.unacked.acknowledge(int(reply.get("ack", 0)))
        self.unacked.rewind()
        self.asked_ack = False
        return len(self.unacked.held)

    def waiting(self) -> bool:
        """Whether sends wait for an ``ack`` (the heartbeat then pings for one)."""
        return bool(self.unacked.held)

    async def flush(self) -> None:
        """Write the held sends this connection has not seen, in order, as fast as the
        server's bucket allows (the rest later); then, past half the cap, ask for an
        ``ack``."""
        unacked = self.unacked
        loop = asyncio.get_running_loop()
        async with self.lock:
            for held in unacked.unwritten():
                wait_s = self.pace.take(loop.time()) if self.pace is not None else 0.0
                if wait_s:
                    self._flush_in(wait_s)
                    break
                if not self.is_open() or not await self.write(held.frame):
                    return
                unacked.written = held.seq
        if unacked.past_half() and not self.asked_ack:
            self.asked_ack = True
            await self.write(PING)

    def refused(self, error: Any) -> bool:
        """Schedule writing again a numbered send the server did not take:
        ``rate.limited`` (after ``retry_after_ms``; still reported, the game sends too
        fast) or the gap refusal of the sends after such a one (written again with it).
        Returns whether the error is such a gap, which is not worth reporting."""
        body = error if isinstance(error, dict) else {}
        details = body.get("details")
        if not isinstance(details, dict):
            return False
        gap = body.get("code") == "protocol.bad_request" and details.get("field") == "seq"
        if gap:
            self.unacked.again_from(int(details.get("expected", self.unacked.ack + 1)))
            self._flush_in(0.0)
        elif body.get("code") == "rate.limited" and isinstance(details.get("seq"), int):
            self.unacked.again_from(details["seq"])
            self._flush_in(float(details.get("retry_after_ms", 0)) / 1000)
        return gap

    def _flush_in(self, delay_s: float) -> None:
        if not self.flush_due:
            self.flush_due = True
            self.spawn(self._flush_later(delay_s))

    async def _flush_later(self, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        self.flush_due = False
        await self.flush()
