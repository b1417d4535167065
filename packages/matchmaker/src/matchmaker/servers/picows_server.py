"""picows: WebSocket frames straight from Cython to the data plane, no ASGI between.

The app must be a :class:`~matchmaker.servers.base.FrameApp` (the data plane's is).
Each upgraded socket gets a :class:`_Socket` listener whose ``on_ws_frame`` hands whole
messages to the app's handler synchronously; the handler writes its frames back
through the same object (:class:`~matchmaker.servers.base.SocketPeer`), straight to
the transport. Every other GET is answered from the upgrade hook
(``WSUpgradeResponse``), with the app's status, headers and body.

What picows leaves to us, and how this module closes it:

- It hands over frames, not messages: the fragments of a message are joined here into
  one buffer as they come, and an unfinished message whose frames cost more than the
  hard cap (``max_message``; each frame but the last :data:`~matchmaker.servers.wire.FRAME_CHARGE`
  more than its payload) closes 1009 before more is held. One frame over the cap is
  refused by picows itself (``max_frame_size``, 1009) before it is buffered.
- It does not check text frames are UTF-8 (1007 here), nor the reserved bits: no
  extension is ever negotiated, so a frame with RSV1, RSV2 or RSV3 set closes 1002,
  a ping too (picows's automatic pong is off: pings are answered here, after the check).
- Once our close frame is out it reads on until the client's close: a client that sends
  :data:`~matchmaker.servers.wire.AFTER_CLOSE_FRAMES` frames meanwhile is no longer
  read, and the close timeout ends it.
- A close frame from the client is answered here, and the TCP connection ended; a code
  picows lets through but no endpoint may send (1006, 5000 and up) is answered 1002.
- It upgrades ``Sec-WebSocket-Version`` 7 and 8: any version but 13 is answered 426.
- Its log lines: a line per accepted connection at INFO (the peer's address) and a
  client's protocol error at ERROR. :class:`_QuietLog` moves them one level down
  (DEBUG, WARNING): a client's bad frame is not a fault of the server.
- On stop it only stops accepting: ``serve`` gives open sockets ``grace_s`` to end
  (the data plane closes them with 1001), then drops the rest and runs the app's
  shutdown.
- It writes each frame to the socket as it is sent, one system call per frame. Here
  the frames leaving for one socket are framed into its pending list instead and
  written with one ``writelines`` (one ``writev``) at the end of the batch of frames
  picows hands over from one read (``last_in_buffer``), or, for frames sent outside
  such a batch (timers, tasks), once the loop turns (:class:`_Batch`): a relayed
  message costs a fraction of a system call when a read carries several. Order is
  kept (the pending frames go out before a close frame of ours), and a socket whose
  pending frames pass :data:`FLUSH_BYTES` is written at once, so the transport's
  high-water mark (``pause_writing``, the data plane's bounded queue) still bounds
  what is held.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from picows import (
    WSCloseCode,
    WSFrame,
    WSListener,
    WSMsgType,
    WSTransport,
    WSUpgradeRequest,
    WSUpgradeResponse,
    WSUpgradeResponseWithListener,
    ws_create_server,
)

from matchmaker.servers.base import FrameApp, Listener, SocketHandler
from matchmaker.servers.wire import (
    AFTER_CLOSE_FRAMES,
    CLOSE_TIMEOUT_S,
    FRAME_CHARGE,
    close_code_refused,
    version_refusal,
)

__all__ = ["READ_BUFFER_BYTES", "serve"]

_log = logging.getLogger("matchmaker")

# Each socket's first read buffer (picows grows it for bigger frames and keeps the
# largest). Measured per idle client past hello: 30.1 KiB with picows's default 16 KiB,
# 18.1 KiB with 4 KiB, 16.1 KiB with 1 KiB, which most relayed frames would outgrow
# (docs/benchmarks.md, idle memory).
READ_BUFFER_BYTES = 4096
# How long an accepted TCP connection may take to send its upgrade request.
UPGRADE_TIMEOUT_S = 10.0

# Pending frames of one socket past this many payload bytes are written at once, not at
# the end of the batch: the transport's high-water mark (64 KiB) then pauses the socket
# as if each frame had been written on its own.
FLUSH_BYTES = 16384

_NO_CODE = 1005
_PROTOCOL_ERROR = 1002
_INVALID_TEXT = 1007
_TOO_BIG = 1009
_GOING_AWAY = 1001
# The message types as plain constants: an enum member looked up on its class costs a
# Python attribute lookup (~90 ns) on every frame in and out.
_TEXT = WSMsgType.TEXT
_BINARY = WSMsgType.BINARY
_CLOSE = WSMsgType.CLOSE
_PING = WSMsgType.PING
_PONG = WSMsgType.PONG


# A server's text frame header, for each payload length under 126 (one byte of length).
_SHORT_HEADS = tuple(bytes((0x81, size)) for size in range(126))


def _text_head(size: int) -> bytes:
    """The header of an unmasked, final text frame of ``size`` payload bytes (RFC 6455 5.2)."""
    if size < 126:
        return _SHORT_HEADS[size]
    if size < 65536:
        return b"\x81\x7e" + size.to_bytes(2, "big")
    return b"\x81\x7f" + size.to_bytes(8, "big")


class _QuietLog(logging.LoggerAdapter[logging.Logger]):
    """picows's logger, one level down: per-connection INFO lines become DEBUG, and a
    client's protocol error (its ERROR) a WARNING."""

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        if level >= logging.ERROR:
            level = logging.WARNING
        elif level >= logging.INFO:
            level = logging.DEBUG
        super().log(level, msg, *args, **kwargs)

    def info(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self.log(logging.INFO, msg, *args, **kwargs)

    def error(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self.log(logging.ERROR, msg, *args, **kwargs)


class _Batch:
    """The sockets with frames pending, written together: at the end of a read's batch
    of frames, and once per loop turn for frames sent outside one."""

    __slots__ = ("_loop", "_scheduled", "dirty")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._scheduled = False
        self.dirty: list[_Socket] = []

    def mark(self, sock: _Socket) -> None:
        """``sock`` has its first pending frame: it is written by the next :meth:`flush`."""
        self.dirty.append(sock)
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._turn)

    def _turn(self) -> None:
        self._scheduled = False
        self.flush()

    def flush(self) -> None:
        """Write every socket's pending frames (each in one system call)."""
        dirty = self.dirty
        if dirty:
            self.dirty = []
            for sock in dirty:
                sock.flush()


class _Served:
    """What every socket of one server shares: the app, the hard cap, the open sockets."""

    def __init__(self, app: FrameApp, max_message: int) -> None:
        self.app = app
        self.max_message = max_message
        self.sockets: set[_Socket] = set()
        self.idle = asyncio.Event()
        self.idle.set()
        self.loop = asyncio.get_running_loop()
        self.batch = _Batch(self.loop)

    def route(self, request: WSUpgradeRequest) -> Any:
        """picows's upgrade hook: our path upgrades, any other GET is answered whole."""
        headers = [
            (name.lower().encode(), value.encode()) for name, value in request.headers.items()
        ]
        answer = self.app.answer_get(request.path.decode("latin-1"), headers)
        if answer is None:
            answer = version_refusal(request.headers.get("sec-websocket-version"))
            if answer is None:
                return _Socket(self)
        status, fields, body = answer
        if status < 400:
            response = WSUpgradeResponse.create_ok_response(body, fields)
        else:
            response = WSUpgradeResponse.create_error_response(status, body, fields)
        return WSUpgradeResponseWithListener(response, None)

    def opened(self, sock: _Socket) -> None:
        self.sockets.add(sock)
        self.idle.clear()

    def ended(self, sock: _Socket) -> None:
        self.sockets.discard(sock)
        if not self.sockets:
            self.idle.set()


class _Socket(WSListener):
    """One upgraded WebSocket: messages in, frames out, the app's handler between."""

    def __init__(self, served: _Served) -> None:
        super().__init__()
        self._served = served
        self._batch = served.batch
        self._transport: WSTransport | None = None
        # Framed and waiting for the batch's end: headers and payloads, in order.
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._writelines: Callable[[list[bytes]], object] | None = None
        self._handler: SocketHandler | None = None
        # The handler's on_frame, bound once: it is called for every message.
        self._on_frame: Callable[[str | bytes], None] | None = None
        self._parts: bytearray | None = None  # an unfinished message's fragments, joined
        self._text = False
        self._size = 0  # what the fragments cost toward the hard cap (FRAME_CHARGE each)
        self._client_code = _GOING_AWAY
        self._after_close = 0  # frames received since our close frame
        # Set once our close frame is out or the socket ended: nothing more is written.
        self._done = False
        self._closing: asyncio.TimerHandle | None = None

    # -- SocketPeer: the app's writes --------------------------------------------------------

    def send(self, text: str) -> None:
        if self._done:
            return
        payload = text.encode()
        size = len(payload)
        pending = self._pending
        if not pending:
            self._batch.mark(self)
        pending.append(_SHORT_HEADS[size] if size < 126 else _text_head(size))
        pending.append(payload)
        self._pending_bytes += size
        if self._pending_bytes > FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the pending frames in one call; dropped once the socket is closing."""
        pending = self._pending
        if not pending:
            return
        self._pending = []
        self._pending_bytes = 0
        transport = self._transport
        if self._writelines is None or transport is None:
            return
        # picows may have sent a close frame itself (a frame over its cap): nothing after it.
        if not (transport.is_close_frame_sent or transport.is_disconnected):
            self._writelines(pending)

    def close(self, code: int, reason: str) -> None:
        transport = self._transport
        if transport is None or self._done:
            return
        self.flush()
        self._done = True
        transport.send_close(WSCloseCode(code), reason.encode())
        self._closing = self._served.loop.call_later(CLOSE_TIMEOUT_S, transport.disconnect)

    # -- picows's calls -----------------------------------------------------------------------

    def on_ws_connected(self, transport: WSTransport) -> None:
        self._transport = transport
        underlying = transport.underlying_transport
        # aiofastnet's transport (picows's own) has a writelines without per-call checks.
        self._writelines = getattr(underlying, "writelines_nocheck", underlying.writelines)
        self._served.opened(self)
        self._handler = handler = self._served.app.open_socket(self)
        if handler is not None:
            self._on_frame = handler.on_frame
        else:
            self.close(_GOING_AWAY, "server shutting down")

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        on_frame = self._on_frame
        if on_frame is None or self._done:
            if frame.msg_type == _CLOSE:
                transport.disconnect()
                return
            self._after_close += 1
            if self._after_close == AFTER_CLOSE_FRAMES:
                # It goes on sending, not closing: stop reading it (the close timer ends it;
                # our close frame still reaches it, where ending now could reset it unread).
                transport.underlying_transport.pause_reading()
            return
        kind = frame.msg_type
        # A reserved bit set (no extension is negotiated) takes the slow path, which refuses it.
        if frame.fin and self._parts is None and not (frame.rsv1 or frame.rsv2 or frame.rsv3):
            if kind == _TEXT:
                try:
                    text = frame.get_payload_as_utf8_text()
                except UnicodeDecodeError:
                    self._fail(_INVALID_TEXT, "text frame is not UTF-8")
                    return
                on_frame(text)
            elif kind == _BINARY:
                on_frame(frame.get_payload_as_bytes())
            else:
                self._other(transport, frame, kind)
        else:
            self._other(transport, frame, kind)
        if frame.last_in_buffer:
            self._batch.flush()

    def _other(self, transport: WSTransport, frame: WSFrame, kind: WSMsgType) -> None:
        """A control frame, a fragment, or a frame that breaks the protocol."""
        if frame.rsv1 or frame.rsv2 or frame.rsv3:
            self._fail(_PROTOCOL_ERROR, "no extension was negotiated")
        elif kind == _CLOSE:
            self._closed_by_client(transport, frame)
        elif kind == _PING:
            transport.send_pong(frame.get_payload_as_bytes())
        elif kind == _PONG:
            return
        elif kind == WSMsgType.CONTINUATION:
            self._fragment(frame)
        elif self._parts is not None:
            self._fail(_PROTOCOL_ERROR, "a new message before the last one finished")
        else:  # the first fragment of a message
            self._parts, self._text, self._size = bytearray(), kind == _TEXT, 0
            self._fragment(frame)

    def _closed_by_client(self, transport: WSTransport, frame: WSFrame) -> None:
        """Answer the client's close frame (1002 for a code no endpoint may send) and end."""
        payload = frame.get_payload_as_bytes()
        code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else _NO_CODE
        answer = 1000 if code == _NO_CODE else code
        if code != _NO_CODE and close_code_refused(code):
            code = answer = _PROTOCOL_ERROR
        self._client_code = code
        if not self._done:
            self.flush()
            self._done = True
            transport.send_close(WSCloseCode(answer))
        transport.disconnect()

    def _fragment(self, frame: WSFrame) -> None:
        parts = self._parts
        if parts is None:
            self._fail(_PROTOCOL_ERROR, "a continuation frame without a message")
            return
        # Each frame but the last costs FRAME_CHARGE too: empty ones pass the cap as well.
        self._size += frame.payload_size if frame.fin else frame.payload_size + FRAME_CHARGE
        if self._size > self._served.max_message:
            self._fail(_TOO_BIG, "message too large")
            return
        if frame.payload_size:
            parts += frame.get_payload_as_memoryview()
        if not frame.fin:
            return
        self._parts = None
        message = bytes(parts)
        if not self._text:
            self._deliver(message)
            return
        try:
            self._deliver(message.decode())
        except UnicodeDecodeError:
            self._fail(_INVALID_TEXT, "text frame is not UTF-8")

    def _deliver(self, message: str | bytes) -> None:
        if self._handler is not None:
            self._handler.on_frame(message)

    def _fail(self, code: int, reason: str) -> None:
        """Close for a frame the protocol refuses; the connection's end follows."""
        self._parts = None
        self.close(code, reason)

    def drop(self) -> None:
        """End the TCP connection now (the grace ran out)."""
        if self._transport is not None:
            self._transport.disconnect(graceful=False)

    def pause_writing(self) -> None:
        if self._handler is not None:
            self._handler.pause()

    def resume_writing(self) -> None:
        if self._handler is not None:
            self._handler.resume()

    def on_ws_disconnected(self, transport: WSTransport) -> None:
        self._done = True
        self._pending = []
        if self._closing is not None:
            self._closing.cancel()
        self._served.ended(self)
        handler, self._handler, self._on_frame = self._handler, None, None
        if handler is not None:
            handler.on_closed(self._client_code)


async def serve(listener: Listener, shutdown: asyncio.Event) -> None:
    """Serve ``listener`` (a :class:`FrameApp` on its socket) with picows until ``shutdown``."""
    app: object = listener.app
    if not isinstance(app, FrameApp) or listener.max_message is None:
        raise TypeError("picows serves a FrameApp's WebSocket (the data plane) only")
    served = _Served(app, listener.max_message)
    await app.startup()
    try:
        server = await ws_create_server(
            served.route,
            sock=listener.sock,
            websocket_handshake_timeout=UPGRADE_TIMEOUT_S,
            max_frame_size=listener.max_message,
            read_buffer_init_size=READ_BUFFER_BYTES,
            logger_name=_QuietLog(logging.getLogger("picows.server")),
            # Pings are answered in _other, after the reserved bits are checked.
            enable_auto_pong=False,
        )
        await shutdown.wait()
        server.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(listener.grace_s):
                await served.idle.wait()
        if served.sockets:
            _log.warning("%d connections still open after the grace period", len(served.sockets))
        for sock in list(served.sockets):
            sock.drop()
    finally:
        await app.shutdown()
