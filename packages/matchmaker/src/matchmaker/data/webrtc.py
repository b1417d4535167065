"""Server-side WebRTC data channels (extra ``matchmaker[webrtc]``, aiortc).

A client that holds a WebSocket sends ``rtc.offer {sdp}`` with a data channel
in its offer; the server answers with its own SDP, and once the channel opens
it carries exactly the WebSocket protocol: one JSON text message per frame,
starting with ``hello``, as a connection of its own (its own client id, rate
limits, heartbeat and resume). aiortc is imported here only, when the first
offer arrives, so a server without the extra pays nothing for it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from matchmaker.core.events import ModeAnswer
from matchmaker.errors import MatchmakerError

__all__ = ["ChannelAnswer", "answer_offer", "channel_send", "close_quietly"]


@dataclass(frozen=True, slots=True)
class ChannelAnswer(ModeAnswer):
    """The ``rtc.offer`` reply: the server's SDP answer."""

    sdp: str
    type: str = "answer"


async def answer_offer(sdp: str, on_channel: Callable[[Any, Any], None]) -> tuple[Any, str]:
    """A server-side peer for the offer ``sdp`` and its SDP answer; ``on_channel(peer,
    channel)`` runs for each data channel the client opens."""
    try:
        from aiortc import RTCPeerConnection, RTCSessionDescription
    except ImportError as error:
        raise MatchmakerError(
            "this server has no WebRTC support (install matchmaker[webrtc])",
            code="rtc.unavailable",
        ) from error
    if "m=application" not in sdp:
        raise MatchmakerError("the offer has no data channel (m=application)", code="rtc.bad_offer")
    peer = RTCPeerConnection()
    peer.on("datachannel", lambda channel: on_channel(peer, channel))
    try:
        await peer.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="offer"))
        await peer.setLocalDescription(await peer.createAnswer())
    except Exception as error:  # aiortc raises ValueError and others for a bad SDP
        await peer.close()
        raise MatchmakerError(f"not a usable SDP offer: {error}", code="rtc.bad_offer") from None
    return peer, peer.localDescription.sdp


def channel_send(peer: Any, channel: Any) -> Callable[[MutableMapping[str, Any]], Any]:
    """An ASGI-style ``send`` for :class:`~matchmaker.data.connection.Connection` that
    writes frames to ``channel`` and closes ``peer`` on close."""

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "websocket.send":
            if channel.readyState == "open":
                channel.send(message["text"])
        elif message["type"] == "websocket.close":
            with contextlib.suppress(Exception):
                await peer.close()

    return send


async def close_quietly(peer: Any) -> None:
    """Close a peer, however it fails (at shutdown, or after its channel closed)."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(peer.close(), timeout=5)
