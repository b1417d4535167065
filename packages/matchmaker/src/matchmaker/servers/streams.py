"""A clean stop logs no error: asyncio's stream servers on Python 3.11.

hypercorn serves each connection as a task that ``asyncio.start_server`` made; a
connection still open when the shutdown grace ends is cancelled (by hypercorn, or
by the loop's end). Before Python 3.12.2 (CPython gh-113538) the stream protocol's
done-callback then calls ``task.exception()`` on the cancelled task, which raises,
and the loop logs ``ERROR Exception in callback
StreamReaderProtocol.connection_made.<locals>.callback`` with a traceback for
what is the planned end of a connection. :func:`cancelled_connections_unlogged`
drops exactly that report while a server runs; every other one reaches the
handler that was there before.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["cancelled_connections_unlogged"]

_CALLBACK = "StreamReaderProtocol.connection_made.<locals>.callback"


@contextlib.contextmanager
def cancelled_connections_unlogged() -> Iterator[None]:
    """For the block's duration, the running loop does not report a stream connection's
    task cancelled at shutdown as an unhandled exception."""
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if _is_cancelled_connection(context):
            return
        if previous is None:
            loop.default_exception_handler(context)
        else:
            previous(loop, context)

    loop.set_exception_handler(handler)
    try:
        yield
    finally:
        loop.set_exception_handler(previous)


def _is_cancelled_connection(context: dict[str, Any]) -> bool:
    cancelled = isinstance(context.get("exception"), asyncio.CancelledError)
    return cancelled and _CALLBACK in str(context.get("message", ""))
