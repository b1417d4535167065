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
import struct
import time
import zlib
from typing import Any

import httpx
import pytest

from matchmaker.data.connection import HARD_CAP_FACTOR
from matchmaker.servers.wire import CLOSE_TIMEOUT_S, FRAME_CHARGE
from tests.matchmaker.data.rawws import (
    BINARY,
    CLOSE,
    CONTINUATION,
    PING,
    PONG,
    RSV1,
    RSV2,
    RSV3,
    TEXT,
    RawSocket,
    frame,
    open_raw,
    writing,
)

MiB = 1 << 20
# A client that writes this much of one message without FIN: 160 x the default hard cap.
UNFINISHED = 40 * MiB


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
    await raw.send(frame(TEXT, bomb, rsv=RSV1))
    assert await raw.close_code() in (1002, 1005)
    assert _rss() - before < 16 * MiB
    await raw.aclose()


async def test_invalid_utf8_in_a_text_frame_closes_1007(server: Any) -> None:
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
    server: Any,
) -> None:
    """Fragments without FIN count toward the hard cap: the connection closes 1009 while
    the process holds a few MiB, not the 40 MiB sent (granian, a server this project
    ran before picows, held 60 MiB per connection until the heartbeat closed it)."""
    before = _rss()
    raw = await open_raw(server.base)
    chunk = b"x" * (256 * 1024)

    async def write() -> None:
        await raw.send(frame(TEXT, chunk, fin=False))
        for _ in range(UNFINISHED // len(chunk)):
            await raw.send(frame(CONTINUATION, chunk, fin=False))

    async with writing(raw, write):
        assert await raw.close_code() == 1009
        assert _rss() - before < 16 * MiB


# (method, Sec-WebSocket-Key or None for a valid one, more header lines)
UPGRADES = {
    "key-not-base64": ("GET", "not-a-key", ""),
    "key-not-16-bytes": ("GET", "c2hvcnQ=", ""),
    "post-with-a-body": ("POST", None, "Content-Length: 2\r\n"),
    "post-without-a-body": ("POST", None, ""),
}


@pytest.mark.parametrize("upgrade", UPGRADES.values(), ids=UPGRADES.keys())
async def test_a_malformed_upgrade_is_answered_4xx_not_101(
    server: Any, server_name: str, upgrade: tuple[str, str | None, str]
) -> None:
    """granian (a server this project ran before picows) switched protocols for
    ``POST /ws`` and any ``Sec-WebSocket-Key``."""
    method, key, extra = upgrade
    raw = await open_raw(server.base, method=method, key=key, extra=extra)
    assert 400 <= raw.status < 500
    if server_name == "picows" and method == "POST":
        # picows refuses any method but GET before the app sees the request: its own
        # 400 with the reason as plain text (docs/operations.md).
        assert b"Unsupported HTTP method" in await raw.reader.read()
    elif raw.status == 400:
        length = int(raw.headers["content-length"])
        body = json.loads(await raw.reader.readexactly(length))
        assert body["error"]["code"] == "request.invalid"
    await raw.aclose()


PING_MESSAGE = b'{"type":"ping","id":"f"}'
PONG_MESSAGE = b'{"type":"pong","id":"f"}'


def fragmented(message: bytes, unfinished: int) -> bytes:
    """``message`` in ``unfinished`` frames without FIN (the first holds it all, the rest
    are empty continuations) and an empty final continuation."""
    frames = [frame(TEXT, message, fin=False)]
    frames += [frame(CONTINUATION, b"", fin=False)] * (unfinished - 1)
    return b"".join([*frames, frame(CONTINUATION, b"")])


async def answer_of(raw: RawSocket) -> bytes | int | None:
    """The server's first text frame, or its close code if it closes first."""
    async with asyncio.timeout(10):
        opcode, payload = await raw.read_frame()
    if opcode == CLOSE:
        return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
    return payload


@pytest.mark.parametrize("over", [0, 1], ids=["at-the-cap", "one-frame-over"])
async def test_each_frame_of_a_fragmented_message_counts_toward_the_hard_cap(
    start_server: Any, over: int
) -> None:
    """Empty continuations cost nothing before (picows kept a list entry per frame): a
    message spans at most (cap - its size) / FRAME_CHARGE unfinished frames, on both servers."""
    server = await start_server(max_frame_bytes=1024)
    cap = HARD_CAP_FACTOR * 1024
    unfinished = (cap - len(PING_MESSAGE)) // FRAME_CHARGE + over
    raw = await open_raw(server.base)
    await raw.send(fragmented(PING_MESSAGE, unfinished))
    assert await answer_of(raw) == (PONG_MESSAGE if not over else 1009)
    await raw.aclose()


async def test_a_flood_of_empty_continuations_closes_1009_and_holds_no_one_up(server: Any) -> None:
    """The attack of issue 40: a text frame without FIN, then empty continuations (six
    bytes each), from a client that never sends ``hello``. 8,000,000 of them took picows
    from 56 MB to 778 MB and held another client's ping 2.9 s. Now the connection closes
    1009 after a bounded number, memory stays flat, and what the client goes on sending
    after the close is not parsed (it held pings 2.5-5.7 s here while it was)."""
    other = await server.connect()
    flood = await open_raw(server.base)
    empty = frame(CONTINUATION, b"", fin=False) * 100_000
    before = _rss()

    async def write() -> None:
        await flood.send(frame(TEXT, b"{", fin=False))
        for _ in range(20):  # 2,000,000 empty continuations (12 MB)
            await flood.send(empty)

    closed = asyncio.create_task(flood.close_code(wait_s=30))  # read as it comes
    async with writing(flood, write) as writer:
        worst, pings = 0.0, 0
        while pings < 3 or not writer.done():  # answered while the flood is written
            started = time.monotonic()
            assert await other.request("ping") is None
            worst, pings = max(worst, time.monotonic() - started), pings + 1
            await asyncio.wait([writer], timeout=0.05)  # within the control rate limit
        assert worst < 1.0
        assert await closed == 1009
        assert _rss() - before < 16 * MiB


# A client's close code and what the server answers (RFC 6455, section 7.4).
CLOSE_ANSWERS = {
    **{f"{code}": (struct.pack("!H", code), code) for code in (1000, 1001, 1003, 3000, 4999)},
    **{
        f"{code}-invalid": (struct.pack("!H", code), 1002)
        for code in (0, 999, 1004, 1005, 1006, 1014, 1015, 1016, 2999, 5000, 65535)
    },
    "one-byte": (b"\x03", 1002),
    "reason-not-utf8": (struct.pack("!H", 1000) + b"\xff", 1007),
}


@pytest.mark.parametrize(("payload", "answer"), CLOSE_ANSWERS.values(), ids=CLOSE_ANSWERS.keys())
async def test_a_close_code_no_endpoint_may_send_is_answered_1002(
    server: Any, payload: bytes, answer: int
) -> None:
    """picows echoed 1006, 5000 and 65535 (and 0 and 1014): codes RFC 6455 forbids on the
    wire. Both servers now answer as wsproto does."""
    raw = await open_raw(server.base)
    await raw.send(frame(CLOSE, payload))
    assert await answer_of(raw) == answer
    await raw.aclose()


RESERVED = {"rsv1": RSV1, "rsv2": RSV2, "rsv3": RSV3, "all": RSV1 | RSV2 | RSV3}
OPCODES = {"text": (TEXT, b"{}"), "ping": (PING, b"p"), "pong": (PONG, b"p")}
OPCODES |= {"close": (CLOSE, b"\x03\xe8"), "binary": (BINARY, b"{}")}


@pytest.mark.parametrize("rsv", RESERVED.values(), ids=RESERVED.keys())
@pytest.mark.parametrize("sent", OPCODES.values(), ids=OPCODES.keys())
async def test_a_reserved_bit_closes_1002_on_any_frame(
    server: Any, rsv: int, sent: tuple[int, bytes]
) -> None:
    """picows tested RSV1 only, and on data frames only: a text frame with RSV2 was
    served, a ping with RSV3 answered. No extension is negotiated, so any is an error."""
    raw = await open_raw(server.base)
    await raw.send(frame(*sent, rsv=rsv))
    assert await answer_of(raw) == 1002
    await raw.aclose()


async def test_a_client_that_does_not_answer_our_close_is_dropped_at_the_close_timeout(
    server: Any,
) -> None:
    """hypercorn waited for the client's close frame after a 1009 without a deadline."""
    raw = await open_raw(server.base)
    too_many = HARD_CAP_FACTOR * server.plane.config.limits.max_frame_bytes // FRAME_CHARGE + 1
    await raw.send(fragmented(b"{", too_many))
    assert await raw.close_code() == 1009
    async with asyncio.timeout(CLOSE_TIMEOUT_S + 5):
        with contextlib.suppress(ConnectionError):
            assert await raw.reader.read() == b""
    await raw.aclose()


async def test_a_reserved_bit_on_a_continuation_closes_1002(server: Any) -> None:
    raw = await open_raw(server.base)
    await raw.send(frame(TEXT, b"{", fin=False) + frame(CONTINUATION, b"}", rsv=RSV2))
    assert await answer_of(raw) == 1002
    await raw.aclose()


@pytest.mark.parametrize("version", ["8", "7", "14", "12"])
async def test_another_websocket_version_is_answered_426_with_version_13(
    server: Any, version: str
) -> None:
    """picows switched protocols for version 8 (and 7), hypercorn answered a bare 400."""
    raw = await open_raw(server.base, version=version)
    assert raw.status == 426
    assert raw.headers["sec-websocket-version"] == "13"
    body = json.loads(await raw.reader.readexactly(int(raw.headers["content-length"])))
    assert body["error"]["code"] == "request.invalid"
    await raw.aclose()
