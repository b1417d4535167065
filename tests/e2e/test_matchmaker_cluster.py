"""Several matchmaker processes as one service over the real Redis (``--cluster``).

Real launcher processes on loopback, the shared Redis (db 13, or
``MATCHMAKER_TEST_REDIS_URL``) or, for the outage tests, a redis-server of the
test's own on a free port (or on a unix socket); the delegated test also shares one
PostgreSQL store (a fresh schema of ``MATCHMAKER_TEST_POSTGRES_URL``).
"""

from __future__ import annotations

import itertools
import json
import signal
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from .matchmaker_process import MatchmakerProcess, postgres_schema
from .redis_server import RedisServer

pytestmark = pytest.mark.redis

RELAYED = 300


def test_two_processes_match_across_and_relay_in_order(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as (a, b):
        members = [node(a), node(b)]
        owners = set()
        for i in range(6):
            left, right = Client(a), Client(b)
            # Owned by a, then b, in turn (random node names would leave all six pools to
            # one of them once in 32 runs).
            name = pool_owned_by((a, b)[i % 2], [a, b], left.project, f"duel{i}-")
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


def test_redis_outage_is_a_coded_error_and_not_ready_and_service_resumes(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    with cluster(tmp_path, 2, redis_url=own_redis.url) as (a, b):
        first, second = Client(a), Client(a)
        name = pool_owned_by(b, [a, b], first.project, "outage")
        own_redis.stop()
        wait_until(lambda: not health(a)["cluster"]["available"], within_s=5, what="outage seen")
        asked = time.monotonic()
        refused = first.enter(name)
        assert time.monotonic() - asked < 3
        assert not refused["ok"]
        assert refused["error"]["code"] == "cluster.unavailable"
        # Readiness says so too (it stayed 200): the load balancer sends new clients
        # to members that can reach Redis.
        ready = httpx.get(a.data_url + "/readyz", timeout=5)
        assert ready.status_code == 503
        assert ready.json()["error"]["code"] == "cluster.unavailable"

        # Redis comes back (empty): the members find each other again and work resumes.
        own_redis.start()
        wait_for_members([a, b], 2, within_s=15)
        assert httpx.get(a.data_url + "/readyz", timeout=5).status_code == 200
        assert first.enter(name)["ok"]
        assert second.enter(name)["ok"]
        assert first.event("session.created")["session_id"]


RELAYED_PER_ROUND = 20


def _round(a: MatchmakerProcess, b: MatchmakerProcess, name: str) -> str:
    """One pair matched across ``a`` and ``b`` in a pool owned by ``b``, relaying both ways.

    ``ok``; ``unavailable`` when the forwarded ``pool.enter`` was refused with
    ``cluster.unavailable``; ``interrupted`` when Redis went away between the forwarded
    ``pool.enter`` and the end of the relay (its ``session.created`` or messages were
    lost). A request left unanswered raises (the client waits 5 s at most).
    """
    left, right = Client(a), Client(b)
    try:
        entered = left.enter(name)
        if not entered["ok"]:
            assert entered["error"]["code"] == "cluster.unavailable", entered
            return "unavailable"
        assert right.enter(name)["ok"]  # b owns the pool: never forwarded
        try:
            session = left.event("session.created", 3)["session_id"]
            assert right.event("session.created")["session_id"] == session
            for n in range(RELAYED_PER_ROUND):
                left.send(session, {"n": n})
                right.send(session, {"n": n})
            got = [right.event("session.message", 3)["data"]["n"] for _ in range(RELAYED_PER_ROUND)]
            back = [left.event("session.message", 3)["data"]["n"] for _ in range(RELAYED_PER_ROUND)]
        except TimeoutError:
            return "interrupted"
        assert got == back == list(range(RELAYED_PER_ROUND))
        return "ok"
    finally:
        left.close()
        right.close()


@pytest.mark.parametrize("own_redis", ["tcp", "unix"], indirect=True)
def test_redis_restarted_under_load(tmp_path: Path, own_redis: RedisServer) -> None:
    """Pairs keep matching across two processes and relaying while Redis is killed and
    restarted: during the outage every forwarded request is refused with
    ``cluster.unavailable`` within seconds (none hangs), and afterwards rounds succeed again.
    Over TCP, and over the unix socket that members on Redis's own machine use."""
    with cluster(tmp_path, 2, redis_url=own_redis.url) as (a, b):
        probe = Client(a)
        project = probe.project
        probe.close()
        names = (pool_owned_by(b, [a, b], project, f"load{i}-") for i in itertools.count())
        outcomes: list[str] = []
        failures: list[BaseException] = []
        stop = threading.Event()

        def load() -> None:
            try:
                while not stop.is_set():
                    begun = time.monotonic()
                    outcomes.append(_round(a, b, next(names)))
                    assert time.monotonic() - begun < 10, "a round hung"
            except BaseException as exc:  # re-raised by the test thread
                failures.append(exc)

        def count(outcome: str, since: int = 0) -> int:
            assert not failures, failures
            return outcomes[since:].count(outcome)

        worker = threading.Thread(target=load, daemon=True)
        worker.start()
        try:
            wait_until(lambda: count("ok") >= 3, within_s=20, what="rounds before the outage")
            # The members' streams are on this server (over its transport), not on another.
            assert own_redis.calls("XADD") >= 3
            own_redis.stop(kill=True)
            down = len(outcomes)
            wait_until(lambda: count("unavailable", down) >= 3, within_s=15, what="refusals")
            own_redis.start()
            up = len(outcomes)
            wait_until(lambda: count("ok", up) >= 3, within_s=30, what="rounds after Redis")
        finally:
            stop.set()
            worker.join(15)
        assert not failures, failures
        assert set(outcomes) <= {"ok", "unavailable", "interrupted"}


# One step of a script: (which of the 12 clients, which of the 3 pools, leave if waiting).
_STEPS = st.lists(
    st.tuples(st.integers(0, 11), st.integers(0, 2), st.booleans()), min_size=1, max_size=40
)


def test_scripted_enters_and_leaves_form_the_groups_one_process_would(tmp_path: Path) -> None:
    """Any script of enters and leaves (hypothesis draws it) by 12 clients spread over 3
    processes forms exactly the whole groups a single FIFO per pool (one process) forms,
    each request answered before the next step. The cluster is started once; every
    example uses pools of its own."""
    with cluster(tmp_path, 3) as processes:
        examples = itertools.count()

        @settings(max_examples=20, deadline=None, database=None)
        @given(_STEPS)
        def script(steps: list[tuple[int, int, bool]]) -> None:
            _run_script(processes, next(examples), steps)

        script()


def _run_script(
    processes: list[MatchmakerProcess], example: int, steps: list[tuple[int, int, bool]]
) -> None:
    clients = [Client(processes[i % 3]) for i in range(12)]
    try:
        sizes = {f"x{example}p{i}": 2 + i % 2 for i in range(3)}
        names = sorted(sizes)
        fifo: dict[str, list[int]] = {name: [] for name in sizes}
        waiting: dict[int, str] = {}
        matched: dict[int, set[int]] = {}
        for i, pool, leave in steps:
            if i in matched:
                continue
            if i in waiting:
                if leave:
                    name = waiting.pop(i)
                    fifo[name].remove(i)
                    assert clients[i].request("pool.leave", {"pool": name})["ok"]
                continue
            name = names[pool]
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
    finally:
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
    """Seeker, host and the pool's owner on three processes; a claim of a host that left
    is refused whole (nobody moves), a claim of a waiting one forms the session."""
    with cluster(tmp_path, 3) as (a, b, c):
        seeker, host, gone = Client(a), Client(b), Client(a)
        lobby = pool_owned_by(c, [a, b, c], seeker.project, "lobby")
        claim = {"pool": lobby, "create": True, "mode": "claim", "groupSize": 2}
        assert seeker.request("pool.enter", {**claim, "listed": False})["ok"]
        assert gone.request("pool.enter", claim)["ok"]
        assert gone.request("pool.leave", {"pool": lobby})["ok"]
        assert host.request("pool.enter", {**claim, "public": {"table": "blitz"}})["ok"]
        listed = seeker.request("pool.list", {"pool": lobby})
        assert [e["client_id"] for e in listed["data"]["entries"]] == [host.client_id]
        conflict = seeker.request("claim.make", {"pool": lobby, "targets": [gone.client_id]})
        assert conflict["error"]["code"] == "claim.conflict", conflict
        assert conflict["error"]["details"] == {"missing": [gone.client_id]}
        made = seeker.request("claim.make", {"pool": lobby, "targets": [host.client_id]})
        assert made["ok"], made
        session = made["data"]["session_id"]
        assert host.event("session.created")["session_id"] == session
        assert seeker.event("session.created")["session_id"] == session

        left, right = Client(a), Client(b)
        duo = pool_owned_by(c, [a, b, c], left.project, "duo")
        mutual = {"pool": duo, "create": True, "mode": "mutual", "groupSize": 2}
        assert left.request("pool.enter", mutual)["ok"]
        assert right.request("pool.enter", mutual)["ok"]
        assert left.request("pick.add", {"pool": duo, "target": right.client_id})["ok"]
        picked = right.request("pick.add", {"pool": duo, "target": left.client_id})
        assert picked["ok"]
        assert picked["data"]["session_id"]
        assert left.event("session.created")["session_id"] == picked["data"]["session_id"]


def test_propose_mode_across_three_processes(tmp_path: Path) -> None:
    """A proposal made on one process, owned by a second, answered from all three: the
    session forms whole once everyone accepted, and a decline forms nothing."""
    with cluster(tmp_path, 3) as (a, b, c):
        proposer, second, third = Client(a), Client(b), Client(c)
        party = pool_owned_by(b, [a, b, c], proposer.project, "party")
        spec = {"pool": party, "create": True, "mode": "propose", "groupSize": 3}
        for client in (proposer, second, third):
            assert client.request("pool.enter", spec)["ok"]
        members = [second.client_id, third.client_id]
        made = proposer.request("proposal.create", {"pool": party, "members": members})
        assert made["ok"], made
        proposal = made["data"]["proposal_id"]
        for invited in (second, third):
            assert invited.event("proposal.received")["proposal_id"] == proposal
        answered = second.request("proposal.respond", {"proposal_id": proposal, "accept": True})
        assert answered["data"]["state"] == "open"
        assert proposer.event("proposal.updated")["pending"] == [third.client_id]
        formed = third.request("proposal.respond", {"proposal_id": proposal, "accept": True})
        assert formed["data"]["state"] == "formed"
        session = formed["data"]["session_id"]
        for client in (proposer, second, third):
            created = client.event("session.created")
            assert created["session_id"] == session
            assert len(created["members"]) == 3

        # A decline from another process closes the proposal for everyone; nobody is matched.
        d, e, f = Client(c), Client(a), Client(b)
        for client in (d, e, f):
            assert client.request("pool.enter", spec)["ok"]
        made = d.request("proposal.create", {"pool": party, "members": [e.client_id, f.client_id]})
        proposal = made["data"]["proposal_id"]
        assert e.event("proposal.received")["proposal_id"] == proposal
        assert f.request("proposal.respond", {"proposal_id": proposal, "accept": False})["ok"]
        for client in (d, e):
            closed = client.event("proposal.closed")
            assert (closed["proposal_id"], closed["reason"]) == (proposal, "declined")
        for client in (d, e, f):
            assert client.request("pool.leave", {"pool": party})["ok"]
            assert not any(m.get("type") == "session.created" for m in client.events)


MANAGEMENT_KEY = "e2e-cluster-management-key-51c0"


@pytest.mark.postgres
def test_delegated_mode_across_three_processes(tmp_path: Path) -> None:
    """A delegate on one process, the pool's owner on a second, players on the first and the
    third (one shared PostgreSQL store): the delegate sees both entries, forms the pair whole,
    and a second form of the same entries is stale and moves nobody."""
    secret, player = "delegate-" + uuid.uuid4().hex, "player-" + uuid.uuid4().hex
    with postgres_schema() as store:
        control = ["--management-key", MANAGEMENT_KEY, "--store", store]
        with cluster(tmp_path, 3, control=control) as (a, b, c):
            project = f"dlg{uuid.uuid4().hex[:10]}"
            ranked = pool_owned_by(b, [a, b, c], project, "ranked")
            body = {
                "id": project,
                "policies": [{"name": ranked, "mode": "delegated", "groupSize": 2}],
                "keys": [
                    {"type": "shared-secret", "secret": secret, "scopes": ["delegate"]},
                    {"type": "shared-secret", "secret": player},
                ],
            }
            auth = {"Authorization": f"Bearer {MANAGEMENT_KEY}"}
            created = httpx.post(f"{a.control_url}/admin/projects", json=body, headers=auth)
            assert created.status_code == 201, created.text

            def known_everywhere() -> bool:
                return all(
                    httpx.get(f"{p.control_url}/admin/projects/{project}", headers=auth).is_success
                    for p in (b, c)
                )

            wait_until(known_everywhere, within_s=10, what="the Project on every process")
            delegate = Client(a, project=project, credential=secret)
            first = Client(a, project=project, credential=player)
            second = Client(c, project=project, credential=player)
            attached = delegate.request("delegate.attach", {"pool": ranked})
            assert attached["ok"], attached
            assert delegate.event("pool.snapshot")["entries"] == []
            entries = []
            for client in (first, second):
                entered = client.request("pool.enter", {"policy": ranked})
                assert entered["ok"], entered
                entries.append(entered["data"]["entry_id"])
                added = delegate.event("pool.delta")["added"]
                assert [e["entry_id"] for e in added] == [entries[-1]]
            formed = delegate.request("delegate.form", {"pool": ranked, "groups": [entries]})
            result = formed["data"]["results"][0]
            assert result["ok"], formed
            for client in (first, second):
                assert client.event("session.created")["session_id"] == result["session_id"]
            again = delegate.request("delegate.form", {"pool": ranked, "groups": [entries]})
            assert again["data"]["results"][0]["error"]["code"] == "delegate.stale"


def test_per_client_limits_hold_across_processes(tmp_path: Path) -> None:
    """``max_pools_per_client`` (3) counts a client's entries at every owner, and its rate
    limit (burst 100) counts its requests wherever they are served: 140 requests spread
    over two other owners are refused past the burst, as on one process."""
    with cluster(tmp_path, 3) as (a, b, c):
        client = Client(a)
        processes = [a, b, c]
        remote = [
            pool_owned_by(p, processes, client.project, f"lim{i}-") for i, p in enumerate([b, c, b])
        ]
        local = pool_owned_by(a, processes, client.project, "lim-local-")
        for name in remote:
            assert client.enter(name)["ok"]
        for name in (local, pool_owned_by(c, processes, client.project, "lim-more-")):
            refused = client.enter(name)
            assert refused["error"]["code"] == "pool.limit", refused
            assert refused["error"]["details"] == {"limit": 3}
        assert client.request("pool.leave", {"pool": remote[0]})["ok"]
        assert client.enter(local)["ok"]

        spread = Client(a)
        pools = [
            pool_owned_by(p, processes, spread.project, f"rate-{p.ports['data']}-") for p in (b, c)
        ]
        for n in range(140):
            frame = {"id": f"r{n}", "type": "pool.list", "data": {"pool": pools[n % 2]}}
            spread.ws.send(json.dumps(frame))
        codes = []
        for _ in range(140):
            reply = spread.message()
            assert reply["type"] == "reply", reply
            codes.append(None if reply["ok"] else reply["error"]["code"])
        assert codes.count("rate.limited") >= 20, codes
