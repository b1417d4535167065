"""A blocking WebSocket client and cluster helpers for the multi-process tests."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import time
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from matchmaker.cluster.ring import owner, pool_key
from tests.matchmaker.polling import wait_until

from .matchmaker_process import MatchmakerProcess

# Each engineer running these tests in parallel picks a Redis db of their own.
REDIS_URL = os.environ.get("MATCHMAKER_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")


class Client:
    """One client of one process: requests answered by id, events kept in arrival order."""

    def __init__(
        self, process: MatchmakerProcess, resume: Client | None = None, **hello: Any
    ) -> None:
        """Connect to ``process`` and say ``hello`` (its fields: ``project``, ``credential``);
        with ``resume``, take back that dropped client."""
        # Entered as a context manager (websockets 17 warns otherwise), left in close().
        self._connection = contextlib.ExitStack()
        self.ws: ClientConnection = self._connection.enter_context(
            connect(process.data_url.replace("http", "ws", 1) + "/ws", open_timeout=5)
        )
        self._ids = itertools.count(1)
        self.events: deque[dict[str, Any]] = deque()
        self.last_seq: int = 0 if resume is None else resume.last_seq
        hello["v"] = 1
        if resume is not None:
            hello["resume"] = {"token": resume.resume_token, "last_seq": resume.last_seq}
        self.welcome = self.request("hello", hello)
        if not self.welcome["ok"]:
            assert resume is not None, self.welcome
            return  # a refused resume: the test reads self.welcome
        data = self.welcome["data"]
        self.client_id: str = data["client_id"]
        self.project: str = data["project"]
        self.resume_token: str = data["resume_token"]

    def request(self, kind: str, data: dict[str, Any], timeout: float = 5) -> dict[str, Any]:
        request_id = str(next(self._ids))
        self.ws.send(json.dumps({"id": request_id, "type": kind, "data": data}))
        deadline = time.monotonic() + timeout
        while True:
            message = self._recv(deadline)
            if message.get("type") == "reply" and message.get("id") == request_id:
                return message
            self.events.append(message)

    def send(self, session_id: str, data: object, seq: int | None = None) -> None:
        """``session.send`` without an id; ``seq``: numbered (exactly once)."""
        frame: dict[str, Any] = {
            "type": "session.send",
            "data": {"session_id": session_id, "data": data},
        }
        if seq is not None:
            frame["seq"] = seq
        self.ws.send(json.dumps(frame))

    def event(self, kind: str, timeout: float = 5) -> dict[str, Any]:
        """The next event of ``kind`` (earlier events of other kinds are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.events.popleft() if self.events else self._recv(deadline)
            if message.get("type") == kind:
                data: dict[str, Any] = message["data"]
                return data

    def message(self, timeout: float = 5) -> dict[str, Any]:
        """The next message of any kind, whole (a reply with its ``ok`` and ``error``)."""
        if self.events:
            return self.events.popleft()
        return self._recv(time.monotonic() + timeout)

    def _recv(self, deadline: float) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(
            self.ws.recv(timeout=max(0.01, deadline - time.monotonic()))
        )
        self.last_seq = message.get("seq", self.last_seq)
        return message

    def closed(self, timeout: float = 10) -> int | None:
        """Wait for the server to close the connection; its close code (events before the
        close are kept)."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                self.events.append(self._recv(deadline))
        except ConnectionClosed as closed:
            return None if closed.rcvd is None else closed.rcvd.code

    def drop(self) -> None:
        """Lose the connection without a close frame (the server may keep the client away)."""
        self.ws.socket.shutdown(socket.SHUT_RDWR)
        self.ws.socket.close()

    def enter(self, pool: str, group_size: int = 2) -> dict[str, Any]:
        return self.request(
            "pool.enter",
            {"pool": pool, "create": True, "mode": "auto", "groupSize": group_size},
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._connection.close()


def health(process: MatchmakerProcess) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(process.data_url + "/healthz", timeout=2).json()
    return body


def wait_for_members(processes: list[MatchmakerProcess], count: int, within_s: float = 10) -> None:
    """Every process sees ``count`` live members and a reachable Redis."""

    def settled() -> bool:
        return all(
            (c := health(p)["cluster"])["members"] == count and c["available"] for p in processes
        )

    wait_until(settled, within_s=within_s, what=f"{count} cluster members")


def node(process: MatchmakerProcess) -> str:
    name: str = health(process)["cluster"]["node"]
    return name


def pool_owned_by(
    target: MatchmakerProcess, processes: list[MatchmakerProcess], project: str, prefix: str
) -> str:
    """A pool name whose owner (rendezvous hashing over the live members) is ``target``."""
    members = [node(p) for p in processes]
    wanted = node(target)
    for i in itertools.count():
        name = f"{prefix}{i}"
        if owner(pool_key(project, name), members) == wanted:
            return name
    raise AssertionError("unreachable")


@contextlib.contextmanager
def cluster(
    tmp_path: Path,
    count: int,
    redis_url: str = REDIS_URL,
    control: Sequence[str] = (),
    extra: Sequence[str] = (),
    *,
    server: str = "hypercorn",
) -> Iterator[list[MatchmakerProcess]]:
    """``count`` processes in one fresh cluster (a unique name), all seeing each other;
    ``control``: the arguments of a control plane (a key and a shared store) for each;
    ``extra``: more arguments for each (settings); ``server``: their data plane's."""
    name = f"mm-test-{uuid.uuid4().hex[:10]}"
    args = ["--port", "0", "--server", server, "--cluster", redis_url, "--cluster-name", name]
    args += extra
    if control:
        args += ["--management-port", "0", *control]
    processes: list[MatchmakerProcess] = []
    try:
        for _ in range(count):
            processes.append(MatchmakerProcess(args, cwd=tmp_path, expect_control=bool(control)))
        wait_for_members(processes, count)
        yield processes
    finally:
        for process in processes:
            if process.process.poll() is None:
                process.stop()
        _forget(redis_url, name)


def _forget(redis_url: str, name: str) -> None:
    """Delete what the test's cluster left in Redis (only its own keys, in its own db)."""
    import redis

    client = redis.Redis.from_url(redis_url, socket_timeout=2)
    try:
        keys = list(client.scan_iter(match=f"{name}:*"))
        if keys:
            client.delete(*keys)
    except redis.RedisError:
        pass  # the outage test's own server may be gone already
    finally:
        client.close()
