"""The unacknowledged sends and the backoff, without a socket: numbering, the byte cap,
acknowledgement, what a new connection writes again, and the delays between attempts."""

from __future__ import annotations

import random

import pytest

from matchmaker.client import Reconnect
from matchmaker.client.backoff import delay_s, resumable
from matchmaker.client.unacked import Unacked
from matchmaker.errors import MatchmakerError


def frame(seq: int) -> str:
    return f'{{"type":"session.send","seq":{seq},"data":"xxxxxxxxxx"}}'


def test_sends_are_numbered_and_held_until_acknowledged() -> None:
    unacked = Unacked(limit=10_000)
    held = [unacked.hold(frame) for _ in range(4)]
    assert [h.seq for h in held] == [1, 2, 3, 4]
    assert unacked.bytes == sum(len(h.frame) for h in held)
    unacked.acknowledge(2)
    assert [h.seq for h in unacked.held] == [3, 4]
    assert unacked.bytes == sum(len(h.frame) for h in held[2:])
    unacked.acknowledge(1)  # an old ack changes nothing
    assert [h.seq for h in unacked.held] == [3, 4]


def test_a_new_connection_writes_again_what_is_not_acknowledged_in_order() -> None:
    unacked = Unacked(limit=10_000)
    for _ in range(5):
        unacked.hold(frame)
    unacked.written = 5  # all five went out on the lost connection
    assert list(unacked.unwritten()) == []
    unacked.acknowledge(3)
    unacked.rewind()
    assert [h.seq for h in unacked.unwritten()] == [4, 5]
    assert unacked.hold(frame).seq == 6  # numbering goes on across connections


def test_past_the_cap_a_send_is_refused_and_spends_no_number() -> None:
    size = len(frame(1))
    unacked = Unacked(limit=size * 3)
    for _ in range(3):
        unacked.hold(frame)
    assert unacked.past_half()
    with pytest.raises(MatchmakerError) as caught:
        unacked.hold(frame)
    assert caught.value.code == "client.backpressure"
    assert caught.value.details == {"limit": size * 3}
    unacked.acknowledge(1)
    assert unacked.hold(frame).seq == 4
    assert not Unacked(limit=size * 3).past_half()


def test_delays_double_up_to_the_cap_jittered_to_half() -> None:
    reconnect = Reconnect(initial_delay_ms=100, max_delay_ms=1000)
    rng = random.Random(7)
    for attempt, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (60, 1.0)]:
        delays = [delay_s(reconnect, attempt, rng) for _ in range(200)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert max(delays) - min(delays) > ceiling / 4  # jittered, not fixed


@pytest.mark.parametrize("code", [None, 1006, 1011, 3001, 3002, 3008, 3029])
def test_lost_sockets_restarts_and_server_drops_are_resumed(code: int | None) -> None:
    assert resumable(code)


@pytest.mark.parametrize("code", [1000, 1001, 3009, 4000, 4001, 4003, 4004])
def test_final_close_codes_are_not(code: int) -> None:
    assert not resumable(code)
