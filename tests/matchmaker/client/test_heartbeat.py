"""The client's heartbeat decision on an explicit clock: ping a quiet connection (or one
whose sends wait for an ack) once per interval, drop a silent one at the timeout."""

from __future__ import annotations

from matchmaker.client.heartbeat import Watchdog

BEAT = Watchdog.of({"heartbeat": {"interval_ms": 1000, "timeout_ms": 3000}})


def test_a_quiet_connection_is_pinged_once_per_interval() -> None:
    assert BEAT.due(now=0.9, heard=0.0, pinged=0.0, waiting=False) is None
    assert BEAT.due(now=1.0, heard=0.0, pinged=0.0, waiting=False) == "ping"
    assert BEAT.due(now=1.5, heard=0.0, pinged=1.0, waiting=False) is None
    assert BEAT.due(now=2.0, heard=0.0, pinged=1.0, waiting=False) == "ping"


def test_a_busy_connection_is_pinged_only_while_sends_wait_for_an_ack() -> None:
    assert BEAT.due(now=5.0, heard=4.9, pinged=0.0, waiting=False) is None
    assert BEAT.due(now=5.0, heard=4.9, pinged=0.0, waiting=True) == "ping"
    assert BEAT.due(now=5.0, heard=4.9, pinged=4.5, waiting=True) is None


def test_a_silent_connection_is_dropped_at_the_timeout() -> None:
    assert BEAT.due(now=2.99, heard=0.0, pinged=2.0, waiting=False) is None
    assert BEAT.due(now=3.0, heard=0.0, pinged=2.0, waiting=True) == "drop"
    assert BEAT.check_every_s() == 0.25
