"""A WebSocket client that writes frames byte by byte: what no well-behaved library sends.

The data plane's refusals (bad UTF-8, compressed frames, unfinished fragments, a
malformed upgrade) are only reachable with frames and headers of our own making.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import struct
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

TEXT, BINARY, CONTINUATION, CLOSE, PING, PONG = 0x1, 0x2, 0x0, 0x8, 0x9, 0xA
# The reserved bits of a frame's first byte; RSV1 marks a compressed frame (RFC 7692).
RSV1, RSV2, RSV3 = 0x40, 0x20, 0x10
_FIN = 0x80
_MASKED = 0x80


def frame(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0) -> bytes:
    """One client frame (masked with a zero key, so the payload reads as given); ``rsv``
    is the reserved bits to set (:data:`RSV1` ...)."""
    first = (_FIN if fin else 0) | rsv | opcode
    size = len(payload)
    if size < 126:
        head = bytes([first, _MASKED | size])
    elif size < 1 << 16:
        head = bytes([first, _MASKED | 126]) + struct.pack("!H", size)
    else:
        head = bytes([first, _MASKED | 127]) + struct.pack("!Q", size)
    return head + b"\0\0\0\0" + payload


@dataclass
class RawSocket:
    """One TCP connection to the data port, past (or refused at) the upgrade."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    status: int
    headers: dict[str, str]

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def read_frame(self) -> tuple[int, bytes]:
        """The next frame from the server: its opcode and payload (unmasked, as sent)."""
        head = await self.reader.readexactly(2)
        size = head[1] & 0x7F
        if size == 126:
            size = struct.unpack("!H", await self.reader.readexactly(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", await self.reader.readexactly(8))[0]
        return head[0] & 0x0F, await self.reader.readexactly(size)

    async def close_code(self, wait_s: float = 10.0) -> int | None:
        """The code of the server's close frame (1005: none given), ``None`` if the TCP
        connection ended without one; frames before it are skipped."""
        try:
            async with asyncio.timeout(wait_s):
                while True:
                    opcode, payload = await self.read_frame()
                    if opcode == CLOSE:
                        return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
        except (asyncio.IncompleteReadError, ConnectionError):
            return None

    async def aclose(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


async def open_raw(
    base: str,
    *,
    method: str = "GET",
    key: str | None = None,
    extra: str = "",
    version: str = "13",
) -> RawSocket:
    """Send an upgrade request for ``/ws`` to the server at ``base`` (``http://host:port``)."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    if key is None:
        key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        f"{method} /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        f"Sec-WebSocket-Version: {version}\r\n{extra}\r\n".encode()
    )
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    headers = dict(
        (name.strip().lower(), value.strip())
        for name, _, value in (line.partition(":") for line in head[1:] if line)
    )
    return RawSocket(reader, writer, status, headers)


@contextlib.asynccontextmanager
async def writing(
    raw: RawSocket, write: Callable[[], Coroutine[Any, Any, None]]
) -> AsyncIterator[asyncio.Task[None]]:
    """Run ``write`` (a flood) as a task while the body reads; stop it and close after."""
    writer = asyncio.create_task(write())
    try:
        yield writer
    finally:
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await writer
        await raw.aclose()
