"""A minimal callback-based WebSocket client for the load generator.

The ``websockets`` library costs more CPU per frame than the server under test
does, which would make the load generator the bottleneck. This client frames
and parses by hand on an asyncio Protocol (no task per socket) and masks with
a zero key (valid framing; servers do not check key randomness). Benchmark use
only, on loopback.
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable

OnMessage = Callable[["FastWebSocket", bytes], None]


class FastWebSocket(asyncio.Protocol):
    """One client connection; ``on_message`` is called with each text/binary payload."""

    def __init__(self, host: str, port: int, path: str, on_message: OnMessage) -> None:
        key = base64.b64encode(os.urandom(16)).decode()
        self._request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
        self.on_message = on_message
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._buffer = bytearray()
        self._upgraded = False
        self.transport: asyncio.Transport | None = None
        self.tag: object = None

    @classmethod
    async def open(cls, url: str, on_message: OnMessage) -> FastWebSocket:
        assert url.startswith("ws://")
        hostport, _, path = url[5:].partition("/")
        host, _, port = hostport.partition(":")
        loop = asyncio.get_running_loop()
        _, protocol = await loop.create_connection(
            lambda: cls(host, int(port), "/" + path, on_message), host, int(port)
        )
        await protocol.opened
        return protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self._request)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(1006)
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("closed during the handshake"))

    def send(self, payload: bytes) -> None:
        """Queue one text frame (never blocks)."""
        size = len(payload)
        if size < 126:
            header = bytes((0x81, 0x80 | size))
        elif size < 65536:
            header = bytes((0x81, 0x80 | 126)) + size.to_bytes(2, "big")
        else:
            header = bytes((0x81, 0x80 | 127)) + size.to_bytes(8, "big")
        assert self.transport is not None
        self.transport.write(header + b"\0\0\0\0" + payload)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        if not self._upgraded:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if b" 101 " not in buffer[: buffer.find(b"\r\n")]:
                self.opened.set_exception(ConnectionError(bytes(buffer[:end]).decode()))
                return
            del buffer[: end + 4]
            self._upgraded = True
            self.opened.set_result(None)
        while len(buffer) >= 2:
            opcode, length, start = buffer[0] & 0x0F, buffer[1] & 0x7F, 2
            if length == 126:
                if len(buffer) < 4:
                    return
                length, start = int.from_bytes(buffer[2:4], "big"), 4
            elif length == 127:
                if len(buffer) < 10:
                    return
                length, start = int.from_bytes(buffer[2:10], "big"), 10
            end = start + length
            if len(buffer) < end:
                return
            payload = bytes(buffer[start:end])
            del buffer[:end]
            if opcode in (1, 2):
                self.on_message(self, payload)
            elif opcode == 8:
                code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
                if not self.closed.done():
                    self.closed.set_result(code)
                self.close()
                return
