"""Both planes in one process: what /admin declares is what a WebSocket client meets."""

from __future__ import annotations

import contextlib
import json
import resource
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from matchmaker.data.runtime import YOUNG_THRESHOLD
from tests.matchmaker.polling import wait_until
from tests.matchmaker.servers import SERVERS

from .matchmaker_process import MatchmakerProcess, postgres_schema

KEY = "planes-management-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
CHESS = {
    "id": "chess",
    "lockdown": True,
    "keys": [{"type": "shared-secret", "secret": "chess-secret"}],
    "policies": [{"name": "blitz", "mode": "auto", "groupSize": 2, "default": True}],
}


@pytest.fixture(params=SERVERS)
def mm(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[MatchmakerProcess]:
    """One process with both planes; the data plane on each server in turn (``--server``)."""
    args = ["--port", "0", "--management-port", "0", "--management-key", KEY]
    store = ["--store", f"sqlite:///{tmp_path / 'mm.db'}"]
    process = MatchmakerProcess([*args, *store, "--server", request.param], cwd=tmp_path)
    yield process
    if process.process.poll() is None:
        process.stop()


def websocket(mm: MatchmakerProcess) -> ClientConnection:
    return connect(mm.data_url.replace("http", "ws", 1) + "/ws", open_timeout=5)


def hello(ws: ClientConnection, **data: Any) -> dict[str, Any]:
    ws.send(json.dumps({"id": "h", "type": "hello", "data": {"v": 1, **data}}))
    while True:
        message: dict[str, Any] = json.loads(ws.recv(timeout=5))
        if message.get("type") == "reply" and message.get("id") == "h":
            return message


def read_until_closed(ws: ClientConnection) -> None:
    while True:
        ws.recv(timeout=5)


def test_a_declared_project_is_what_the_data_plane_resolves(mm: MatchmakerProcess) -> None:
    admin = f"{mm.control_url}/admin/projects"
    assert httpx.post(admin, json=CHESS, headers=AUTH).status_code == 201
    with websocket(mm) as ws:
        reply = hello(ws, credential="chess-secret")
    assert reply["ok"] is True, reply
    assert reply["data"]["project"] == "chess"
    assert reply["data"]["lockdown"] is True
    assert [p["name"] for p in reply["data"]["policies"]] == ["blitz"]

    assert httpx.delete(f"{admin}/chess", headers=AUTH).status_code == 204
    with websocket(mm) as ws:
        refused = hello(ws, credential="chess-secret")
    assert refused["ok"] is False
    assert refused["error"]["code"] == "auth.invalid_credential"


def test_the_log_names_the_server_of_the_data_plane(mm: MatchmakerProcess) -> None:
    args = mm.process.args
    assert isinstance(args, list)
    server = str(args[-1])
    assert f"data plane listening on {mm.data_url} (WebSocket " in mm.log()
    assert f"/ws, server {server})" in mm.log()


def test_matchmaker_server_in_the_environment_chooses_the_server(tmp_path: Path) -> None:
    process = MatchmakerProcess(
        ["--port", "0"], cwd=tmp_path, env={"MATCHMAKER_SERVER": "hypercorn"}, expect_control=False
    )
    try:
        assert "/ws, server hypercorn)" in process.log()
    finally:
        assert process.stop() == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_closes_websockets_with_3001_and_exits(
    mm: MatchmakerProcess, signum: signal.Signals
) -> None:
    """Silent clients too: the close must not wait for a frame from them. The store keeps
    the clients for the next process (the restart hand-over), so the close says resume."""
    with websocket(mm) as ws, websocket(mm) as silent:
        assert hello(ws)["ok"] is True
        assert hello(silent)["ok"] is True
        began = time.monotonic()
        mm.process.send_signal(signum)
        with pytest.raises(ConnectionClosed) as closed_silent:
            read_until_closed(silent)
        assert closed_silent.value.rcvd is not None
        assert closed_silent.value.rcvd.code == 3001
        with pytest.raises(ConnectionClosed) as closed:
            read_until_closed(ws)
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (3001, "resume")
        assert time.monotonic() - began < 5
    assert mm.stop() == 0


@pytest.mark.parametrize("server", SERVERS)
def test_readyz_answers_503_while_the_process_stops(tmp_path: Path, server: str) -> None:
    """Right after SIGTERM /readyz refused connections (hypercorn stopped accepting at
    once, granian as soon as its sockets were closed): a load balancer probing it must
    read ``server.shutting_down`` for the grace period, then the process exits 0."""
    grace = 3.0
    mm = MatchmakerProcess(
        ["--port", "0", "--server", server, "--shutdown-grace", str(grace)],
        cwd=tmp_path,
        expect_control=False,
    )
    with httpx.Client(base_url=mm.data_url, timeout=5) as http:
        assert http.get("/readyz").status_code == 200
        mm.process.send_signal(signal.SIGTERM)
        began = time.monotonic()

        def stopping() -> httpx.Response | None:
            response = http.get("/readyz")
            return response if response.status_code == 503 else None

        answer = wait_until(stopping, within_s=grace, what="/readyz 503")
        assert answer.json()["error"]["code"] == "server.shutting_down"
        # Probed (as a load balancer would, a few times a second) until the grace is
        # nearly over: every probe is answered, none refused.
        answers = []
        while time.monotonic() - began < grace * 0.8:
            answers.append(http.get("/readyz").status_code)
            time.sleep(0.2)  # the probe interval, not a wait for a state
    assert set(answers) == {503}
    assert mm.stop(timeout=15) == 0


@pytest.mark.parametrize("server", SERVERS)
def test_a_second_sigint_ends_the_shutdown_grace_and_a_second_sigterm_does_not(
    tmp_path: Path, server: str
) -> None:
    """A developer's second Ctrl-C stops the process at once, not after a long grace; a
    supervisor repeating SIGTERM leaves the grace whole (a load balancer still probes)."""
    mm = MatchmakerProcess(
        ["--port", "0", "--server", server, "--shutdown-grace", "120"],
        cwd=tmp_path,
        expect_control=False,
    )
    with httpx.Client(base_url=mm.data_url, timeout=5) as http:

        def stopping() -> bool:
            return http.get("/readyz").status_code == 503

        mm.process.send_signal(signal.SIGTERM)
        wait_until(stopping, within_s=5, what="/readyz 503")
        mm.process.send_signal(signal.SIGTERM)
        # Probed as a load balancer would, a few times a second for a second: still there.
        answers = []
        for _ in range(5):
            answers.append(http.get("/readyz").status_code)
            time.sleep(0.2)  # the probe interval, not a wait for a state
        assert answers == [503] * 5
        assert mm.process.poll() is None
        began = time.monotonic()
        mm.process.send_signal(signal.SIGINT)
        assert mm.process.wait(15) == 0
    assert time.monotonic() - began < 15
    assert "SIGINT received during the shutdown grace, stopping at once" in mm.log()
    mm.stop()


def test_repeated_signals_during_shutdown_still_exit_cleanly(mm: MatchmakerProcess) -> None:
    """A supervisor that repeats SIGTERM until the process is gone gets a clean exit (0)."""
    with websocket(mm) as ws:
        assert hello(ws)["ok"] is True
        deadline = time.monotonic() + 10
        while mm.process.poll() is None and time.monotonic() < deadline:
            mm.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                mm.process.wait(0.005)
    assert mm.stop() == 0


@pytest.mark.postgres
def test_a_project_declared_on_one_node_is_resolved_on_another(tmp_path: Path) -> None:
    """Two processes on one PostgreSQL database: B's directory follows A's writes."""
    args = ["--port", "0", "--management-port", "0", "--management-key", KEY]
    with postgres_schema() as url, contextlib.ExitStack() as stack:
        nodes = []
        for _ in range(2):
            nodes.append(MatchmakerProcess([*args, "--store", url], cwd=tmp_path))
            stack.callback(nodes[-1].stop)
        a, b = nodes
        admin = f"{a.control_url}/admin/projects"
        assert httpx.post(admin, json=CHESS, headers=AUTH).status_code == 201

        def accepted_by_b() -> dict[str, Any] | None:
            with websocket(b) as ws:
                reply = hello(ws, credential="chess-secret")
            return reply if reply["ok"] else None

        # B learns of the write asynchronously (LISTEN/NOTIFY).
        reply = wait_until(accepted_by_b, what="B accepting the new Project's secret")
        assert reply["ok"] is True, reply
        assert reply["data"]["project"] == "chess"


def test_frames_over_the_limit_are_refused_and_over_the_hard_cap_closed_with_1009(
    mm: MatchmakerProcess,
) -> None:
    """The hard cap (4 × max_frame_bytes) holds under both servers.

    hypercorn and picows close before buffering such a frame (docs/operations.md).
    """
    max_frame = 64 * 1024
    with websocket(mm) as ws:
        assert hello(ws)["ok"] is True
        ws.send(json.dumps({"id": "big", "type": "ping", "data": "x" * max_frame}))
        reply = json.loads(ws.recv(timeout=5))
        assert reply["error"]["code"] == "protocol.too_large", reply
        ws.send("x" * (4 * max_frame + 1))
        with pytest.raises(ConnectionClosed) as closed:
            read_until_closed(ws)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1009


#: Imported by the child before ``matchmaker`` starts (``PYTHONPATH``): it starts the
#: process under a low open-file limit and, on SIGUSR1, writes the gc and file-limit
#: settings then in force, so the test reads the launcher's effect, not its log.
PROBE = """
import gc, json, os, resource, signal

resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def _report(signum, frame):
    path = os.environ["MATCHMAKER_TEST_PROBE"]
    state = {
        "threshold": gc.get_threshold(),
        "frozen": gc.get_freeze_count(),
        "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
    }
    with open(path + ".tmp", "w") as out:
        json.dump(state, out)
    os.replace(path + ".tmp", path)


signal.signal(signal.SIGUSR1, _report)
"""


def open_file_limits(pid: int) -> tuple[int, int]:
    """The soft and hard RLIMIT_NOFILE of process ``pid``, as the kernel reports them."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError(f"no open-file limit in /proc/{pid}/limits")


def test_the_launcher_tunes_the_process_for_many_connections(tmp_path: Path) -> None:
    """In the running child: the soft file limit is raised to the hard one, and the young
    generation threshold and the freeze of startup objects are in force."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert hard > 256, "the hard open-file limit leaves nothing to raise"
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "sitecustomize.py").write_text(PROBE)
    report = tmp_path / "state.json"
    env = {"PYTHONPATH": str(tmp_path / "probe"), "MATCHMAKER_TEST_PROBE": str(report)}
    args = ["--port", "0", "--management-port", "0", "--management-key", KEY]
    mm = MatchmakerProcess([*args, "--store", "memory://"], cwd=tmp_path, env=env)
    try:
        assert open_file_limits(mm.process.pid) == (hard, hard)
        mm.process.send_signal(signal.SIGUSR1)
        wait_until(report.exists, what="the child's report of its runtime settings")
        state = json.loads(report.read_text())
    finally:
        mm.stop()
    assert state["nofile"] == [hard, hard]
    assert state["threshold"][0] == YOUNG_THRESHOLD
    assert state["frozen"] > 0
