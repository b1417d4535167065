"""The restart hand-over, as whole processes: a ``matchmaker`` stopped with SIGTERM closes
its WebSockets with 3001 ``resume`` and leaves its clients in the store; the next process
on the same port and store resumes them within the grace, their session and ``seq`` intact.

SQLite runs without a management key (``--store`` alone keeps the hand-over), PostgreSQL
with one (the Projects' store keeps it too). The clients are raw WebSockets (each step
checked), and the Python client with ``reconnect=``, which resumes by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import signal
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.matchmaker.polling import eventually, wait_until
from tests.matchmaker.servers import SERVERS

from .both_ways import Player, both_ways
from .cluster_client import Client
from .matchmaker_process import MatchmakerProcess, free_port, postgres_schema

KEY = "restart-management-key"
PROJECT = "restart"
GRACE_MS = 20_000
# Messages Bob sends while Alice is away (replayed from the hand-over), and after both resumed.
AWAY = 30
AFTER = 30


@dataclass
class Deployment:
    """Where every process of one test runs: the same port, the same store."""

    tmp_path: Path
    server: str
    store_url: str
    management: bool
    port: int
    started: list[MatchmakerProcess] = field(default_factory=list)

    def start(self, *extra: str) -> MatchmakerProcess:
        args = ["--port", str(self.port), "--server", self.server, "--store", self.store_url]
        if self.management:
            args += ["--management-key", KEY, "--management-port", "0"]
        args += ["--resume-grace-ms", str(GRACE_MS), "--shutdown-grace", "2", *extra]
        process = MatchmakerProcess(args, cwd=self.tmp_path, expect_control=self.management)
        self.started.append(process)
        return process

    def kept(self) -> list[str]:
        """The bodies of the hand-overs the store holds now."""
        if self.store_url.startswith("sqlite"):
            with contextlib.closing(
                sqlite3.connect(self.store_url.removeprefix("sqlite:///"))
            ) as db:
                return [row[0] for row in db.execute("SELECT body FROM handovers")]
        return asyncio.run(_postgres_bodies(self.store_url))

    def at_rest(self) -> bytes:
        """Every byte the store holds (SQLite: the file and its WAL; PostgreSQL: the rows)."""
        if not self.store_url.startswith("sqlite"):
            return "".join(self.kept()).encode()
        path = Path(self.store_url.removeprefix("sqlite:///"))
        wal = path.with_name(path.name + "-wal")
        return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


async def _postgres_bodies(url: str) -> list[str]:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        return [row["body"] for row in await conn.fetch("SELECT body FROM matchmaker_handovers")]
    finally:
        await conn.close()


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
    ]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, bool]]:
    """A store URL and whether the processes run with a management key."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'matchmaker.db'}", False
        return
    with postgres_schema() as url:
        yield url, True


@pytest.fixture(params=SERVERS)
def deployment(
    request: pytest.FixtureRequest, tmp_path: Path, store: tuple[str, bool]
) -> Iterator[Deployment]:
    url, management = store
    deployment = Deployment(tmp_path, request.param, url, management, free_port())
    yield deployment
    for process in deployment.started:
        if process.process.poll() is None:
            process.stop(signal.SIGKILL)


def _in_a_room(process: MatchmakerProcess) -> tuple[Client, Client, str]:
    alice, bob = Client(process, project=PROJECT), Client(process, project=PROJECT)
    joined = alice.request("session.join", {"session": "table", "create": True})
    session: str = joined["data"]["session_id"]
    assert bob.request("session.join", {"session": "table"})["ok"]
    alice.event("session.member_joined")
    assert not alice.events
    return alice, bob, session


def _stop(process: MatchmakerProcess, *clients: Client) -> list[tuple[int, str] | None]:
    """SIGTERM: ``/readyz`` answers 503 while the process drains; how each client was closed."""
    process.process.send_signal(signal.SIGTERM)
    closes = [client.closing() for client in clients]
    ready = wait_until(
        lambda: _readyz(process) == 503, within_s=2, what="/readyz 503 while draining"
    )
    assert ready
    # A socket opened while it drains is told to resume too (its client retries later).
    ws_url = process.data_url.replace("http", "ws", 1) + "/ws"
    with connect(ws_url, open_timeout=5) as late, pytest.raises(ConnectionClosed) as closed:
        late.recv(timeout=5)
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (3001, "resume")
    assert process.stop() == 0
    return closes


def _readyz(process: MatchmakerProcess) -> int | None:
    try:
        return httpx.get(f"{process.data_url}/readyz", timeout=1).status_code
    except httpx.HTTPError:
        return None


def _frames(client: Client, *, until: int) -> list[dict[str, Any]]:
    """The frames ``client`` kept and reads next, through its ``until``th ``session.message``."""
    frames: list[dict[str, Any]] = []
    seen = 0
    while seen < until:
        frame = client.message()
        frames.append(frame)
        seen += frame.get("type") == "session.message"
    return frames


def _send_again(client: Client, session: str, seq: int, data: object) -> Any:
    """A numbered ``session.send`` with an id: the reply's data."""
    frame = {"id": "again", "type": "session.send", "seq": seq}
    client.ws.send(json.dumps({**frame, "data": {"session_id": session, "data": data}}))
    while (reply := client.message()).get("id") != "again":
        pass
    assert reply["ok"], reply
    return reply["data"]


def _in_order_once(frames: list[dict[str, Any]], *, after: int) -> list[Any]:
    """The messages' data; the numbered frames' ``seq`` runs on from ``after`` without a
    gap or a repeat."""
    seqs = [frame["seq"] for frame in frames if "seq" in frame]
    assert seqs == list(range(after + 1, after + 1 + len(seqs))), seqs
    return [frame["data"]["data"] for frame in frames if frame.get("type") == "session.message"]


def test_a_restart_keeps_the_session_and_every_message_arrives_once_in_order(
    deployment: Deployment,
) -> None:
    first = deployment.start()
    alice, bob, session = _in_a_room(first)
    for seq in (1, 2, 3):  # numbered sends (exactly once): the server's ack is handed over
        alice.send(session, {"seq": seq}, seq=seq)
        assert bob.event("session.message")["data"] == {"seq": seq}
    alice.drop()  # away: Bob's messages wait in her replay buffer, then in the store
    assert bob.event("session.member_status")["status"] == "away"
    for n in range(AWAY):
        bob.send(session, {"n": n})
    # A request is answered after the sends before it: every message is in before the stop.
    assert bob.request("session.join", {"session": "table"})["ok"]
    assert _stop(first, bob) == [(3001, "resume")]
    tokens = (alice.resume_token, bob.resume_token)
    at_rest = deployment.at_rest()
    for token in tokens:
        assert token.encode() not in at_rest
        assert hashlib.sha256(token.encode()).hexdigest().encode() in at_rest

    second = deployment.start()
    assert deployment.kept() == [], "a hand-over is taken once"
    alice_back = Client(second, resume=alice, project=PROJECT)
    bob_back = Client(second, resume=bob, project=PROJECT)
    for back, was in ((alice_back, alice), (bob_back, bob)):
        assert back.welcome["ok"], back.welcome
        assert back.welcome["data"]["resumed"] is True
        assert back.client_id == was.client_id
    for n in range(AWAY, AWAY + AFTER):
        bob_back.send(session, {"n": n})
    got = _in_order_once(_frames(alice_back, until=AWAY + AFTER), after=alice.last_seq)
    assert got == [{"n": n} for n in range(AWAY + AFTER)]
    # Alice's side goes through the same session, her numbering where it was: a send
    # again of seq 3 is a duplicate, seq 4 is taken.
    assert alice_back.welcome["ack"] == 3
    assert _send_again(alice_back, session, 3, {"seq": 3}) == {"duplicate": True}
    alice_back.send(session, {"from": "alice"}, seq=4)
    assert bob_back.event("session.message") == {
        "session_id": session,
        "from": alice.client_id,
        "data": {"from": "alice"},
    }
    for client in (alice_back, bob_back):
        client.close()


def test_a_waiting_entry_is_closed_by_the_restart_and_the_client_told_on_resume(
    deployment: Deployment,
) -> None:
    first = deployment.start()
    waiter = Client(first, project=PROJECT)
    entered = waiter.enter("later", group_size=3)
    assert entered["ok"]
    assert _stop(first, waiter) == [(3001, "resume")]
    second = deployment.start()
    back = Client(second, resume=waiter, project=PROJECT)
    assert back.welcome["data"]["resumed"] is True
    assert back.event("pool.closed") == {
        "pool": "later",
        "entry_id": entered["data"]["entry_id"],
        "reason": "restart",
    }
    # The pool is rebuilt by entering again.
    assert back.enter("later", group_size=3)["ok"]
    back.close()


def test_a_restart_after_the_grace_is_resume_expired(deployment: Deployment) -> None:
    first = deployment.start("--resume-grace-ms", "1500")
    client = Client(first, project=PROJECT)
    stopped_ms = time.time() * 1000
    assert _stop(first, client) == [(3001, "resume")]
    wait_until(lambda: time.time() * 1000 > stopped_ms + 1500, within_s=5, what="the grace")
    second = deployment.start()
    refused = Client(second, resume=client, project=PROJECT)
    assert refused.welcome["error"]["code"] == "resume.expired"
    assert refused.closed() == 4004


def test_a_hand_over_is_taken_once(deployment: Deployment) -> None:
    """A process that took the hand-over and was killed (no stop, nothing written) leaves
    nothing: the next one starts as without a hand-over, and serves new clients as ever."""
    first = deployment.start()
    alice, bob, session = _in_a_room(first)
    _stop(first, alice, bob)
    assert len(deployment.kept()) == 1
    taker = deployment.start()
    assert deployment.kept() == []
    taker.stop(signal.SIGKILL)
    third = deployment.start()
    refused = Client(third, resume=alice, project=PROJECT)
    assert refused.welcome["error"]["code"] == "resume.expired"
    fresh = Client(third, project=PROJECT)
    assert fresh.welcome["data"]["resumed"] is False
    created = fresh.request("session.join", {"session": "table", "create": True})
    assert created["ok"]
    assert created["data"]["session_id"] != session
    fresh.close()


def test_without_a_store_a_stop_is_final_as_before(tmp_path: Path) -> None:
    """No ``--store`` and no management key: nothing to keep clients in, so a stop closes
    with 1001 (final) and the next process knows none of them."""
    port = free_port()
    args = ["--port", str(port), "--shutdown-grace", "1"]
    first = MatchmakerProcess(args, cwd=tmp_path, expect_control=False)
    client = Client(first, project=PROJECT)
    first.process.send_signal(signal.SIGTERM)
    assert client.closing() == (1001, "server shutting down")
    assert first.stop() == 0
    second = MatchmakerProcess(args, cwd=tmp_path, expect_control=False)
    try:
        refused = Client(second, resume=client, project=PROJECT)
        assert refused.welcome["error"]["code"] == "resume.expired"
    finally:
        second.stop()


@pytest.mark.parametrize("server", SERVERS)
def test_a_hand_over_the_store_cannot_take_is_logged_and_the_stop_still_clean(
    tmp_path: Path, server: str
) -> None:
    """The SQLite file deleted under the running process: the hand-over is refused by the
    store (a write must reach the file a restart opens), the process logs it and exits 0."""
    deployment = Deployment(tmp_path, server, f"sqlite:///{tmp_path / 'gone.db'}", False, 0)
    process = deployment.start()
    client = Client(process, project=PROJECT)
    (tmp_path / "gone.db").unlink()
    assert _stop(process, client) == [(3001, "resume")]
    assert "the restart hand-over could not be written" in process.log()


async def test_the_python_client_resumes_a_restart_by_itself(deployment: Deployment) -> None:
    """``matchmaker.client.Client(reconnect=...)`` treats 3001 as a drop to resume: both
    clients are back to ``open`` on the next process with their ids and session, Alice
    gets Bob's messages once and in order, and what Bob sent while away (numbered, held
    until acknowledged) is taken once."""
    from matchmaker.client import Client as PyClient
    from matchmaker.client import Reconnect

    first = await asyncio.to_thread(deployment.start)
    url = first.data_url.replace("http", "ws", 1) + "/ws"
    fast = Reconnect(initial_delay_ms=50, max_delay_ms=300)
    alice = await PyClient.connect(url, project=PROJECT, reconnect=fast)
    bob = await PyClient.connect(url, project=PROJECT, reconnect=fast)
    try:
        session = (await alice.join("table", create=True))["session_id"]
        await bob.join("table")
        ids = (alice.client_id, bob.client_id)
        for n in range(AWAY):
            await bob.send(session, {"n": n})
        got = [(await alice.next_event("session.message")).data["data"]["n"] for _ in range(AWAY)]
        assert got == list(range(AWAY))
        await asyncio.to_thread(first.stop)
        assert (alice.state, bob.state) == ("reconnecting", "reconnecting")
        for n in range(AWAY, AWAY + AFTER):  # held while away, sent once after the resume
            await bob.send(session, {"n": n})
        await asyncio.to_thread(deployment.start)
        for n in range(AWAY, AWAY + AFTER):
            event = await alice.next_event("session.message", wait_s=20)
            assert event.data == {"session_id": session, "from": bob.client_id, "data": {"n": n}}
        assert (alice.state, bob.state) == ("open", "open")
        assert (alice.client_id, bob.client_id) == ids
        assert alice.hello_reply["resumed"] is True
        # Nothing came twice: the next message is the one Bob sends last.
        await bob.send(session, {"n": "end"})
        event = await alice.next_event("session.message")
        assert event.data["data"] == {"n": "end"}
    finally:
        await alice.close()
        await bob.close()


async def test_both_python_clients_sending_every_5_ms_lose_nothing_across_a_restart(
    deployment: Deployment,
) -> None:
    """Both players send every 5 ms (numbered, held until acknowledged) while the process
    stops and the next one starts on the same port and store: both are back to ``open``
    with their ids, and every message arrives exactly once and in order both ways."""
    from matchmaker.client import Client as PyClient
    from matchmaker.client import Reconnect

    first = await asyncio.to_thread(deployment.start)
    url = first.data_url.replace("http", "ws", 1) + "/ws"
    fast = Reconnect(initial_delay_ms=50, max_delay_ms=300)
    alice = await PyClient.connect(url, project=PROJECT, reconnect=fast)
    bob = await PyClient.connect(url, project=PROJECT, reconnect=fast)
    try:
        session = (await alice.join("table", create=True))["session_id"]
        await bob.join("table")
        ids = (alice.client_id, bob.client_id)
        players = (Player(alice), Player(bob))

        async def restart() -> None:
            assert await asyncio.to_thread(first.stop) == 0
            await asyncio.to_thread(deployment.start)
            await eventually(lambda: all(me.back(1) for me in players), within_s=20)

        await both_ways(players, session, restart)
        for me, other in (players, players[::-1]):
            assert other.got == list(range(me.sent)), "once each, in order"
            assert me.connection == ["connection.away", "connection.back"]
            assert me.client.hello_reply["resumed"] is True
        assert (alice.client_id, bob.client_id) == ids
    finally:
        await alice.close()
        await bob.close()
