"""Server-side WebRTC peers (aiortc): ``rtc.offer`` answered, each data channel a connection."""

from __future__ import annotations

from typing import Any

from matchmaker.core import closecodes
from matchmaker.data.connection import Connection
from matchmaker.data.jobs.tasks import Background
from matchmaker.data.jobs.writers import Writers
from matchmaker.data.translate import error_frame, reply_frame
from matchmaker.data.webrtc import ChannelAnswer, answer_offer, channel_send, close_quietly
from matchmaker.errors import MatchmakerError

__all__ = ["Peers"]


class Peers:
    """The peers answered for this process's connections, each with the connection that
    opened it, and the offers being answered."""

    def __init__(self, limit: int, writers: Writers, background: Background) -> None:
        self._limit = limit  # rtc_peers_per_connection
        self._writers = writers
        self._background = background
        self._peers: dict[Any, Connection] = {}
        self._offering: list[Connection] = []  # offers being answered, by connection

    def open_channel(self, connection: Connection, request_id: str | None, sdp: str) -> None:
        """Answer ``rtc.offer`` in the background; the reply goes to ``connection``. Each
        peer costs like a connection, so one connection opens at most
        ``rtc_peers_per_connection`` of them (``rtc.limit``)."""
        limit = self._limit
        opened = sum(1 for owner in self._peers.values() if owner is connection)
        if opened + self._offering.count(connection) >= limit:
            error = MatchmakerError(
                f"at most {limit} WebRTC peers per connection",
                code="rtc.limit",
                details={"limit": limit},
            )
            connection.push(error_frame(request_id, error))
            return
        self._offering.append(connection)
        self._background.spawn(self._answer(connection, request_id, sdp), "rtc.answer")

    async def _answer(self, connection: Connection, request_id: str | None, sdp: str) -> None:
        try:
            peer, answer = await answer_offer(sdp, self._serve_channel)
        except MatchmakerError as error:
            connection.push(error_frame(request_id, error))
            return
        finally:
            self._offering.remove(connection)
        self._peers[peer] = connection
        connection.push(reply_frame(request_id, ChannelAnswer(answer)))

    def _serve_channel(self, peer: Any, channel: Any) -> None:
        """A data channel opened: it is a connection of its own, speaking the protocol."""
        connection, writer = self._writers.open(channel_send(peer, channel))

        def closed() -> None:
            if connection.close_code is None:
                connection.close(closecodes.GOING_AWAY, "")
            writer.cancel()
            self._peers.pop(peer, None)
            self._background.spawn(close_quietly(peer), "rtc.close")

        channel.on("message", connection.on_frame)
        channel.on("close", closed)
