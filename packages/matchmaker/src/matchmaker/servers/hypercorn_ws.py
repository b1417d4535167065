"""hypercorn's WebSocket stream, hardened where hypercorn 0.18 falls short of RFC 6455.

hypercorn builds one ``WSStream`` per upgraded connection (``hypercorn.protocol.h11``
and ``h2`` name the class at module level, and offer no option for any of this).
:func:`install` makes them build :class:`GuardedWSStream` instead, which closes these gaps
(the last three shared with picows, :mod:`matchmaker.servers.wire`):

- hypercorn accepts ``permessage-deflate`` whenever a client offers it (its
  ``Handshake.accept`` always lists ``PerMessageDeflate``), and wsproto inflates a whole
  frame before the size cap is checked: a 407 KB frame became 400 MiB. The offer is
  dropped from the request, so no extension is ever negotiated and a compressed frame
  (RSV1 set) is a protocol error (1002) like any other.
- A frame wsproto cannot parse (bad UTF-8 in a text frame, a reserved bit) comes out as a
  ``CloseConnection`` event while the connection is still open; hypercorn then drops the
  TCP connection without a close frame. The close frame with wsproto's code (1007 for
  bad UTF-8, 1002 otherwise) is sent first.
- After closing a message over the cap (1009) hypercorn keeps its buffer and goes on
  reading: a binary frame following a text one made ``StringIO.write`` raise ``TypeError``
  (an error-level traceback). The buffer is emptied and messages arriving after our close
  frame are dropped, as RFC 6455 allows once a close was sent.
- hypercorn answers an upgrade of another ``Sec-WebSocket-Version`` than 13 with a bare
  400; it gets the 426 with ``Sec-WebSocket-Version: 13`` RFC 6455 (4.2.2) asks for.
- After our close frame hypercorn waits for the client's close without a deadline, and
  wsproto parses every frame that comes meanwhile, in Python: the connection is ended
  ``CLOSE_TIMEOUT_S`` after our close (as picows's is), and past ``AFTER_CLOSE_FRAMES``
  what the client sends is dropped unparsed.
- Each frame of an unfinished message is charged ``FRAME_CHARGE`` bytes toward the cap,
  as under picows: a message split into empty frames closes 1009 at the same frame,
  where wsproto went on parsing them without end.
"""

from __future__ import annotations

import asyncio
import dataclasses

import hypercorn.protocol.h2
import hypercorn.protocol.h11
from hypercorn.protocol.events import (
    Body,
    Data,
    EndBody,
    Event,
    Request,
    Response,
    StreamClosed,
)
from hypercorn.protocol.ws_stream import FrameTooLargeError, WSStream
from wsproto.connection import ConnectionState
from wsproto.events import CloseConnection, Message, Ping
from wsproto.events import Event as WSProtoEvent
from wsproto.frame_protocol import CloseReason

from matchmaker.servers.wire import (
    AFTER_CLOSE_FRAMES,
    CLOSE_TIMEOUT_S,
    FRAME_CHARGE,
    version_refusal,
)

__all__ = ["GuardedWSStream", "install"]

_EXTENSIONS = b"sec-websocket-extensions"
_VERSION = b"sec-websocket-version"


class GuardedWSStream(WSStream):
    """A ``WSStream`` that negotiates no extension and closes every failure with a code."""

    # Messages' frames received since our close frame (set on the instance once counted).
    _after_close = 0
    # Ends the connection CLOSE_TIMEOUT_S after our close frame (once one was sent).
    _closing: asyncio.TimerHandle | None = None
    _ending: asyncio.Task[None] | None = None

    async def handle(self, event: Event) -> None:
        if isinstance(event, Data) and self._after_close >= AFTER_CLOSE_FRAMES:
            return  # not closing but sending: dropped unparsed until the close timeout
        if isinstance(event, StreamClosed) and self._closing is not None:
            self._closing.cancel()
        if isinstance(event, Request):
            versions = [value for name, value in event.headers if name == _VERSION]
            refusal = version_refusal(versions[0].decode("latin-1") if versions else None)
            if refusal is not None:
                await self._refuse(*refusal)
                return
            headers = [(name, value) for name, value in event.headers if name != _EXTENSIONS]
            event = dataclasses.replace(event, headers=headers)
        await super().handle(event)

    async def _refuse(self, status: int, fields: dict[str, str], body: bytes) -> None:
        """Answer the upgrade request with ``status`` (no app is started) and end."""
        headers = [(name.lower().encode(), value.encode()) for name, value in fields.items()]
        headers += [(b"content-length", b"%d" % len(body)), (b"connection", b"close")]
        await self.send(Response(stream_id=self.stream_id, status_code=status, headers=headers))
        await self.send(Body(stream_id=self.stream_id, data=body))
        await self.send(EndBody(stream_id=self.stream_id))
        self.closed = True

    async def _handle_events(self) -> None:
        for event in self.connection.events():
            if isinstance(event, Message):
                if self.connection.state is not ConnectionState.OPEN:
                    self._after_close += 1
                    if self._after_close < AFTER_CLOSE_FRAMES:
                        continue
                    break
                if event.frame_finished and not event.message_finished:
                    self.buffer.length += FRAME_CHARGE  # checked by extend, with the payload
                try:
                    self.buffer.extend(event)
                except FrameTooLargeError:
                    self.buffer.clear()
                    await self._send_wsproto_event(
                        CloseConnection(code=CloseReason.MESSAGE_TOO_BIG)
                    )
                    break
                if event.message_finished:
                    assert self.app_put is not None
                    await self.app_put(self.buffer.to_message())
                    self.buffer.clear()
            elif isinstance(event, Ping):
                await self._send_wsproto_event(event.response())
            elif isinstance(event, CloseConnection):
                if self.connection.state is ConnectionState.OPEN:
                    # wsproto's report of a frame it refused: the peer learns why.
                    await self._send_wsproto_event(CloseConnection(code=event.code))
                elif self.connection.state is ConnectionState.REMOTE_CLOSING:
                    await self._send_wsproto_event(event.response())
                await self.send(StreamClosed(stream_id=self.stream_id))

    async def _send_wsproto_event(self, event: WSProtoEvent) -> None:
        await super()._send_wsproto_event(event)
        if (
            isinstance(event, CloseConnection)
            and self._closing is None
            and self.connection.state is ConnectionState.LOCAL_CLOSING
        ):
            loop = asyncio.get_running_loop()
            self._closing = loop.call_later(CLOSE_TIMEOUT_S, self._close_timeout)

    def _close_timeout(self) -> None:
        """End a connection whose client did not answer our close frame in time (hypercorn
        waits for it without a deadline)."""
        if not self.closed:
            self._ending = asyncio.ensure_future(self.send(StreamClosed(stream_id=self.stream_id)))


def install() -> None:
    """Make hypercorn's HTTP/1.1 and HTTP/2 protocols build :class:`GuardedWSStream`."""
    hypercorn.protocol.h11.WSStream = GuardedWSStream  # type: ignore[attr-defined]
    hypercorn.protocol.h2.WSStream = GuardedWSStream  # type: ignore[attr-defined]
