"""The WebSocket layer under every server: what a hostile client can make it accept or hold.

Frames and upgrade requests are written byte by byte (:mod:`.rawws`); the server runs
in this process, so its memory is this process's resident set.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import resource
import zlib
from typing import Any

import httpx
import pytest

from tests.matchmaker.data.rawws import BINARY, CLOSE, CONTINUATION, TEXT, frame, open_raw

MiB = 1 << 20
# A client that writes this much of one message without FIN: 160 x the default hard cap.
UNFINISHED = 40 * MiB
GRANIAN_BUFFERS = pytest.mark.xfail(
    strict=True,
    reason="granian (tungstenite) reads whole messages, up to 64 MiB, before the app sees "
    "a byte, and reports a refused frame without its close code (docs/operations.md)",
)


def _granian_buffers(server_name: str, request: pytest.FixtureRequest) -> None:
    if server_name == "granian":
        request.node.add_marker(GRANIAN_BUFFERS)


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def _deflated_zeros(size: int) -> bytes:
    """A permessage-deflate payload (raw DEFLATE, RFC 7692) that inflates to ``size``
    zero bytes, made a MiB at a time."""
    deflate = zlib.compressobj(wbits=-15)
    chunk = bytes(MiB)
    parts = [deflate.compress(chunk) for _ in range(size // MiB)]
    parts.append(deflate.flush(zlib.Z_SYNC_FLUSH))
    return b"".join(parts).removesuffix(b"\x00\x00\xff\xff")


async def test_no_compression_is_negotiated_and_a_compressed_frame_is_refused(
    server: Any,
) -> None:
    """hypercorn accepted permessage-deflate and inflated a frame whole before the cap: a
    407 KB frame became 400 MiB. Here 64 KB that inflate to 64 MiB are refused unread."""
    offer = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
    raw = await open_raw(server.base, extra=offer)
    assert raw.status == 101
    assert "sec-websocket-extensions" not in raw.headers
    bomb = _deflated_zeros(64 * MiB)
    before = _rss()
    await raw.send(frame(TEXT, bomb, compressed=True))
    assert await raw.close_code() in (1002, 1005)
    assert _rss() - before < 16 * MiB
    await raw.aclose()


async def test_invalid_utf8_in_a_text_frame_closes_1007(
    server: Any, server_name: str, request: pytest.FixtureRequest
) -> None:
    _granian_buffers(server_name, request)
    raw = await open_raw(server.base)
    await raw.send(frame(TEXT, b'{"type": "ping", "id": "\xff"}'))
    assert await raw.close_code() == 1007
    await raw.aclose()


async def test_a_binary_frame_after_a_1009_is_no_error(
    server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """hypercorn kept the text buffer of the refused message: the next binary frame
    raised a TypeError logged with its traceback."""
    raw = await open_raw(server.base)
    await raw.send(frame(TEXT, b"x" * (5 * server.plane.config.limits.max_frame_bytes)))
    assert await raw.close_code() == 1009
    with caplog.at_level(logging.ERROR), contextlib.suppress(ConnectionError):
        await raw.send(frame(BINARY, b"after the close"))
        await raw.send(frame(CLOSE, b"\x03\xe8"))
        # The server ends the TCP connection once it read our close frame.
        assert await raw.reader.read() == b""
        # A request served after the connection ended: its handler's end was logged by then.
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{server.base}/healthz")).status_code == 200
    await raw.aclose()
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_an_unfinished_message_over_the_hard_cap_closes_1009_and_is_not_held(
    server: Any, server_name: str, request: pytest.FixtureRequest
) -> None:
    """Fragments without FIN count toward the hard cap: the connection closes 1009 while
    the process holds a few MiB, not the 40 MiB sent (granian held 60 MiB per connection
    until the heartbeat closed it)."""
    _granian_buffers(server_name, request)
    before = _rss()
    raw = await open_raw(server.base)
    chunk = b"x" * (256 * 1024)

    async def write() -> None:
        await raw.send(frame(TEXT, chunk, fin=False))
        for _ in range(UNFINISHED // len(chunk)):
            await raw.send(frame(CONTINUATION, chunk, fin=False))

    writer = asyncio.create_task(write())
    try:
        assert await raw.close_code() == 1009
        assert _rss() - before < 16 * MiB
    finally:
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await writer
        await raw.aclose()


# (method, Sec-WebSocket-Key or None for a valid one, more header lines)
UPGRADES = {
    "key-not-base64": ("GET", "not-a-key", ""),
    "key-not-16-bytes": ("GET", "c2hvcnQ=", ""),
    "post-with-a-body": ("POST", None, "Content-Length: 2\r\n"),
    "post-without-a-body": ("POST", None, ""),
}


@pytest.mark.parametrize("upgrade", UPGRADES.values(), ids=UPGRADES.keys())
async def test_a_malformed_upgrade_is_answered_4xx_not_101(
    server: Any,
    server_name: str,
    request: pytest.FixtureRequest,
    upgrade: tuple[str, str | None, str],
) -> None:
    """granian switched protocols for ``POST /ws`` and any ``Sec-WebSocket-Key``."""
    method, key, extra = upgrade
    if server_name == "granian" and method == "POST" and not extra:
        request.node.add_marker(
            pytest.mark.xfail(
                strict=True,
                reason="granian upgrades any method and its WebSocket scope has no method",
            )
        )
    raw = await open_raw(server.base, method=method, key=key, extra=extra)
    assert 400 <= raw.status < 500
    if raw.status == 400:
        length = int(raw.headers["content-length"])
        body = json.loads(await raw.reader.readexactly(length))
        assert body["error"]["code"] == "request.invalid"
    await raw.aclose()
