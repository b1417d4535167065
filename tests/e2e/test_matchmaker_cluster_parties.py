"""Parties over several ``--cluster`` processes, each on a redis-server of the test's own:
a party whose members are connected to different processes plays as on one process."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.matchmaker.servers import SERVERS

from .cluster_client import Client, cluster, pool_owned_by, wait_for_members
from .matchmaker_process import MatchmakerProcess
from .redis_server import RedisServer

pytestmark = pytest.mark.redis


def squad(name: str, **fields: Any) -> dict[str, Any]:
    """An ad-hoc ``pool.enter`` of groups of four."""
    return {"pool": name, "create": True, "mode": "auto", "groupSize": 4, **fields}


def party(leader: Client, *others: Client) -> dict[str, Any]:
    """A party created by ``leader`` and joined by ``others`` by its code: its id."""
    created = leader.request("party.create", {})
    assert created["ok"], created
    for other in others:
        joined = other.request("party.join", {"code": created["data"]["code"].lower()})
        assert joined["ok"], joined
        assert joined["data"]["party_id"] == created["data"]["party_id"]
        assert leader.event("party.member_joined")["client_id"] == other.client_id
    data: dict[str, Any] = created["data"]
    return data


def together(clients: list[Client]) -> str:
    """Every client got ``session.created`` for one session of exactly them: its id."""
    created = [c.event("session.created", timeout=10) for c in clients]
    assert len({c["session_id"] for c in created}) == 1
    assert {m["client_id"] for m in created[0]["members"]} == {c.client_id for c in clients}
    session: str = created[0]["session_id"]
    return session


@pytest.mark.parametrize("server", SERVERS)
def test_a_party_split_over_two_processes_plays_with_two_solos(
    tmp_path: Path, own_redis: RedisServer, server: str
) -> None:
    with cluster(tmp_path, 2, redis_url=own_redis.url, server=server) as (a, b):
        for owner in (a, b):  # the pool owned by the party's process, then by the other
            alice, bob, solo_a, solo_b = Client(a), Client(b), Client(a), Client(b)
            created = party(alice, bob)
            name = pool_owned_by(owner, [a, b], alice.project, "squad")
            assert solo_b.request("pool.enter", squad(name))["ok"]
            entered = alice.request("pool.enter", squad(name, party_id=created["party_id"]))
            assert entered["ok"], entered
            told = bob.event("party.entered")
            assert told == {
                "party_id": created["party_id"],
                "pool": name,
                "entry_id": entered["data"]["entry_id"],
            }
            assert solo_a.request("pool.enter", squad(name))["ok"]
            session = together([alice, bob, solo_a, solo_b])
            bob.send(session, {"to": "my leader"})
            assert alice.event("session.message")["data"] == {"to": "my leader"}
            alice.send(session, {"to": "my friend"})
            assert bob.event("session.message")["data"] == {"to": "my friend"}
            for client in (alice, bob, solo_a, solo_b):
                client.close()


def test_a_leader_on_another_process_enters_the_party_through_its_holder(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    with cluster(tmp_path, 2, redis_url=own_redis.url) as (a, b):
        alice, bob, carol, solo_a, solo_b = Client(a), Client(b), Client(a), Client(a), Client(b)
        created = party(alice, bob, carol)  # held by a, alice's process
        assert alice.request("party.leave", {"party_id": created["party_id"]})["ok"]
        left = carol.event("party.member_left")
        assert left["leader"] == bob.client_id  # bob, on b, leads now
        name = pool_owned_by(b, [a, b], bob.project, "squad")
        refused = carol.request("pool.enter", squad(name, party_id=created["party_id"]))
        assert refused["error"]["code"] == "party.not_leader"
        entered = bob.request("pool.enter", squad(name, party_id=created["party_id"]))
        assert entered["ok"], entered
        assert carol.event("party.entered")["entry_id"] == entered["data"]["entry_id"]
        assert solo_a.request("pool.enter", squad(name))["ok"]
        assert solo_b.request("pool.enter", squad(name))["ok"]
        session = together([bob, carol, solo_a, solo_b])
        carol.send(session, {"hi": 1})
        assert bob.event("session.message")["data"] == {"hi": 1}


def test_a_party_that_changes_while_it_waits_elsewhere_is_withdrawn_for_all(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    with cluster(tmp_path, 2, redis_url=own_redis.url) as (a, b):
        alice, bob = Client(a), Client(b)
        created = party(alice, bob)
        name = pool_owned_by(b, [a, b], alice.project, "squad")
        entered = alice.request("pool.enter", squad(name, party_id=created["party_id"]))
        assert entered["ok"], entered
        assert bob.request("party.leave", {"party_id": created["party_id"]})["ok"]
        for member in (alice, bob):
            withdrawn = member.event("pool.withdrawn")
            assert withdrawn == {
                "pool": name,
                "entry_id": entered["data"]["entry_id"],
                "reason": "party_changed",
            }
        # Withdrawn where it waited: two solos and a new pair make the next group.
        again = alice.request("pool.enter", squad(name, party_id=created["party_id"]))
        assert again["ok"], again
        others = [Client(a), Client(b), Client(b)]
        for other in others:
            assert other.request("pool.enter", squad(name))["ok"]
        together([alice, *others])


def test_a_members_process_dying_while_the_party_waits_withdraws_it(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    with cluster(tmp_path, 3, redis_url=own_redis.url) as processes:
        a, b, c = processes
        alice, bob = Client(a), Client(c)
        created = party(alice, bob)
        name = pool_owned_by(b, processes, alice.project, "squad")
        entered = alice.request("pool.enter", squad(name, party_id=created["party_id"]))
        assert entered["ok"], entered
        _kill(c)
        # Told by two processes (the pool's owner and the party's), in either order.
        heard = _awake(alice, {"pool.withdrawn", "party.member_left"})
        assert heard["pool.withdrawn"] == {
            "pool": name,
            "entry_id": entered["data"]["entry_id"],
            "reason": "party_changed",
        }
        assert heard["party.member_left"] == {
            "party_id": created["party_id"],
            "client_id": bob.client_id,
            "reason": "disconnected",
            "leader": alice.client_id,
        }
        wait_for_members([a, b], 2)


def _awake(client: Client, kinds: set[str], within_s: float = 30) -> dict[str, Any]:
    """The next event of each of ``kinds``, by kind, pinging meanwhile: finding a member
    dead takes up to its key's lifetime, and a silent client would be dropped by the
    heartbeat first."""
    deadline = time.monotonic() + within_s
    heard: dict[str, Any] = {}
    while set(heard) != kinds:
        try:
            message = client.message(timeout=2)
        except TimeoutError:
            if time.monotonic() > deadline:
                raise
            client.ws.send('{"type":"ping"}')
            continue
        if message.get("type") in kinds:
            heard.setdefault(message["type"], message["data"])
    return heard


def _kill(process: MatchmakerProcess) -> None:
    process.process.send_signal(signal.SIGKILL)
    process.process.wait(5)
