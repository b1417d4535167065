"""A connection written straight to a frame server's socket (picows), no task between.

The transport takes every frame at once while it accepts data; only while it is
paused (its buffer past the high-water mark) do frames wait in the connection's
bounded queue, which overflowing still closes 3008. The server calls the handler
methods (:class:`~matchmaker.servers.base.SocketHandler`) synchronously.
"""

from __future__ import annotations

from typing import Protocol

from matchmaker.core import closecodes
from matchmaker.core.conversation import Conversation
from matchmaker.data.connection import Connection, Hub

__all__ = ["DirectConnection", "Peer"]


class Peer(Protocol):
    """The socket's two writes (:class:`~matchmaker.servers.base.SocketPeer`)."""

    def send(self, text: str) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


class DirectConnection(Connection):
    """A :class:`Connection` that writes each frame to ``peer`` as it is pushed."""

    __slots__ = ("_closing", "_paused", "_peer", "_send")

    def __init__(self, hub: Hub, conversation: Conversation, peer: Peer) -> None:
        super().__init__(hub, conversation)
        self._peer = peer
        self._send = peer.send  # bound once: it is called for every frame
        self._paused = False
        self._closing = False

    def push(self, frame: str) -> None:
        """Write ``frame`` now; queue it (bounded) only while the transport is paused."""
        # Nothing is queued while the transport accepts data: the queue drains on resume.
        if not self._paused and self.close_code is None:
            self._send(self._with_ack(frame) if self._ack_due else frame)
        else:
            super().push(frame)

    def _wake(self) -> None:
        queue, peer = self._queue, self._peer
        while queue and (not self._paused or self.close_code is not None):
            # A close is due: what is queued (at most the bound) goes out before it.
            peer.send(queue.popleft())
        if self.close_code is not None and not self._closing:
            self._closing = True
            peer.close(self.close_code, self.close_reason)

    # -- the server's calls (SocketHandler) -------------------------------------------------

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        self._wake()

    def on_closed(self, code: int) -> None:
        """The socket ended: unless the client closed normally it may resume (1001)."""
        self._closing = True  # nothing more can be written
        if self.close_code is None:
            self.close(code if code == closecodes.NORMAL else closecodes.GOING_AWAY, "")
