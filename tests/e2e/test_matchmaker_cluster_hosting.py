"""Sessions hosted where their players are: a game survives the death of other processes.

Real launcher processes over a redis-server of the test's own; processes are killed by
their PID (``SIGKILL``, as a crash would). A session lives on the process most of its
members are connected to, whichever process owns its pool: players who share a
process keep relaying when every other process dies; a session whose host dies while
members live elsewhere is re-hosted on a survivor's process, its members told only of
those that died with it.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.matchmaker.polling import wait_until

from .cluster_client import Client, cluster, health, node, pool_owned_by
from .matchmaker_process import MatchmakerProcess, postgres_schema
from .redis_server import RedisServer

pytestmark = pytest.mark.redis

PAIRS = 8
MANAGEMENT_KEY = "e2e-cluster-hosting-key-7d31"


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


def _kill(process: MatchmakerProcess) -> None:
    process.process.kill()
    process.process.wait(5)


def _declare(
    processes: list[MatchmakerProcess], owners: list[MatchmakerProcess]
) -> tuple[str, str, list[str]]:
    """A Project declaring a policy (pairs, auto) owned by each of ``owners``, known to
    every process: its id, a player's secret, the policies' names."""
    project, secret = f"host{uuid.uuid4().hex[:10]}", "player-" + uuid.uuid4().hex
    policies = [pool_owned_by(o, processes, project, f"p{i}-") for i, o in enumerate(owners)]
    body = {
        "id": project,
        "policies": [{"name": name, "mode": "auto", "groupSize": 2} for name in policies],
        "keys": [{"type": "shared-secret", "secret": secret}],
    }
    auth = {"Authorization": f"Bearer {MANAGEMENT_KEY}"}
    created = httpx.post(f"{processes[0].control_url}/admin/projects", json=body, headers=auth)
    assert created.status_code == 201, created.text

    def known_everywhere() -> bool:
        return all(
            httpx.get(f"{p.control_url}/admin/projects/{project}", headers=auth).is_success
            for p in processes
        )

    wait_until(known_everywhere, within_s=10, what="the Project on every process")
    return project, secret, policies


@pytest.mark.postgres
def test_pairs_on_one_process_keep_relaying_when_every_other_process_dies(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    """Eight pairs connected to a, matched in declared policies owned by a, b and c (the
    sessions formed at b and c move to a): b and c are killed, and every pair keeps
    relaying both ways, nobody told anything but its messages."""
    with postgres_schema() as store:
        control = ["--management-key", MANAGEMENT_KEY, "--store", store]
        with cluster(tmp_path, 3, redis_url=own_redis.url, control=control) as (a, b, c):
            processes = [a, b, c]
            owners = [processes[i % 3] for i in range(PAIRS)]
            project, secret, policies = _declare(processes, owners)
            pairs = []
            for name in policies:
                left = Client(a, project=project, credential=secret)
                right = Client(a, project=project, credential=secret)
                assert left.request("pool.enter", {"policy": name})["ok"]
                assert right.request("pool.enter", {"policy": name})["ok"]
                session = left.event("session.created")["session_id"]
                assert right.event("session.created")["session_id"] == session
                pairs.append((left, right, session))
            formed_at = {s.partition("-")[0][1:] for _, _, s in pairs}
            assert formed_at == {node(p) for p in processes}  # formed by every owner
            _relay(pairs, 0)
            _kill(b)
            _kill(c)
            wait_until(lambda: health(a)["cluster"]["members"] == 1, within_s=15, what="alone")
            for n in range(1, 6):
                _relay(pairs, n)
            for left, right, _ in pairs:
                assert not left.events
                assert not right.events


def test_a_session_whose_host_dies_is_rehosted_where_its_surviving_members_are(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    """x on a, y on b, z on c in one group of three, its pool owned by b (a tie: b hosts
    it). b is killed: a send of x while b's death is not yet noticed is answered (relayed
    or refused, never silently dropped); x and z are told only that y left, and keep
    relaying to each other in the same session, re-hosted on a or c."""
    with cluster(tmp_path, 3, redis_url=own_redis.url) as (a, b, c):
        x, y, z = Client(a), Client(b), Client(c)
        name = pool_owned_by(b, [a, b, c], x.project, "trio")
        for client in (x, y, z):
            assert client.enter(name, group_size=3)["ok"]
        session = x.event("session.created")["session_id"]
        assert session.startswith(f"s{node(b)}-")
        for client in (y, z):
            assert client.event("session.created")["session_id"] == session
        _kill(b)
        sent = {"session_id": session, "data": {"n": "in flight"}}
        answer = x.request("session.send", sent, timeout=10)
        assert answer["ok"] or answer["error"]["code"] == "cluster.unavailable", answer
        wait_until(
            lambda: all(health(p)["cluster"]["members"] == 2 for p in (a, c)),
            within_s=15,
            what="b found dead",
        )
        for client in (x, z):
            left = client.event("session.member_left")
            assert left == {
                "session_id": session,
                "client_id": y.client_id,
                "reason": "disconnected",
            }
        for n in range(3):
            for sender, receiver in ((x, z), (z, x)):
                assert sender.request("session.send", {"session_id": session, "data": n})["ok"]
                message = receiver.event("session.message")
                assert message == {"session_id": session, "from": sender.client_id, "data": n}
        for client in (x, z):
            assert not [e for e in client.events if e["type"] not in ("session.message",)]


def _messages(client: Client, count: int) -> list[Any]:
    """The data of the next ``count`` ``session.message`` events (replayed ones too)."""
    return [client.event("session.message")["data"] for _ in range(count)]


@pytest.mark.parametrize("server", ["hypercorn", "picows"])
def test_a_drained_process_hands_its_game_over_to_the_other(
    tmp_path: Path, own_redis: RedisServer, server: str
) -> None:
    """x and y, both on a, are in a session (hosted on a). a is stopped (``SIGTERM``)
    while y has not read x's last messages: both resume on b with the tokens a gave them,
    in the same session, and y gets every message of x exactly once and in order (the
    unread ones replayed from the outbox a handed over), then the game goes on."""
    with cluster(tmp_path, 2, redis_url=own_redis.url, server=server) as (a, b):
        x, y = Client(a), Client(a)
        name = pool_owned_by(b, [a, b], x.project, "drain")
        assert x.enter(name)["ok"]
        assert y.enter(name)["ok"]
        session = x.event("session.created")["session_id"]
        assert y.event("session.created")["session_id"] == session
        for n in range(5):
            x.send(session, n)
        assert _messages(y, 5) == list(range(5))
        for n in range(5, 10):  # relayed (answered) at a, not read by y yet
            assert x.request("session.send", {"session_id": session, "data": n})["ok"]
        a.stop()
        assert x.closed() == 3001  # resume (y reads nothing more on a: its last_seq stays 5)
        x2, y2 = Client(b, resume=x), Client(b, resume=y)
        for resumed in (x2, y2):
            assert resumed.welcome["ok"], resumed.welcome
            assert resumed.welcome["data"]["resumed"] is True
        assert y2.client_id == y.client_id
        for n in range(10, 15):
            assert x2.request("session.send", {"session_id": session, "data": n})["ok"]
        # 5-9 replayed by b from the outbox a handed over, then 10-14 relayed by b.
        assert _messages(y2, 10) == list(range(5, 15))
        assert not [e for e in y2.events if e["type"] == "session.message"]
        assert y2.request("session.send", {"session_id": session, "data": "back"})["ok"]
        assert _messages(x2, 1) == ["back"]
        for client in (x2, y2):
            assert not [e for e in client.events if e["type"] == "session.member_left"]


def test_drained_clients_resume_on_any_other_process(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    """Three processes; x and y on a, in a session; a is drained. x comes back on b and
    y on c (the load balancer's choice): whichever of them is not the client's heir
    relays the resume to it, and the two relay to each other in the same session."""
    with cluster(tmp_path, 3, redis_url=own_redis.url) as (a, b, c):
        x, y = Client(a), Client(a)
        name = pool_owned_by(a, [a, b, c], x.project, "drain3")
        assert x.enter(name)["ok"]
        assert y.enter(name)["ok"]
        session = x.event("session.created")["session_id"]
        assert y.event("session.created")["session_id"] == session
        a.stop()
        wait_until(
            lambda: all(health(p)["cluster"]["members"] == 2 for p in (b, c)),
            within_s=15,
            what="a gone",
        )
        x2, y2 = Client(b, resume=x), Client(c, resume=y)
        for resumed, old in ((x2, x), (y2, y)):
            assert resumed.welcome["ok"], resumed.welcome
            assert resumed.client_id == old.client_id
        for n in range(3):
            for sender, receiver in ((x2, y2), (y2, x2)):
                sent = sender.request("session.send", {"session_id": session, "data": n})
                assert sent["ok"], sent
                assert receiver.event("session.message")["data"] == n
