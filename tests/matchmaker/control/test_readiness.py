"""/readyz on both ports tells whether the store answers (/healthz stays liveness only), and
the startup lines say where each plane listens and which store is used."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from matchmaker.config import ServerConfig
from matchmaker.server import Bound
from tests.matchmaker.conftest import POSTGRES_URL
from tests.matchmaker.polling import wait_until

from .conftest import KEY, ServerThread

NOT_READY = {"code": "store.unavailable", "message": "the Project store is unreachable"}


def urls(bound: Bound) -> list[str]:
    assert bound.management is not None
    return [f"http://{host}:{port}" for host, port in (bound.data, bound.management)]


def ready_statuses(bound: Bound) -> list[int]:
    return [httpx.get(f"{url}/readyz", timeout=10).status_code for url in urls(bound)]


def assert_not_ready_without_internals(bound: Bound, *secrets: str) -> None:
    for url in urls(bound):
        response = httpx.get(f"{url}/readyz", timeout=10)
        assert response.status_code == 503
        assert response.json() == {"error": NOT_READY}
        for secret in secrets:
            assert secret not in response.text
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200


@pytest.fixture
def running() -> Iterator[list[ServerThread]]:
    servers: list[ServerThread] = []
    yield servers
    for server in servers:
        server.stop()


def start(running: list[ServerThread], store_url: str) -> Bound:
    config = ServerConfig(port=0, management_port=0, management_key=KEY, store_url=store_url)
    server = ServerThread(config)
    running.append(server)
    return server.start()


def test_memory_store_is_always_ready(running: list[ServerThread]) -> None:
    bound = start(running, "memory://")
    assert ready_statuses(bound) == [200, 200]
    assert httpx.get(f"{urls(bound)[1]}/readyz").json() == {"status": "ready"}


def test_a_sqlite_file_moved_away_is_not_ready_until_it_is_back(
    running: list[ServerThread], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "projects.db"
    bound = start(running, f"sqlite:///{path}")
    assert ready_statuses(bound) == [200, 200]
    path.rename(tmp_path / "elsewhere.db")
    # picows's /readyz is the last background check's (at most a second old).
    wait_until(lambda: ready_statuses(bound) == [503, 503], within_s=15, what="503")
    assert_not_ready_without_internals(bound, str(tmp_path))
    assert any("not ready" in r.getMessage() for r in caplog.records)
    (tmp_path / "elsewhere.db").rename(path)
    wait_until(lambda: ready_statuses(bound) == [200, 200], within_s=15, what="200 again")


def admin_sql(*statements: str, args: tuple[object, ...] = ()) -> None:
    """Run statements on the test server's maintenance connection (not the store's)."""
    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(POSTGRES_URL)
        try:
            for statement in statements:
                await conn.execute(statement, *args)
        finally:
            await conn.close()

    asyncio.run(run())


@pytest.fixture
def scratch_database() -> Iterator[tuple[str, str]]:
    """A database of its own (so cutting it off disturbs nobody): ``(name, url)``."""
    name = f"mm_ready_{uuid.uuid4().hex[:10]}"
    try:
        admin_sql(f'CREATE DATABASE "{name}"')
    except OSError as exc:
        pytest.skip(f"PostgreSQL is not reachable at {POSTGRES_URL}: {exc}")
    parts = urlsplit(POSTGRES_URL)
    yield name, urlunsplit(parts._replace(path=f"/{name}"))
    admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _set_connections(name: str, allowed: bool) -> None:
    """Cut the database off (no new connections, current ones terminated) or restore it."""
    admin_sql(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(allowed).lower()}')
    if not allowed:
        admin_sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
            args=(name,),
        )


@pytest.mark.slow
def test_a_postgres_store_cut_off_is_503_and_ready_again_when_back(
    running: list[ServerThread],
    scratch_database: tuple[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    name, url = scratch_database
    bound = start(running, url)
    admin = f"{urls(bound)[1]}/admin/projects"
    auth = {"Authorization": f"Bearer {KEY}"}
    assert ready_statuses(bound) == [200, 200]
    _set_connections(name, allowed=False)
    try:
        wait_until(lambda: ready_statuses(bound) == [503, 503], within_s=15, what="503")
        assert_not_ready_without_internals(bound, name, "asyncpg", "postgresql://")
        write = httpx.post(admin, json={"id": "x"}, headers=auth, timeout=20)
        assert write.status_code == 503
        assert write.json()["error"]["message"] == "the Project store is unavailable; retry later"
        assert name not in write.text
    finally:
        _set_connections(name, allowed=True)
    wait_until(lambda: ready_statuses(bound) == [200, 200], within_s=15, what="200 again")
    assert httpx.post(admin, json={"id": "x"}, headers=auth, timeout=20).status_code == 201
    log = "\n".join(r.getMessage() for r in caplog.records)
    assert "not ready" in log
    assert "ready again" in log


def test_startup_names_each_plane_and_the_store_without_its_password(
    running: list[ServerThread], postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="matchmaker")
    parts = urlsplit(postgres_url)
    with_password = urlunsplit(
        parts._replace(netloc=f"postgres:pw-not-logged@{parts.hostname}:{parts.port}")
    )
    bound = start(running, with_password)
    data, control = urls(bound)
    lines = [r.getMessage() for r in caplog.records if "listening on" in r.getMessage()]
    redacted = f"postgresql://postgres:***@{parts.hostname}:{parts.port}"
    assert lines[0].startswith(f"data plane listening on {data} (WebSocket ws://")
    assert f"control plane on, store {redacted}" in lines[0]
    assert lines[1].startswith(f"control plane listening on {control}/admin, store {redacted}")
    assert "pw-not-logged" not in caplog.text
