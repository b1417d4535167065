"""The server-side WebRTC data channel: two aiortc peers in-process on loopback (no STUN)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from matchmaker.errors import MatchmakerError

aiortc = pytest.importorskip("aiortc")


class ChannelClient:
    """A client peer whose data channel speaks the matchmaker protocol."""

    def __init__(self) -> None:
        self.peer = aiortc.RTCPeerConnection()
        self.channel = self.peer.createDataChannel("matchmaker")
        self.opened = asyncio.Event()
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.channel.on("open", self.opened.set)
        self.channel.on("message", lambda text: self.inbox.put_nowait(json.loads(text)))

    async def offer(self) -> str:
        await self.peer.setLocalDescription(await self.peer.createOffer())
        sdp: str = self.peer.localDescription.sdp
        return sdp

    async def accept(self, sdp: str) -> None:
        answer = aiortc.RTCSessionDescription(sdp=sdp, type="answer")
        await self.peer.setRemoteDescription(answer)
        await asyncio.wait_for(self.opened.wait(), 15)

    def send(self, frame: dict[str, Any]) -> None:
        self.channel.send(json.dumps(frame))

    async def next(self, kind: str) -> dict[str, Any]:
        async with asyncio.timeout(10):
            while True:
                frame = await self.inbox.get()
                if frame["type"] == kind:
                    return frame


async def test_a_data_channel_carries_the_same_protocol(start_server: Any) -> None:
    server = await start_server()
    signaller, peer_b = await server.connect(), await server.connect()
    client = ChannelClient()
    try:
        offer = await client.offer()
        reply = await signaller.request("rtc.offer", {"sdp": offer})
        assert reply["type"] == "answer"
        with pytest.raises(MatchmakerError) as caught:  # one peer per connection by default
            await signaller.request("rtc.offer", {"sdp": offer})
        assert caught.value.code == "rtc.limit"
        await client.accept(reply["sdp"])
        client.send({"id": "h", "type": "hello", "data": {"v": 1}})
        hello = await client.next("reply")
        assert hello["ok"] is True
        channel_id = hello["data"]["client_id"]
        assert channel_id not in (signaller.client_id, peer_b.client_id)  # a client of its own
        enter = {"pool": "x", "create": True, "mode": "auto", "groupSize": 2}
        client.send({"id": "e", "type": "pool.enter", "data": enter})
        assert (await client.next("reply"))["data"]["pool"] == "x"
        await peer_b.request("pool.enter", {"pool": "x"})
        created = (await client.next("session.created"))["data"]
        assert {m["client_id"] for m in created["members"]} == {channel_id, peer_b.client_id}
        session_id = created["session_id"]
        client.send({"type": "session.send", "data": {"session_id": session_id, "data": "hi"}})
        got = await peer_b.next_event("session.message")
        assert (got.data["from"], got.data["data"]) == (channel_id, "hi")
        await peer_b.send(session_id, {"back": 1})
        message = (await client.next("session.message"))["data"]
        assert (message["from"], message["data"]) == (peer_b.client_id, {"back": 1})
    finally:
        await client.peer.close()
    # the channel closing is a dropped connection: its peer sees it away
    status = await peer_b.next_event("session.member_status")
    assert (status.data["client_id"], status.data["status"]) == (channel_id, "away")


async def test_offers_are_refused_before_hello_or_when_unusable(server: Any) -> None:
    early = await server.connect(hello=False)
    with pytest.raises(MatchmakerError) as caught:
        await early.request("rtc.offer", {"sdp": "v=0"})
    assert caught.value.code == "protocol.not_ready"
    client = await server.connect()
    with pytest.raises(MatchmakerError) as caught:
        await client.request("rtc.offer", {"sdp": "not sdp at all"})
    assert caught.value.code == "rtc.bad_offer"


async def test_without_the_extra_an_offer_is_rtc_unavailable(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "aiortc", None)  # as if matchmaker[webrtc] were absent
    client = await server.connect()
    with pytest.raises(MatchmakerError) as caught:
        await client.request("rtc.offer", {"sdp": "v=0\r\nm=application 9 UDP/DTLS/SCTP x\r\n"})
    assert caught.value.code == "rtc.unavailable"
