"""The MCP server's stdin, one JSON-RPC message per line, each line capped.

The SDK's stdio transport reads a line whole before it parses it, so a client that
never ends a line (a stuck agent, a runaway paste) would grow the server's memory
without bound. :func:`cap_stdin` puts a pipe on fd 0 before the SDK opens it, and a
thread copies the real stdin into it a chunk at a time: a line past :data:`LINE_MAX`
bytes is cut there and the rest of it skipped up to its newline, so neither the copy
nor the SDK ever holds more of it. The SDK drops the cut line as it drops any
malformed one, and the client's request gets no answer (its id may be in what was
skipped); the server says so on stderr, with its code.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import BinaryIO, Protocol

from mtcommon import render_line
from tasktool.model.errors import TaskToolError
from tasktool.model.limits import REQUEST_MAX

__all__ = ["LINE_MAX", "Chunks", "cap_stdin", "copy_lines"]

LINE_MAX = REQUEST_MAX  # the dashboard's request cap
_CHUNK = 1 << 16


class Chunks(Protocol):
    """A buffered binary stream: ``read1`` returns what has arrived, up to ``size``."""

    def read1(self, size: int = ..., /) -> bytes: ...


def copy_lines(
    source: Chunks, sink: BinaryIO, warn: Callable[[str], None], limit: int = LINE_MAX
) -> None:
    """Copy ``source`` to ``sink`` as it arrives, each line's first ``limit`` bytes (its
    newline not counted) and its newline, until ``source`` ends; then close ``sink``."""
    size = 0  # of the current line so far, copied or not
    with sink:
        while chunk := source.read1(_CHUNK):
            start = 0
            while start < len(chunk):
                end = chunk.find(b"\n", start)
                stop = len(chunk) if end < 0 else end
                if size < limit:
                    sink.write(chunk[start : min(stop, start + limit - size)])
                size += stop - start
                if end < 0:
                    break
                sink.write(b"\n")
                if size > limit:
                    warn(render_line(_too_large(size)))
                size = 0
                start = end + 1
            sink.flush()
        if size > limit:  # the wire ended inside the line
            warn(render_line(_too_large(size)))


def _too_large(size: int) -> TaskToolError:
    return TaskToolError(
        f"an MCP message of {size:,} bytes was skipped: the limit is {LINE_MAX >> 20} MiB",
        code="mcp.too_large",
    )


def cap_stdin(warn: Callable[[str], None]) -> None:
    """Put a pipe on fd 0, fed from the real stdin by :func:`copy_lines` in a daemon
    thread; the SDK's stdio transport then reads the pipe as it would stdin."""
    source = os.fdopen(os.dup(0), "rb")
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)
    sink = os.fdopen(write_end, "wb")
    threading.Thread(
        target=copy_lines, args=(source, sink, warn), name="mcp-stdin", daemon=True
    ).start()
