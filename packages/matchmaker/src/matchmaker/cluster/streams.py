"""The members' inboxes on Redis Streams: one connection appends, one blocks reading.

This is the hot path of every cross-process hop, so it does not go through
redis-py's client API: a command there (and more so a ``pipeline()``) costs a
pool checkout, a retry wrapper, response callbacks and, with a socket timeout,
an ``asyncio.wait_for`` task per write. Each side instead holds one redis-py
``Connection`` of its own (its handshake, ``AUTH``, TLS and ``SELECT`` stay
redis-py's), packs ``XADD`` and ``XREAD`` itself and reads the raw replies
(parsed by hiredis when installed). Measured on loopback, a hop costs about a
third of what it did through ``Redis.pipeline()`` and ``Redis.xread``
(``docs/benchmarks/matchmaker-cluster.md``).

Ordering and loss are Streams' own: entries of one writer land in an inbox in
the order written, and a reader that loses its connection reads again from the
last id it handled, so nothing written while it reconnects is skipped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

__all__ = ["Inbox", "Outbound", "connection"]

# Each inbox keeps about this many entries (each the messages one sender had for it in one
# pass): a reader more than that far behind loses the oldest (the member is then dead or
# hopelessly slow; its peers are told when its key expires).
STREAM_MAXLEN = 100_000
_FIELD = b"m"


def connection(url: str, connect_timeout_s: float) -> Any:
    """A redis-py asyncio ``Connection`` to ``url`` (connected on first use).

    It has no socket timeout of its own (redis-py would then wrap every write in a
    task): :class:`Outbound` and :class:`Inbox` bound each exchange themselves.
    """
    from redis.asyncio import ConnectionPool

    pool = ConnectionPool.from_url(
        url, socket_timeout=None, socket_connect_timeout=connect_timeout_s
    )
    return pool.make_connection()  # type: ignore[no-untyped-call]  # (redis-py leaves it untyped)


class Outbound:
    """Appends entries to members' inboxes, in the order given, on its own connection."""

    def __init__(self, conn: Any, timeout_s: float) -> None:
        self._conn = conn
        self._timeout_s = timeout_s
        self._maxlen = str(STREAM_MAXLEN).encode()
        self._reconnect = False

    def after_outage(self) -> None:
        """Redis was unreachable: this connection may hold a socket the old server closed
        that no write has failed on yet (nothing was sent meanwhile), and its first write
        would be lost to it. The next append connects afresh."""
        self._reconnect = True

    async def append(self, entries: Sequence[tuple[str, bytes]]) -> None:
        """``XADD`` each ``(stream, payload)`` in one write; returns once Redis took them all.

        Raises what redis-py raises (or ``TimeoutError``); the connection is then
        dropped, and the next call connects again.
        """
        conn = self._conn
        if self._reconnect:
            self._reconnect = False
            await conn.disconnect(nowait=True)
        commands = [
            ("XADD", stream, "MAXLEN", "~", self._maxlen, "*", _FIELD, payload)
            for stream, payload in entries
        ]
        try:
            async with asyncio.timeout(self._timeout_s):
                await conn.send_packed_command(conn.pack_commands(commands), check_health=False)
                for _ in commands:
                    await conn.read_response(disable_decoding=True)
        except BaseException:
            # Replies may be left unread: this connection is out of step with Redis.
            await conn.disconnect(nowait=True)
            raise

    async def close(self) -> None:
        await self._conn.disconnect()


class Inbox:
    """Reads one stream from where it left off."""

    def __init__(self, conn: Any, stream: str, *, block_ms: int, count: int) -> None:
        self._conn = conn
        self._stream = stream
        self._block_ms = str(block_ms).encode()
        self._count = str(count).encode()
        self._timeout_s = block_ms / 1000 + 1.0
        self.last = b"0"

    async def next(self) -> list[bytes]:
        """The payloads of the entries after the last one returned (waits up to ``block_ms``;
        ``[]`` when none came). Raises what redis-py raises; the next call reconnects."""
        conn = self._conn
        command = conn.pack_command(
            "XREAD",
            "COUNT",
            self._count,
            "BLOCK",
            self._block_ms,
            "STREAMS",
            self._stream,
            self.last,
        )
        try:
            async with asyncio.timeout(self._timeout_s):
                await conn.send_packed_command(command, check_health=False)
                reply = await conn.read_response(disable_decoding=True)
        except BaseException:
            await conn.disconnect(nowait=True)
            raise
        return self._payloads(reply)

    def _payloads(self, reply: Any) -> list[bytes]:
        """The payloads of an ``XREAD`` reply (RESP2: ``[[stream, entries]]``; RESP3: a map),
        remembering the last id."""
        if reply is None:
            return []
        per_stream = reply.values() if isinstance(reply, dict) else (pair[1] for pair in reply)
        payloads: list[bytes] = []
        for entries in per_stream:
            for entry_id, fields in entries:
                self.last = entry_id
                payloads.append(_field(fields))
        return payloads

    async def close(self) -> None:
        await self._conn.disconnect()


def _field(fields: Any) -> bytes:
    """The payload of an entry's fields (a flat list, or a map under RESP3)."""
    if isinstance(fields, dict):
        value: bytes = fields[_FIELD]
        return value
    value = fields[fields.index(_FIELD) + 1]
    return value
