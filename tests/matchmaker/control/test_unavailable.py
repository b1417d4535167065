"""A store that cannot write answers 503 ``store.unavailable`` and changes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import pytest

from matchmaker.config import ServerConfig
from matchmaker.directory import ProjectDirectory

from .conftest import KEY


@pytest.fixture
def config(tmp_path: Path) -> ServerConfig:
    url = f"sqlite:///{tmp_path / 'locked.db'}"
    return ServerConfig(port=0, management_port=0, management_key=KEY, store_url=url)


@pytest.mark.slow
def test_a_locked_database_is_503_and_the_directory_is_untouched(
    admin: httpx.Client, directory: ProjectDirectory, tmp_path: Path
) -> None:
    assert admin.post("/admin/projects", json={"id": "kept"}).status_code == 201
    other = sqlite3.connect(tmp_path / "locked.db", isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")  # another process holding the write lock
        response = admin.post("/admin/projects", json={"id": "blocked"})  # waits busy_timeout
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "store.unavailable"
        assert directory.get("blocked") is None
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert admin.post("/admin/projects", json={"id": "blocked"}).status_code == 201
    assert admin.get("/admin/projects/kept").status_code == 200


def test_a_deleted_database_file_refuses_writes_instead_of_losing_them(
    admin: httpx.Client, directory: ProjectDirectory, tmp_path: Path
) -> None:
    assert admin.post("/admin/projects", json={"id": "kept"}).status_code == 201
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"locked.db{suffix}").unlink(missing_ok=True)
    for response in (
        admin.post("/admin/projects", json={"id": "lost"}),
        admin.patch("/admin/projects/kept", json={"lockdown": True}),
        admin.delete("/admin/projects/kept"),
    ):
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "store.unavailable"
    assert directory.get("lost") is None
    assert directory.get("kept") is not None
    assert not directory.get("kept").lockdown  # type: ignore[union-attr]


@pytest.mark.unprivileged
def test_a_read_only_database_file_refuses_writes(admin: httpx.Client, tmp_path: Path) -> None:
    assert admin.post("/admin/projects", json={"id": "kept"}).status_code == 201
    (tmp_path / "locked.db").chmod(0o400)
    response = admin.post("/admin/projects", json={"id": "lost"})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "store.unavailable"
