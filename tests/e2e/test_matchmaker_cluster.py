"""Several matchmaker processes as one service over the real Redis (``--cluster``).

Real launcher processes on loopback, the shared Redis (db 13) or, for the outage
test, a redis-server of the test's own on a free port.
"""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from matchmaker.cluster.ring import owner, pool_key
from tests.matchmaker.polling import wait_until

from .cluster_client import (
    REDIS_URL,
    Client,
    cluster,
    health,
    node,
    pool_owned_by,
    wait_for_members,
)
from .matchmaker_process import MatchmakerProcess, free_port

pytestmark = pytest.mark.redis

RELAYED = 300


def test_two_processes_match_across_and_relay_in_order(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as (a, b):
        members = [node(a), node(b)]
        owners = set()
        for i in range(6):
            left, right = Client(a), Client(b)
            name = f"duel{i}"
            owners.add(owner(pool_key(left.project, name), members))
            assert left.enter(name)["ok"]
            assert right.enter(name)["ok"]
            mine, theirs = left.event("session.created"), right.event("session.created")
            assert mine["session_id"] == theirs["session_id"]
            assert {m["client_id"] for m in mine["members"]} == {left.client_id, right.client_id}
            session = mine["session_id"]
            for n in range(RELAYED):
                left.send(session, {"n": n})
                right.send(session, {"m": n})
            got = [right.event("session.message")["data"]["n"] for _ in range(RELAYED)]
            back = [left.event("session.message")["data"]["m"] for _ in range(RELAYED)]
            assert got == list(range(RELAYED))
            assert back == list(range(RELAYED))
            assert right.request("session.leave", {"session_id": session})["ok"]
            left_event = left.event("session.member_left")
            assert left_event == {
                "session_id": session,
                "client_id": right.client_id,
                "reason": "left",
            }
            left.close()
            right.close()
        # Both processes owned some of the pools: every combination was crossed.
        assert owners == set(members)


def test_three_processes_form_one_group_of_three(tmp_path: Path) -> None:
    with cluster(tmp_path, 3) as processes:
        for target in processes:
            clients = [Client(p) for p in processes]
            name = pool_owned_by(target, processes, clients[0].project, "trio")
            for client in clients:
                assert client.enter(name, group_size=3)["ok"]
            created = [c.event("session.created") for c in clients]
            assert len({c["session_id"] for c in created}) == 1
            session = created[0]["session_id"]
            for i, client in enumerate(clients):
                client.send(session, {"from": i})
            for i, client in enumerate(clients):
                heard = sorted(client.event("session.message")["data"]["from"] for _ in range(2))
                assert heard == sorted(set(range(3)) - {i})
            for client in clients:
                client.close()


def test_pool_leave_is_forwarded_to_the_owner(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as (a, b):
        first, second, third = Client(a), Client(a), Client(a)
        name = pool_owned_by(b, [a, b], first.project, "leave")
        assert first.enter(name)["ok"]
        left = first.request("pool.leave", {"pool": name})
        assert left["ok"]
        assert left["data"]["pool"] == name
        # The withdrawn entry is not matched: the next two are.
        assert second.enter(name)["ok"]
        assert third.enter(name)["ok"]
        members = {m["client_id"] for m in second.event("session.created")["members"]}
        assert members == {second.client_id, third.client_id}


def test_kill_9_mid_session_and_mid_pool(tmp_path: Path) -> None:
    with cluster(tmp_path, 3) as processes:
        a, b, c = processes
        alice, bob = Client(a), Client(b)
        # The session lives on b (the pool's owner), bob's process.
        duel = pool_owned_by(b, processes, alice.project, "duel")
        assert alice.enter(duel)["ok"]
        assert bob.enter(duel)["ok"]
        session = alice.event("session.created")["session_id"]
        bob.event("session.created")
        # A waiting entry in another pool owned by b.
        waiter = Client(a)
        queue = pool_owned_by(b, processes, alice.project, "queue")
        assert waiter.enter(queue)["ok"]

        killed_at = time.monotonic()
        b.process.send_signal(signal.SIGKILL)
        b.process.wait(5)
        left = alice.event("session.member_left", timeout=10)
        assert left == {"session_id": session, "client_id": bob.client_id, "reason": "disconnected"}
        assert time.monotonic() - killed_at <= 10
        wait_for_members([a, c], 2)

        # The pool moved to a live owner, with the waiting entry: a newcomer on c meets it.
        late = Client(c)
        assert late.enter(queue)["ok"]
        met = {m["client_id"] for m in late.event("session.created", timeout=5)["members"]}
        assert met == {waiter.client_id, late.client_id}
        assert waiter.event("session.created")["session_id"]


def _redis_server(port: int, directory: Path) -> subprocess.Popen[bytes]:
    """Start a redis-server on ``port`` (nothing saved) and wait until it answers."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
        ],
        stdout=subprocess.DEVNULL,
    )
    wait_until(lambda: _answers(port), within_s=5, what="redis-server up")
    return process


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[int, list[subprocess.Popen[bytes]]]]:
    """A redis-server of this test's own (it gets stopped and restarted)."""
    port = free_port()
    started = [_redis_server(port, tmp_path)]
    yield port, started
    for process in started:
        if process.poll() is None:
            process.terminate()
            process.wait(5)


def _answers(port: int) -> bool:
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def test_redis_outage_is_a_coded_error_and_service_resumes(
    tmp_path: Path, own_redis: tuple[int, list[subprocess.Popen[bytes]]]
) -> None:
    port, started = own_redis
    with cluster(tmp_path, 2, redis_url=f"redis://127.0.0.1:{port}/0") as (a, b):
        first, second = Client(a), Client(a)
        name = pool_owned_by(b, [a, b], first.project, "outage")
        started[-1].terminate()
        started[-1].wait(5)
        wait_until(lambda: not health(a)["cluster"]["available"], within_s=5, what="outage seen")
        asked = time.monotonic()
        refused = first.enter(name)
        assert time.monotonic() - asked < 3
        assert not refused["ok"]
        assert refused["error"]["code"] == "cluster.unavailable"

        # Redis comes back (empty): the members find each other again and work resumes.
        started.append(_redis_server(port, tmp_path))
        wait_for_members([a, b], 2, within_s=15)
        assert first.enter(name)["ok"]
        assert second.enter(name)["ok"]
        assert first.event("session.created")["session_id"]


def test_scripted_enters_and_leaves_form_the_groups_one_process_would(tmp_path: Path) -> None:
    """A seeded script of enters and leaves over 3 processes forms exactly the whole groups a
    single FIFO per pool (one process) forms, each answered before the next step."""
    with cluster(tmp_path, 3) as processes:
        for seed in range(3):
            rng = random.Random(seed)
            clients = [Client(processes[i % 3]) for i in range(12)]
            sizes = {f"s{seed}p{i}": 2 + i % 2 for i in range(3)}
            fifo: dict[str, list[int]] = {name: [] for name in sizes}
            waiting: dict[int, str] = {}
            matched: dict[int, set[int]] = {}
            for _ in range(60):
                i = rng.randrange(len(clients))
                if i in matched:
                    continue
                if i in waiting and rng.random() < 0.4:
                    name = waiting.pop(i)
                    fifo[name].remove(i)
                    assert clients[i].request("pool.leave", {"pool": name})["ok"]
                elif i not in waiting:
                    name = rng.choice(sorted(sizes))
                    assert clients[i].enter(name, group_size=sizes[name])["ok"]
                    fifo[name].append(i)
                    waiting[i] = name
                    if len(fifo[name]) == sizes[name]:
                        group = set(fifo[name])
                        fifo[name].clear()
                        for member in group:
                            matched[member] = group
                            del waiting[member]
            # Matched clients got their session, with exactly the modelled group.
            for i, group in matched.items():
                created = clients[i].event("session.created")
                ids = {m["client_id"] for m in created["members"]}
                assert ids == {clients[j].client_id for j in group}
            # Waiting ones were not matched: their entry is still there to leave.
            for i, name in waiting.items():
                assert clients[i].request("pool.leave", {"pool": name})["ok"]
                assert not any(e.get("type") == "session.created" for e in clients[i].events)
            assert matched, "the script formed no group at all"
            for client in clients:
                client.close()


def test_a_joining_process_takes_its_pools_with_their_waiting_entries(tmp_path: Path) -> None:
    with cluster(tmp_path, 1) as (a,):
        early = [Client(a) for _ in range(8)]
        for i, client in enumerate(early):
            assert client.enter(f"grow{i}")["ok"]
        name = health(a)["cluster"]["name"]
        args = ["--port", "0", "--server", "hypercorn", "--cluster-name", name]
        env = {"MATCHMAKER_CLUSTER": REDIS_URL}  # the environment variable works like the flag
        b = MatchmakerProcess(args, cwd=tmp_path, env=env, expect_control=False)
        try:
            wait_for_members([a, b], 2)
            members = [node(a), node(b)]
            moved = [
                i
                for i in range(8)
                if owner(pool_key(early[0].project, f"grow{i}"), members) == members[1]
            ]
            assert moved, "no pool moved to the new member (try more pools)"
            # Every pool, moved or not, still matches its early entry with a newcomer on b.
            for i, client in enumerate(early):
                late = Client(b)
                assert late.enter(f"grow{i}")["ok"]
                ids = {m["client_id"] for m in late.event("session.created")["members"]}
                assert ids == {client.client_id, late.client_id}
        finally:
            b.stop()


def test_claim_and_mutual_modes_work_across_processes(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as (a, b):
        seeker, host = Client(a), Client(b)
        lobby = pool_owned_by(b, [a, b], seeker.project, "lobby")
        claim = {"pool": lobby, "create": True, "mode": "claim", "groupSize": 2}
        assert seeker.request("pool.enter", {**claim, "listed": False})["ok"]
        assert host.request("pool.enter", {**claim, "public": {"table": "blitz"}})["ok"]
        listed = seeker.request("pool.list", {"pool": lobby})
        assert [e["client_id"] for e in listed["data"]["entries"]] == [host.client_id]
        made = seeker.request("claim.make", {"pool": lobby, "targets": [host.client_id]})
        assert made["ok"], made
        session = made["data"]["session_id"]
        assert host.event("session.created")["session_id"] == session
        assert seeker.event("session.created")["session_id"] == session

        left, right = Client(a), Client(b)
        duo = pool_owned_by(a, [a, b], left.project, "duo")
        mutual = {"pool": duo, "create": True, "mode": "mutual", "groupSize": 2}
        assert left.request("pool.enter", mutual)["ok"]
        assert right.request("pool.enter", mutual)["ok"]
        assert left.request("pick.add", {"pool": duo, "target": right.client_id})["ok"]
        picked = right.request("pick.add", {"pool": duo, "target": left.client_id})
        assert picked["ok"]
        assert picked["data"]["session_id"]
        assert left.event("session.created")["session_id"] == picked["data"]["session_id"]
