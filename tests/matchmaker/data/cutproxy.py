"""A TCP proxy in front of a data server whose connections a test cuts, stalls or refuses:
the network failures a reconnecting client must survive, on real sockets."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass
class Pair:
    """One proxied connection: the client's side and the server's side."""

    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter
    stalled: set[str] = field(default_factory=set)  # "up", "down": directions dropped

    def reset(self) -> None:
        for writer in (self.client, self.upstream):
            writer.transport.abort()


@dataclass
class CutProxy:
    """``url`` reaches the server through the proxy; ``cut()`` resets every connection
    open now (both ends see a lost socket), ``stall()`` silences them without closing,
    ``refusing`` resets new connections as they come; ``accepted`` counts attempts."""

    target: tuple[str, int]
    url: str = ""
    refusing: bool = False
    accepted: int = 0
    pairs: list[Pair] = field(default_factory=list)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def cut(self) -> int:
        """Reset every open connection; returns how many there were."""
        pairs, self.pairs = self.pairs, []
        for pair in pairs:
            pair.reset()
        return len(pairs)

    def stall(self, *directions: str) -> None:
        """Let nothing more through the open connections (``"up"``: towards the server,
        ``"down"``: towards the client; both by default), and close none of them."""
        for pair in self.pairs:
            pair.stalled.update(directions or ("up", "down"))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self.refusing:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        pair = Pair(writer, up_writer)
        self.pairs.append(pair)
        self._spawn(self._pipe(pair, "up", reader, up_writer))
        self._spawn(self._pipe(pair, "down", up_reader, writer))

    async def _pipe(
        self, pair: Pair, direction: str, source: asyncio.StreamReader, sink: asyncio.StreamWriter
    ) -> None:
        with contextlib.suppress(OSError):
            while data := await source.read(65536):
                if direction not in pair.stalled:
                    sink.write(data)
        if direction not in pair.stalled:
            sink.close()  # an end passed on as an end: what was written still arrives

    def _spawn(self, work: Coroutine[None, None, None]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


@contextlib.asynccontextmanager
async def cut_proxy(ws_url: str) -> AsyncIterator[CutProxy]:
    """A :class:`CutProxy` to the server at ``ws_url``, closed with everything it holds."""
    parts = urlsplit(ws_url)
    assert parts.hostname is not None
    assert parts.port is not None
    proxy = CutProxy((parts.hostname, parts.port))
    server = await asyncio.start_server(proxy._serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    proxy.url = parts._replace(netloc=f"127.0.0.1:{port}").geturl()
    try:
        yield proxy
    finally:
        server.close()
        proxy.cut()
        for task in list(proxy.tasks):
            task.cancel()
        await asyncio.gather(*proxy.tasks, return_exceptions=True)
