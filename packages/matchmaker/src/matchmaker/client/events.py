"""The events a client holds for the application until it reads them.

At most ``max_buffered_events`` (default 1024) are held, the oldest dropped first, as the
JavaScript client's ``maxBufferedEvents`` (``docs/library.md``): an application that reads
events slowly, or not at all, loses the oldest unread ones instead of making the client's
memory grow without bound.

A dropped event still counts as received: ``Client.last_seq``, what a resume asks the
server to replay after, has moved past it, as the JavaScript client's ``lastSeq`` has. Both
clients number the events they took off the socket, not the ones the application read:
holding ``last_seq`` back to the oldest unread event would make every resume replay events
the buffer still holds (the duplicates ``seq`` exists to prevent) and tie the server's
resume buffer to the application's pace, and a replay of the dropped ones would only push
out newer ones. The cap is the application's choice to lose its oldest unread events
rather than grow, and that holds across a resume as on one connection.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_MAX_BUFFERED_EVENTS", "Event", "EventBuffer"]

DEFAULT_MAX_BUFFERED_EVENTS = 1024
"""As the JavaScript client: far more than a game reading its events as they come keeps."""


@dataclass(frozen=True, slots=True)
class Event:
    """A server push: ``type``, ``data`` and the per-client ``seq``.

    A failed fire-and-forget request (no ``id``) arrives as an event of type
    ``error`` whose ``data`` is the error object. A reconnecting client adds its own
    (``seq`` ``None``): ``connection.away``, ``connection.back``, ``connection.closed``.
    """

    type: str
    data: Any
    seq: int | None = None


class EventBuffer:
    """The events delivered and not yet taken, at most ``most`` (the oldest dropped first),
    and whether the client has ended (no event comes after the ones held).

    ``most`` must be a positive ``int`` (not a ``bool``), else ``ValueError``: a cap of 0
    would drop every event before anyone could read it.
    """

    def __init__(self, most: int = DEFAULT_MAX_BUFFERED_EVENTS) -> None:
        if isinstance(most, bool) or not isinstance(most, int) or most < 1:
            raise ValueError(f"max_buffered_events must be a positive integer, not {most!r}")
        self.most = most
        self._held: deque[Event] = deque(maxlen=self.most)
        self._ended = False
        self._ready = asyncio.Event()  # set by a put and the end, cleared by a take that waits

    def empty(self) -> bool:
        """Nothing held: what a test asserts of a client that must not have heard of
        something (``asyncio.Queue``'s name, which the buffer replaced)."""
        return not self._held

    def put(self, event: Event) -> None:
        """Hold ``event``; a full buffer drops its oldest to make room."""
        self._held.append(event)
        self._ready.set()

    def end(self) -> None:
        """No more events: :meth:`take` returns ``None`` once the held ones are taken."""
        self._ended = True
        self._ready.set()

    async def take(self) -> Event | None:
        """The oldest held event, waiting for one; ``None`` once ended and empty."""
        while not self._held:
            if self._ended:
                return None
            self._ready.clear()
            await self._ready.wait()
        return self._held.popleft()
