"""The sends a reconnecting client holds until the server acknowledges them.

Exactly-once sending (``docs/protocol.md``, acknowledgements): each ``session.send`` is
numbered with the next ``seq`` and kept, encoded, until an ``ack`` at or past its number
arrives. After a resume the ``hello`` reply's ``ack`` says which the server took; the rest
are written again, in order, before any new one, and the server drops any it already took.
The bytes held are capped, so a client cut off for long fails its sends
(``client.backpressure``) instead of growing without bound.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from matchmaker.errors import MatchmakerError

__all__ = ["DEFAULT_MAX_UNACKED_BYTES", "Held", "Unacked"]

DEFAULT_MAX_UNACKED_BYTES = 1 << 20
"""1 MiB of encoded frames: seconds of a busy game's sends, well past a blip."""


@dataclass(frozen=True, slots=True)
class Held:
    """One numbered send, as the text written (again) to the socket."""

    seq: int
    frame: str
    size: int  # the frame's length in bytes, what the cap counts


@dataclass(slots=True)
class Unacked:
    """The unacknowledged sends, their bytes, and how far this connection has written."""

    limit: int = DEFAULT_MAX_UNACKED_BYTES
    frame_limit: int | None = None  # the server's max_frame_bytes, once hello told it
    held: deque[Held] = field(default_factory=deque)
    bytes: int = 0
    last_seq: int = 0  # the seq of the last send numbered: never reset while the client lives
    ack: int = 0  # the highest seq the server said it took
    written: int = 0  # the highest seq written on the current connection

    def hold(self, frame_for: Callable[[int], str]) -> Held:
        """Number the next send and keep its frame; past ``limit`` it is refused and
        no number is spent (``client.backpressure``, ``details.limit``)."""
        seq = self.last_seq + 1
        frame = frame_for(seq)
        size = len(frame.encode())
        if self.frame_limit is not None and size > self.frame_limit:
            # the server would refuse it unread, taking no seq: every later send a gap
            raise MatchmakerError(
                f"the send is {size} bytes, over the server's max_frame_bytes",
                code="protocol.too_large",
                details={"limit": self.frame_limit},
            )
        if self.bytes + size > self.limit:
            raise MatchmakerError(
                f"{self.bytes} bytes of sends are not acknowledged yet; "
                f"this one would pass the cap of {self.limit}",
                code="client.backpressure",
                details={"limit": self.limit},
            )
        self.last_seq = seq
        held = Held(seq, frame, size)
        self.held.append(held)
        self.bytes += size
        return held

    def acknowledge(self, ack: int) -> None:
        """The server took every send up to ``ack``: forget them."""
        self.ack = max(self.ack, ack)
        while self.held and self.held[0].seq <= self.ack:
            self.bytes -= self.held.popleft().size

    def rewind(self) -> None:
        """A new connection: nothing unacknowledged has been written on it yet."""
        self.written = self.ack

    def again_from(self, seq: int) -> None:
        """The server did not take ``seq`` (rate limited, or a gap after such a one):
        write it and the ones after it again."""
        self.written = min(self.written, seq - 1)

    def unwritten(self) -> Iterator[Held]:
        """The held sends not yet written on this connection, in order (a snapshot)."""
        return iter([held for held in self.held if held.seq > self.written])

    def past_half(self) -> bool:
        """More than half the cap is unacknowledged: time to ask for an ``ack`` (``ping``)."""
        return self.bytes * 2 > self.limit
