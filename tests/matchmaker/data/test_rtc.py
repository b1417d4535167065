"""WebRTC signalling over real sockets: ``rtc.signal`` between members of one session only."""

from __future__ import annotations

from typing import Any

import pytest

from matchmaker.errors import MatchmakerError


async def test_signals_reach_one_member_of_the_same_session_only(start_server: Any) -> None:
    server = await start_server(max_send_bytes=1024, send_burst=5, send_rate_per_s=0.001)
    a, b, outsider = await server.connect(), await server.connect(), await server.connect()
    room = (await a.join("r", create=True))["session_id"]
    await b.join("r")
    offer = {"type": "offer", "sdp": "v=0\r\n..."}
    data = {"session_id": room, "to": b.client_id, "signal": offer}
    assert await a.request("rtc.signal", data) == {}
    got = await b.next_event("rtc.signal")
    assert got.data == {"session_id": room, "from": a.client_id, "signal": offer}
    refusals = [
        (a, {**data, "to": outsider.client_id}, "session.not_member"),
        (a, {**data, "to": a.client_id}, "session.not_member"),
        (outsider, {**data, "to": a.client_id}, "session.not_member"),
        (a, {**data, "session_id": "nope"}, "session.not_found"),
        (a, {**data, "signal": "x" * 2000}, "protocol.too_large"),
    ]
    for sender, request, code in refusals:
        with pytest.raises(MatchmakerError) as caught:
            await sender.request("rtc.signal", request)
        assert caught.value.code == code
    # signals spend the relay budget (burst 5: a's five signals above, refused ones
    # included, took a token each): the next is rate limited
    with pytest.raises(MatchmakerError) as caught:
        await a.request("rtc.signal", data)
    assert caught.value.code == "rate.limited"
    await a.request("ping")  # control requests are not affected
    assert outsider._events.empty()  # the outsider never saw a signal


async def test_hello_offers_the_configured_ice_servers(start_server: Any) -> None:
    plain = await (await start_server()).connect()
    assert plain.hello_reply["ice_servers"] == []
    server = await start_server(ice_servers="stun:127.0.0.1:3478, turn:127.0.0.1:3479,")
    client = await server.connect()
    assert client.hello_reply["ice_servers"] == [
        {"urls": ["stun:127.0.0.1:3478"]},
        {"urls": ["turn:127.0.0.1:3479"]},
    ]
