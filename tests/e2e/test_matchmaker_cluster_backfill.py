"""``session.backfill`` under ``--cluster``: real processes over the real Redis.

A session forms on its pool's owner and lives on the process most of its members
are connected to; its members and the entries that fill its seats may be
connected to any process. These tests check
the seats are filled from entries wherever their clients are, under the pool's
rating window, with the errors of one process, that an open backfill ends with its
session (its members leave) and outlives its pool's owner. One test opens
seats in pools that then move to a process that joins, so the seats are filled
at the pool's new owner (the opening mirrored there).
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from matchmaker.cluster.ring import owner, pool_key

from .cluster_client import REDIS_URL, Client, cluster, health, node, pool_owned_by
from .cluster_client import wait_for_members as settled
from .matchmaker_process import MatchmakerProcess

pytestmark = pytest.mark.redis

WINDOW = {"within": 50, "widen": {"everyMs": 100, "by": 50, "max": 150}}


def enter(client: Client, pool: str, **fields: Any) -> dict[str, Any]:
    """``pool.enter`` an ad-hoc auto pool of three (created if need be)."""
    data = {"pool": pool, "create": True, "mode": "auto", "groupSize": 3, **fields}
    reply = client.request("pool.enter", data)
    assert reply["ok"], reply
    return reply


def backfill(client: Client, session_id: str, seats: int) -> dict[str, Any]:
    return client.request("session.backfill", {"session_id": session_id, "seats": seats})


def members(created: dict[str, Any]) -> set[str]:
    return {m["client_id"] for m in created["members"]}


def trio(pool: str, clients: list[Client]) -> str:
    """Match ``clients`` (three) in ``pool``; the session's id."""
    for client in clients:
        enter(client, pool)
    ids = {str(client.event("session.created")["session_id"]) for client in clients}
    (session_id,) = ids
    return session_id


def test_seats_are_filled_by_a_client_of_another_process(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as processes:
        a, b = processes
        x, y, w = Client(a), Client(b), Client(b)
        pool = pool_owned_by(a, processes, x.project, "bf")
        session_id = trio(pool, [x, y, w])
        assert session_id.startswith(f"s{node(a)}-")
        assert w.request("session.leave", {"session_id": session_id})["ok"]
        x.event("session.member_left")
        y.event("session.member_left")
        # y is b's client; the session is a's: the request crosses.
        reply = backfill(y, session_id, 1)
        assert reply["ok"], reply
        assert reply["data"] == {"session_id": session_id, "filled": [], "pending": 1}
        z = Client(b)
        enter(z, pool)
        created = z.event("session.created")
        assert created["session_id"] == session_id
        assert created["pool"] == pool
        assert members(created) == {x.client_id, y.client_id, z.client_id}
        for member in (x, y):
            joined = member.event("session.member_joined")
            assert (joined["session_id"], joined["client_id"]) == (session_id, z.client_id)
        # A member like the others: its messages reach them, theirs reach it.
        z.send(session_id, {"hi": 1})
        assert x.event("session.message")["data"] == {"hi": 1}
        x.send(session_id, {"hello": 2})
        assert z.event("session.message")["data"] == {"hello": 2}
        # The seat is taken: the next one waits, until a seat opens and is asked for, which
        # it takes at once (in the reply).
        late = Client(b)
        enter(late, pool)
        assert y.request("session.leave", {"session_id": session_id})["ok"]
        reply = backfill(z, session_id, 1)
        # Hosted on b (two of its three members were there), its pool a's: the seat is
        # filled from a's entries through the mirror at a, in the reply or just after.
        data = reply["data"]
        assert data["session_id"] == session_id
        assert (data["filled"], data["pending"]) in (([late.client_id], 0), ([], 1))
        created = late.event("session.created")
        assert members(created) == {x.client_id, z.client_id, late.client_id}


def test_the_rating_window_decides_who_takes_a_seat(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as processes:
        a, b = processes
        rated = {"filter": {"rating": WINDOW}, "minGroupSize": 2, "fillTimeoutMs": 200}
        x = Client(a, attributes={"rating": 1000})
        y = Client(b, attributes={"rating": 1040})
        pool = pool_owned_by(a, processes, x.project, "ranked")
        enter(x, pool, **rated)
        enter(y, pool, **rated)
        session_id = x.event("session.created")["session_id"]  # two, after the fill timeout
        assert y.event("session.created")["session_id"] == session_id
        assert backfill(x, session_id, 1)["data"]["pending"] == 1
        far = Client(b, attributes={"rating": 1300})  # 260 from 1040: past the widest (150)
        enter(far, pool, **rated)
        near = Client(b, attributes={"rating": 1100})
        enter(near, pool, **rated)
        created = near.event("session.created")
        assert created["session_id"] == session_id
        assert members(created) == {x.client_id, y.client_id, near.client_id}
        assert x.event("session.member_joined")["client_id"] == near.client_id
        # far still waits (its pool.leave finds its entry), no member was told of it.
        assert far.request("pool.leave", {"pool": pool})["ok"]
        assert not [e for e in far.events if e.get("type") == "session.created"]


def test_an_open_backfill_ends_with_its_session(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as processes:
        a, b = processes
        x, y, w = Client(a), Client(b), Client(b)
        pool = pool_owned_by(a, processes, x.project, "ends")
        session_id = trio(pool, [x, y, w])
        assert backfill(x, session_id, 0)["ok"]  # nothing to cancel: fine
        assert w.request("session.leave", {"session_id": session_id})["ok"]
        assert backfill(y, session_id, 1)["data"]["pending"] == 1
        for member in (x, y):
            assert member.request("session.leave", {"session_id": session_id})["ok"]
        # The session ended: newcomers form a group of their own.
        newcomers = [Client(b), Client(a), Client(b)]
        fresh = trio(pool, newcomers)
        assert fresh != session_id


def test_an_open_backfill_outlives_its_pools_owner(tmp_path: Path) -> None:
    """x on b, y and w on c, their pool a's: the session is hosted on c (two of its
    members are there). With a seat open, a is killed: the session goes on (nobody is
    told anything), the opening follows its pool to the new owner, and a newcomer there
    takes the seat."""
    with cluster(tmp_path, 3) as processes:
        a, b, c = processes
        x, y, w = Client(b), Client(c), Client(c)
        pool = pool_owned_by(a, processes, x.project, "killed")
        session_id = trio(pool, [x, y, w])
        assert w.request("session.leave", {"session_id": session_id})["ok"]
        assert x.event("session.member_left")["reason"] == "left"
        assert backfill(y, session_id, 1)["data"]["pending"] == 1
        a.process.send_signal(signal.SIGKILL)
        a.process.wait(5)
        settled([b, c], 2)
        late = Client(b)
        enter(late, pool)
        created = late.event("session.created", timeout=10)
        assert created["session_id"] == session_id
        assert members(created) == {x.client_id, y.client_id, late.client_id}
        for member in (x, y):
            joined = member.event("session.member_joined")
            assert joined["client_id"] == late.client_id
            assert not [e for e in member.events if e["type"] == "session.member_left"]


def test_errors_are_those_of_one_process(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as processes:
        a, b = processes
        x, y, w = Client(a), Client(b), Client(b)
        pool = pool_owned_by(a, processes, x.project, "errs")
        session_id = trio(pool, [x, y, w])
        stranger = Client(b)
        room = stranger.request("session.join", {"session": "lobby", "create": True})
        room_id = room["data"]["session_id"]
        cases = [
            (y, session_id, 1, "backfill.invalid"),  # full: no seat open
            (y, session_id, -1, "protocol.bad_request"),
            (stranger, session_id, 1, "session.not_member"),
            (y, f"s{node(a)}-999999", 1, "session.not_found"),
            (stranger, room_id, 1, "backfill.unsupported"),
        ]
        for asker, target, seats, code in cases:
            reply = backfill(asker, target, seats)
            assert reply["ok"] is False, (target, seats)
            assert reply["error"]["code"] == code, (target, seats, reply)


def test_seats_follow_their_pool_to_a_process_that_joins(tmp_path: Path) -> None:
    """Sessions formed on a alone; b joins and takes some of their pools: a seat asked
    before the join and one asked after are both filled by b's clients at b."""
    with cluster(tmp_path, 1) as (a,):
        sessions: dict[str, tuple[Client, str]] = {}
        for i in range(12):  # each moves with probability 1/2: none moves 1 time in 4096
            pool = f"grow{i:02}"
            x, y, w = Client(a), Client(a), Client(a)
            session_id = trio(pool, [x, y, w])
            assert w.request("session.leave", {"session_id": session_id})["ok"]
            sessions[pool] = (x, session_id)
        before = {pool for pool in sessions if pool < "grow06"}
        for pool in sorted(before):
            x, session_id = sessions[pool]
            assert backfill(x, session_id, 1)["data"]["pending"] == 1
        name = health(a)["cluster"]["name"]
        args = ["--port", "0", "--server", "hypercorn", "--cluster", REDIS_URL]
        b = MatchmakerProcess([*args, "--cluster-name", name], cwd=tmp_path, expect_control=False)
        try:
            settled([a, b], 2)
            live = [node(a), node(b)]
            project = sessions["grow00"][0].project
            moved = [p for p in sessions if owner(pool_key(project, p), live) == node(b)]
            assert moved, "no pool moved to the new member (try more pools)"
            for pool in moved:
                x, session_id = sessions[pool]
                if pool not in before:
                    assert backfill(x, session_id, 1)["data"]["pending"] == 1
                z = Client(b)
                enter(z, pool)
                created = z.event("session.created")
                assert created["session_id"] == session_id, pool
                assert z.client_id in members(created)
                assert x.event("session.member_joined")["client_id"] == z.client_id
        finally:
            b.stop()
