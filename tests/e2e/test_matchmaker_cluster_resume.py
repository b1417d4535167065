"""Reconnect and resume across a cluster (``--cluster``): real processes, the real Redis.

A dropped client is away for the grace wherever its entries and sessions live, and
resumes on any live process: on the one that issued its token as on one process, on
another through it. Redis is db 13 unless ``MATCHMAKER_TEST_REDIS_URL`` names another;
the outage test starts a redis-server of its own.
"""

from __future__ import annotations

import itertools
import signal
import threading
from pathlib import Path

import pytest

from matchmaker.cluster import ring
from tests.matchmaker.servers import SERVERS

from .cluster_client import Client, cluster, node, pool_owned_by, wait_for_members
from .matchmaker_process import MatchmakerProcess
from .redis_server import RedisServer

pytestmark = pytest.mark.redis

# Messages a peer sends while the client is away, and each way after it resumed.
AWAY = 60
AFTER = 100


def _paired(first: Client, second: Client, pool: str) -> str:
    """Match ``first`` and ``second`` in ``pool``; the session id."""
    assert first.enter(pool)["ok"]
    assert second.enter(pool)["ok"]
    session: str = first.event("session.created")["session_id"]
    assert second.event("session.created")["session_id"] == session
    return session


def _numbered(client: Client, key: str, count: int) -> list[int]:
    """The next ``count`` relayed messages' ``data[key]``, checking that every event the
    client gets meanwhile has the ``seq`` after the one before (the first: after the last
    it read), so nothing was lost or reordered."""
    assert not client.events, "read from the connection, with no event kept aside"
    previous = client.last_seq
    got: list[int] = []
    while len(got) < count:
        frame = client.message()
        if "seq" in frame:
            assert frame["seq"] == previous + 1, (previous, frame)
            previous = frame["seq"]
        if frame.get("type") == "session.message":
            got.append(frame["data"]["data"][key])
    return got


def _status(client: Client, session: str, who: Client, status: str) -> None:
    got = client.event("session.member_status")
    assert got == {"session_id": session, "client_id": who.client_id, "status": status}


def _quiet(client: Client) -> list[str]:
    """Kinds of the events the client got so far, once a request round trip to its own
    process is answered (whatever its own core did before is in front of that answer)."""
    answer = client.request("session.leave", {"session_id": "no-such-session"})
    assert answer["error"]["code"] == "session.not_found", answer
    return [e.get("type", "") for e in client.events]


def _dropped_and_resumed(
    mover: Client, peer: Client, session: str, at: MatchmakerProcess
) -> Client:
    """``mover`` drops; ``peer`` sees it away and sends it ``AWAY`` numbered messages;
    ``mover`` resumes at ``at`` as the same client and gets them replayed in order."""
    mover.drop()
    _status(peer, session, mover, "away")
    for n in range(AWAY):
        peer.send(session, {"n": n})
    back = Client(at, resume=mover)
    assert back.welcome["data"]["resumed"], back.welcome
    assert back.client_id == mover.client_id
    assert _numbered(back, "n", AWAY) == list(range(AWAY))
    return back


def _away_and_back(dropping: Client, peer: Client, session: str, at: MatchmakerProcess) -> Client:
    """``dropping`` drops, ``peer`` sees it away, it resumes at ``at``, ``peer`` sees it
    back."""
    dropping.drop()
    _status(peer, session, dropping, "away")
    back = Client(at, resume=dropping)
    assert back.welcome["data"]["resumed"], back.welcome
    _status(peer, session, dropping, "back")
    return back


@pytest.mark.parametrize("host", ["own", "other"])
def test_a_dropped_client_is_away_wherever_its_session_is_and_resumes_on_its_process(
    tmp_path: Path, host: str
) -> None:
    """The session lives on the client's process, or on the other one (its pool's owner):
    either way the peer sees it away, what the peer sends meanwhile is replayed in order
    with the seq continuing, the peer sees it back, and the relay goes on both ways."""
    with cluster(tmp_path, 2) as (a, b):
        mover, peer = Client(a), Client(b)
        table = pool_owned_by(a if host == "own" else b, [a, b], mover.project, "table")
        session = _paired(mover, peer, table)
        seen = mover.last_seq
        back = _dropped_and_resumed(mover, peer, session, at=a)
        assert back.last_seq == seen + AWAY
        _status(peer, session, mover, "back")
        for n in range(AFTER):
            back.send(session, {"m": n})
        assert [peer.event("session.message")["data"]["m"] for _ in range(AFTER)] == list(
            range(AFTER)
        )


@pytest.mark.parametrize("server", SERVERS)
def test_resume_on_another_process_continues_the_client_there(tmp_path: Path, server: str) -> None:
    """Issued by a, its session on c, resumed on b: the same client (its token still names
    a), the messages sent while away replayed in order, then relay both ways in order, its
    requests served as before (a new match in a pool b owns); dropped again, it resumes on a."""
    with cluster(tmp_path, 3, server=server) as processes:
        a, b, c = processes
        mover, peer = Client(a), Client(c)
        session = _paired(mover, peer, pool_owned_by(c, processes, mover.project, "table"))
        moved = _dropped_and_resumed(mover, peer, session, at=b)
        assert moved.resume_token.startswith(node(a) + ".")
        assert moved.resume_token != mover.resume_token
        _status(peer, session, mover, "back")

        for n in range(AFTER):
            moved.send(session, {"m": n})
            peer.send(session, {"p": n})
        assert [peer.event("session.message")["data"]["m"] for _ in range(AFTER)] == list(
            range(AFTER)
        )
        assert _numbered(moved, "p", AFTER) == list(range(AFTER))

        assert moved.request("session.leave", {"session_id": session})["ok"]
        left = peer.event("session.member_left")
        assert (left["client_id"], left["reason"]) == (mover.client_id, "left")
        newcomer = Client(b)
        duel = _paired(moved, newcomer, pool_owned_by(b, processes, mover.project, "duel"))

        home = _away_and_back(moved, newcomer, duel, at=a)
        newcomer.send(duel, {"n": 1})
        assert home.event("session.message")["data"] == {"n": 1}


@pytest.mark.parametrize("server", SERVERS)
def test_numbered_sends_are_taken_once_across_a_resume_on_another_process(
    tmp_path: Path, server: str
) -> None:
    """Issued by a, its session on c: numbered sends are taken at a (its ack lives there)
    and relayed by c; resumed on b, the hello's reply says a's ack, sends again below it
    are dropped, and the next ones taken: the peer gets each once, in order."""
    with cluster(tmp_path, 3, server=server) as processes:
        a, b, c = processes
        mover, peer = Client(a), Client(c)
        session = _paired(mover, peer, pool_owned_by(c, processes, mover.project, "table"))
        for seq in range(1, 6):
            mover.send(session, {"s": seq}, seq=seq)
        assert [peer.event("session.message")["data"]["s"] for _ in range(5)] == [1, 2, 3, 4, 5]
        mover.drop()
        _status(peer, session, mover, "away")
        moved = Client(b, resume=mover)
        assert moved.welcome["data"]["resumed"], moved.welcome
        assert moved.welcome["ack"] == 5  # a's, through b
        for seq in (4, 5, 6, 7):  # 4 and 5 again (their ack was not seen): dropped
            moved.send(session, {"s": seq}, seq=seq)
        moved.ws.send('{"type":"ping","id":"p"}')
        pong = moved.message()
        while pong.get("type") != "pong":
            pong = moved.message()
        assert pong["ack"] == 7
        assert [peer.event("session.message")["data"]["s"] for _ in range(2)] == [6, 7]
        moved.send(session, {"s": 9}, seq=9)  # a gap: refused, not taken, not relayed
        gap = moved.message()
        while gap.get("type") != "reply":
            gap = moved.message()
        assert gap["error"]["details"] == {"field": "seq", "expected": 8, "seq": 9}
        peer.send(session, {"p": 1})
        assert moved.event("session.message")["data"] == {"p": 1}
        assert "session.message" not in _quiet(peer)  # nothing more came: 4, 5, 9 dropped


def _in_room_and_waiting(
    processes: list[MatchmakerProcess], home: MatchmakerProcess, owner: MatchmakerProcess
) -> tuple[Client, Client, str, str]:
    """A client of ``home`` in a room with a watcher, both hosted by ``owner``, and waiting
    in a pool ``owner`` owns: the watcher sees it away once ``owner`` paused it."""
    waiter, watcher = Client(home), Client(owner)
    members, wanted = [node(p) for p in processes], node(owner)
    room = next(
        name
        for name in (f"room{i}" for i in itertools.count())
        if ring.owner(ring.room_key(waiter.project, name), members) == wanted
    )
    joined = watcher.request("session.join", {"session": room, "create": True})
    assert joined["ok"]
    session = joined["data"]["session_id"]
    assert node(owner) in session  # the room lives on the owner, not the waiter's process
    assert waiter.request("session.join", {"session": room})["ok"]
    assert watcher.event("session.member_joined")["client_id"] == waiter.client_id
    queue = pool_owned_by(owner, processes, waiter.project, "queue")
    assert waiter.enter(queue)["ok"]
    return waiter, watcher, session, queue


def test_an_entry_at_another_owner_waits_paused_and_returns_on_resume(tmp_path: Path) -> None:
    """While its client is away, an entry held by another process is out of matching; on
    resume (here on that other process) it takes its place back and is matched."""
    with cluster(tmp_path, 2) as processes:
        a, b = processes
        waiter, watcher, session, queue = _in_room_and_waiting(processes, a, b)
        waiter.drop()
        _status(watcher, session, waiter, "away")  # b paused the entry before telling this
        newcomer = Client(b)
        assert newcomer.enter(queue)["ok"]
        assert "session.created" not in _quiet(newcomer)
        back = Client(b, resume=waiter)
        assert back.welcome["data"]["resumed"], back.welcome
        created = newcomer.event("session.created")
        assert {m["client_id"] for m in created["members"]} == {
            waiter.client_id,
            newcomer.client_id,
        }
        assert back.event("session.created")["session_id"] == created["session_id"]


def test_the_disconnect_is_final_everywhere_when_the_grace_runs_out(tmp_path: Path) -> None:
    """Past ``resume_grace_ms`` the session peers on another process see ``member_left
    {reason: disconnected}``, its entry there is withdrawn, and its token is expired on
    every process."""
    with cluster(tmp_path, 2, extra=["--resume-grace-ms", "1500"]) as processes:
        a, b = processes
        waiter, watcher, session, queue = _in_room_and_waiting(processes, a, b)
        waiter.drop()
        _status(watcher, session, waiter, "away")
        left = watcher.event("session.member_left", timeout=10)
        assert left == {
            "session_id": session,
            "client_id": waiter.client_id,
            "reason": "disconnected",
        }
        first, second = Client(b), Client(a)
        assert first.enter(queue)["ok"]
        assert "session.created" not in _quiet(first)
        assert second.enter(queue)["ok"]
        members = {m["client_id"] for m in first.event("session.created")["members"]}
        assert members == {first.client_id, second.client_id}
        for process in processes:
            refused = Client(process, resume=waiter)
            assert refused.welcome["error"]["code"] == "resume.expired", refused.welcome
            assert refused.closed() == 4004


def test_a_resume_whose_issuer_was_killed_is_expired(tmp_path: Path) -> None:
    """kill -9 of the issuer: a client resumed through another process loses its connection
    and its peer sees it leave; resuming anywhere is ``resume.expired``."""
    with cluster(tmp_path, 3) as processes:
        a, b, c = processes
        mover, peer = Client(a), Client(c)
        session = _paired(mover, peer, pool_owned_by(c, processes, mover.project, "table"))
        moved = _away_and_back(mover, peer, session, at=b)
        a.process.send_signal(signal.SIGKILL)
        a.process.wait(5)
        left = peer.event("session.member_left", timeout=10)
        assert left == {
            "session_id": session,
            "client_id": mover.client_id,
            "reason": "disconnected",
        }
        assert moved.closed() == 1001
        wait_for_members([b, c], 2)
        for process in (b, c):
            refused = Client(process, resume=moved)
            assert refused.welcome["error"]["code"] == "resume.expired", refused.welcome
            assert refused.closed() == 4004


def test_one_token_resumed_at_three_processes_at_once_resumes_once(tmp_path: Path) -> None:
    """The issuer settles the race: exactly one resume wins, the others are expired."""
    with cluster(tmp_path, 3) as processes:
        a, b, _ = processes
        mover, peer = Client(a), Client(b)
        session = _paired(mover, peer, pool_owned_by(b, processes, mover.project, "table"))
        mover.drop()
        _status(peer, session, mover, "away")
        results: list[Client] = []
        start = threading.Barrier(len(processes))

        def resume(process: MatchmakerProcess) -> None:
            start.wait(5)
            results.append(Client(process, resume=mover))

        threads = [threading.Thread(target=resume, args=(p,)) for p in processes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(15)
        assert len(results) == len(processes)
        won = [r for r in results if r.welcome["ok"]]
        assert len(won) == 1, [r.welcome for r in results]
        assert all(
            r.welcome["error"]["code"] == "resume.expired" for r in results if r is not won[0]
        )
        _status(peer, session, mover, "back")
        peer.send(session, {"n": 1})
        assert won[0].event("session.message")["data"] == {"n": 1}


def test_a_redis_outage_closes_relayed_connections_and_they_resume_after(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    """A frame through a relay could be lost while Redis is away, so the relayed connection
    closes unclean (1001) at once; the client is away at its issuer and resumes once Redis
    is back."""
    grace = ["--resume-grace-ms", "60000"]
    with cluster(tmp_path, 2, redis_url=own_redis.url, extra=grace) as (a, b):
        mover = Client(a)
        mover.drop()
        moved = Client(b, resume=mover)
        assert moved.welcome["data"]["resumed"], moved.welcome
        own_redis.stop(kill=True)
        assert moved.closed() == 1001
        own_redis.start()
        wait_for_members([a, b], 2, within_s=15)
        back = Client(b, resume=moved)
        assert back.welcome["data"]["resumed"], back.welcome
        assert back.client_id == mover.client_id
        assert back.request("session.leave", {"session_id": "none"})["error"]["code"] == (
            "session.not_found"
        )
