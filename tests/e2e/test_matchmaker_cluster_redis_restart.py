"""A Redis restart that loses the registry does not declare a live member dead.

Real launcher processes over a redis-server of the test's own (killed by its PID and
started again, empty, on the same port). Both processes stay alive throughout: their
pairs must stay in their sessions and relay both ways afterwards, nobody told
``member_left`` nor refused with ``session.not_found``.
"""

from __future__ import annotations

import itertools
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from matchmaker.cluster.membership import HEARTBEAT_S, MEMBER_TTL_MS
from tests.matchmaker.polling import wait_until

from .cluster_client import Client, cluster, health, pool_owned_by, wait_for_members
from .matchmaker_process import MatchmakerProcess
from .redis_server import RedisServer

pytestmark = pytest.mark.redis

PAIRS_PER_PROCESS = 6


def _pairs(a: MatchmakerProcess, b: MatchmakerProcess) -> list[tuple[Client, Client, str]]:
    """Six pairs in sessions hosted by each process, one client of each pair on each."""
    pairs = []
    for i in range(2 * PAIRS_PER_PROCESS):
        host = (a, b)[i % 2]
        left, right = Client(a), Client(b)
        name = pool_owned_by(host, [a, b], left.project, f"restart{i}-")
        assert left.enter(name)["ok"]
        assert right.enter(name)["ok"]
        session = left.event("session.created")["session_id"]
        assert right.event("session.created")["session_id"] == session
        pairs.append((left, right, session))
    return pairs


def _relay(pairs: list[tuple[Client, Client, str]], n: int) -> None:
    """Message ``n`` both ways in every pair; nothing else may arrive (no ``member_left``,
    no error): :meth:`Client.message` raises ``TimeoutError`` if a message is lost."""
    for left, right, session in pairs:
        left.send(session, {"n": n})
        right.send(session, {"n": n})
    for left, right, session in pairs:
        for client in (left, right):
            message: dict[str, Any] = client.message(timeout=5)
            assert message["type"] == "session.message", message
            assert message["data"]["session_id"] == session, message
            assert message["data"]["data"] == {"n": n}, message


@pytest.mark.parametrize("outage_seen", [True, False], ids=["outage-seen", "quick-restart"])
def test_pairs_stay_in_their_sessions_across_a_redis_restart_that_lost_the_registry(
    tmp_path: Path, own_redis: RedisServer, outage_seen: bool
) -> None:
    """Killed and restarted empty (after both processes saw it gone, or at once): every
    pair relays both ways from then on, past the time the members would have been
    found dead (the member TTL after Redis came back)."""
    with cluster(tmp_path, 2, redis_url=own_redis.url) as (a, b):
        pairs = _pairs(a, b)
        _relay(pairs, 0)
        own_redis.stop(kill=True)
        if outage_seen:
            wait_until(
                lambda: not any(health(p)["cluster"]["available"] for p in (a, b)),
                within_s=10,
                what="the outage seen",
            )
        own_redis.start()
        back = time.monotonic()
        wait_for_members([a, b], 2, within_s=15)
        # Relay until well past the moment a member missing from the emptied registry
        # would be declared dead: every round goes through whole.
        until = back + (MEMBER_TTL_MS / 1000 + 3 * HEARTBEAT_S)
        for n in itertools.count(1):
            _relay(pairs, n)
            if time.monotonic() > until:
                break
        assert all(health(p)["cluster"]["members"] == 2 for p in (a, b))
        for left, right, _ in pairs:
            assert not left.events
            assert not right.events


def test_a_process_found_dead_while_alive_tells_its_clients_when_it_is_back(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    """b is stopped (``SIGSTOP``) past the member TTL, so a finds it dead and tells x that
    y left; b is continued and joins again: a tells b, and b tells y that x left, instead
    of leaving y in a session whose host forgot it (its sends refused, nobody told why)."""
    with cluster(tmp_path, 2, redis_url=own_redis.url) as (a, b):
        x, y = Client(a), Client(b)
        name = pool_owned_by(a, [a, b], x.project, "stall")
        assert x.enter(name)["ok"]
        assert y.enter(name)["ok"]
        session = x.event("session.created")["session_id"]
        assert y.event("session.created")["session_id"] == session
        b.process.send_signal(signal.SIGSTOP)
        try:
            wait_until(lambda: health(a)["cluster"]["members"] == 1, within_s=10, what="b dead")
        finally:
            b.process.send_signal(signal.SIGCONT)
        left = x.event("session.member_left")
        assert left == {"session_id": session, "client_id": y.client_id, "reason": "disconnected"}
        wait_for_members([a, b], 2, within_s=15)
        told = y.event("session.member_left", timeout=10)
        assert told == {"session_id": session, "client_id": x.client_id, "reason": "disconnected"}
