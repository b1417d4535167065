"""The ``matchmaker`` executable: both ports, the key, the store, restarts and signals."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .matchmaker_process import MatchmakerProcess, free_port, postgres_schema, run_to_completion

KEY = "e2e-secret-management-key-7f3a"
AUTH = {"Authorization": f"Bearer {KEY}"}
POLICY = {"name": "duel", "mode": "auto", "groupSize": 2, "default": True}


@pytest.fixture
def started(tmp_path: Path) -> Iterator[list[MatchmakerProcess]]:
    """Processes a test starts; any still running at the end are killed."""
    processes: list[MatchmakerProcess] = []
    yield processes
    for process in processes:
        process.stop(signal.SIGKILL)  # also closes its log file


def start(
    started: list[MatchmakerProcess],
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    expect_control: bool = True,
) -> MatchmakerProcess:
    ports = ["--port", "0", "--management-port", "0"]
    process = MatchmakerProcess([*ports, *args], cwd=cwd, env=env, expect_control=expect_control)
    started.append(process)
    return process


def test_serves_both_planes_and_stops_promptly_on_sigterm(
    started: list[MatchmakerProcess], tmp_path: Path
) -> None:
    mm = start(started, tmp_path, "--management-key", KEY, "--store", "memory://")
    created = httpx.post(
        f"{mm.control_url}/admin/projects",
        json={"id": "game", "policies": [POLICY]},
        headers=AUTH,
    )
    assert created.status_code == 201
    assert httpx.get(f"{mm.control_url}/admin/projects/game", headers=AUTH).json()["policies"] == [
        POLICY
    ]
    assert httpx.get(f"{mm.control_url}/admin/projects").status_code == 401
    for url in (mm.data_url, mm.control_url):
        assert httpx.get(f"{url}/healthz").status_code == 200
    # /admin is never served on the data port, key or not.
    on_data_port = httpx.get(f"{mm.data_url}/admin/projects", headers=AUTH)
    assert on_data_port.status_code == 404
    assert on_data_port.json()["error"]["code"] == "route.not_found"
    began = time.monotonic()
    assert mm.stop(signal.SIGTERM) == 0
    assert time.monotonic() - began < 5
    log = mm.log()
    assert "memory://" in log
    assert f":{mm.ports['control']}" in log
    assert KEY not in log


def test_open_keep_alive_connections_do_not_delay_shutdown(
    started: list[MatchmakerProcess], tmp_path: Path
) -> None:
    mm = start(started, tmp_path, "--management-key", KEY, "--store", "memory://")
    with httpx.Client(headers=AUTH) as client:
        assert client.get(f"{mm.control_url}/admin/projects").status_code == 200
        assert client.get(f"{mm.data_url}/healthz").status_code == 200
        began = time.monotonic()
        assert mm.stop(signal.SIGTERM) == 0
        assert time.monotonic() - began < 3


def test_sigint_also_stops_cleanly(started: list[MatchmakerProcess], tmp_path: Path) -> None:
    mm = start(started, tmp_path, "--mgmt-key", KEY, "--store", "memory://")
    assert mm.stop(signal.SIGINT) == 0
    assert "Traceback" not in mm.log()


def test_restart_with_the_same_sqlite_file_keeps_projects(
    started: list[MatchmakerProcess], tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'state' / 'mm.db'}"
    (tmp_path / "state").mkdir()
    first = start(started, tmp_path, "--management-key", KEY, "--store", store)
    admin = f"{first.control_url}/admin/projects"
    for project_id in ("kept", "patched", "deleted"):
        assert httpx.post(admin, json={"id": project_id}, headers=AUTH).status_code == 201
    assert httpx.patch(f"{admin}/patched", json={"lockdown": True}, headers=AUTH).status_code == 200
    assert httpx.delete(f"{admin}/deleted", headers=AUTH).status_code == 204
    assert first.stop() == 0

    second = start(started, tmp_path, "--management-key", KEY, "--store", store)
    admin = f"{second.control_url}/admin/projects"
    listed = httpx.get(admin, headers=AUTH).json()
    assert [p["id"] for p in listed["projects"]] == ["kept", "patched"]
    assert httpx.get(f"{admin}/patched", headers=AUTH).json()["lockdown"] is True
    assert httpx.get(f"{admin}/deleted", headers=AUTH).status_code == 404
    assert "2 Projects" in second.log()
    assert second.stop() == 0


def test_default_store_is_sqlite_in_the_working_directory(
    started: list[MatchmakerProcess], tmp_path: Path
) -> None:
    mm = start(started, tmp_path, "--management-key", KEY)
    httpx.post(f"{mm.control_url}/admin/projects", json={"id": "p"}, headers=AUTH)
    assert mm.stop() == 0
    assert (tmp_path / "matchmaker.db").is_file()
    assert "sqlite:///matchmaker.db" in mm.log()


def test_without_a_key_there_is_no_control_plane(
    started: list[MatchmakerProcess], tmp_path: Path
) -> None:
    management_port = free_port()
    kept = ["--store", "sqlite:///handover.db"]
    port = ["--management-port", str(management_port)]
    mm = start(started, tmp_path, *port, *kept, expect_control=False)
    assert httpx.get(f"{mm.data_url}/healthz").status_code == 200
    on_data_port = httpx.get(f"{mm.data_url}/admin/projects")
    assert on_data_port.status_code == 404
    assert on_data_port.json()["error"]["code"] == "route.not_found"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{management_port}/healthz")
    assert "control plane off (no management key" in mm.log()
    # The store keeps only the restart hand-over: no Project, no default store file.
    assert "store sqlite:///handover.db (the restart hand-over)" in mm.log()
    assert mm.stop() == 0
    assert not (tmp_path / "matchmaker.db").exists()
    assert (tmp_path / "handover.db").exists()


def test_key_and_store_come_from_the_environment(
    started: list[MatchmakerProcess], tmp_path: Path
) -> None:
    env = {"REALTIME_MGMT_KEY": KEY, "MATCHMAKER_STORE": "memory://"}
    env["MATCHMAKER_STORE_URL"] = "sqlite:///typo.db"  # the old name: warned about, ignored
    mm = start(started, tmp_path, env=env)
    assert httpx.get(f"{mm.control_url}/admin/projects", headers=AUTH).status_code == 200
    assert (
        httpx.get(
            f"{mm.control_url}/admin/projects", headers={"Authorization": "Bearer x"}
        ).status_code
        == 401
    )
    assert mm.stop() == 0
    assert KEY not in mm.log()
    # The documented variable chooses the store: nothing falls back to the SQLite default.
    assert "control plane on, store memory://" in mm.log()
    assert not (tmp_path / "matchmaker.db").exists()
    assert not (tmp_path / "typo.db").exists()
    # stderr is a file, not a terminal: the default --log-format (auto) writes JSON lines.
    assert (
        '"level":"warning","logger":"matchmaker","message":"unknown environment variable '
        'MATCHMAKER_STORE_URL is ignored (did you mean MATCHMAKER_STORE?)"'
    ) in mm.log()


def test_matchmaker_env_vars_set_ports_and_key(
    tmp_path: Path, started: list[MatchmakerProcess]
) -> None:
    port = free_port()
    env = {
        "MATCHMAKER_MANAGEMENT_KEY": KEY,
        "MATCHMAKER_STORE": "memory://",
        "MATCHMAKER_MANAGEMENT_PORT": str(port),
    }
    mm = MatchmakerProcess(["--port", "0"], cwd=tmp_path, env=env)
    started.append(mm)
    assert mm.ports["control"] == port
    assert httpx.get(f"{mm.control_url}/admin/projects", headers=AUTH).status_code == 200
    assert mm.stop() == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--management-key", KEY, "--store", "redis://x"], "store.bad_url"),
        (
            ["--management-key", KEY, "--store", "sqlite:////nonexistent/dir/x.db"],
            "store.unavailable",
        ),
        (["--management-key", ""], "must be a non-empty string"),
        (["--port", "70000"], "70000"),
        (["--max-frame-bytes", "0"], "0"),
    ],
)
def test_bad_settings_fail_with_a_one_line_error(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = run_to_completion(["--port", "0", "--management-port", "0", *args], tmp_path)
    assert done.returncode in (1, 2)
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_port_in_use_is_a_coded_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = run_to_completion(["--port", str(taken.getsockname()[1])], tmp_path)
    assert done.returncode == 1
    assert "server.bind_failed" in done.stderr


@pytest.mark.postgres
def test_restart_with_postgresql_keeps_projects(
    started: list[MatchmakerProcess], tmp_path: Path
) -> None:
    with postgres_schema() as url:
        restart_with_postgresql(started, tmp_path, url)


def restart_with_postgresql(
    started: list[MatchmakerProcess], tmp_path: Path, postgres_store_url: str
) -> None:
    # Trust authentication ignores the password; it is there to check it is never logged.
    with_password = postgres_store_url.replace("postgres@", "postgres:hunter2@")
    first = start(started, tmp_path, "--management-key", KEY, "--store", with_password)
    admin = f"{first.control_url}/admin/projects"
    body = {"id": "pg", "policies": [POLICY], "keys": [{"type": "shared-secret", "secret": "k"}]}
    assert httpx.post(admin, json=body, headers=AUTH).status_code == 201
    assert httpx.post(admin, json={"id": "gone"}, headers=AUTH).status_code == 201
    assert httpx.delete(f"{admin}/gone", headers=AUTH).status_code == 204
    assert first.stop() == 0
    assert "postgresql://postgres:***@127.0.0.1:5432/test" in first.log()
    assert "hunter2" not in first.log()

    second = start(started, tmp_path, "--management-key", KEY, "--store", postgres_store_url)
    admin = f"{second.control_url}/admin/projects"
    assert [p["id"] for p in httpx.get(admin, headers=AUTH).json()["projects"]] == ["pg"]
    assert httpx.get(f"{admin}/pg", headers=AUTH).json()["policies"] == [POLICY]
    assert second.stop() == 0
