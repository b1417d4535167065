"""The directory follows the store, including writes made by other processes (PostgreSQL)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import msgspec
import pytest

from matchmaker.directory import ProjectDirectory
from matchmaker.model import Project, ProjectKey
from matchmaker.refresh import DirectoryRefresher, load_directory
from matchmaker.store import ProjectStore, open_store

from .conftest import POSTGRES_URL
from .polling import eventually


def project(project_id: str, secret: str) -> Project:
    return Project(id=project_id, keys=(ProjectKey(type="shared-secret", secret=secret),))


async def test_load_directory_makes_it_equal_to_the_store() -> None:
    store = await open_store("memory://")
    for i in range(2500):  # more than one page
        await store.create(project(f"p{i:04d}", f"s{i}"))
    directory = ProjectDirectory([project("stale", "old")])
    await load_directory(store, directory)
    assert len(directory) == 2500
    assert directory.get("stale") is None
    assert directory.project_for_secret("old") is None
    assert directory.project_for_secret("s1234") == project("p1234", "s1234")


@pytest.fixture
def reader_name() -> str:
    """The ``application_name`` of node B's connections: how the test finds them, and only them."""
    return f"mm_refresh_{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def two_nodes(
    postgres_url: str, reader_name: str
) -> AsyncIterator[tuple[ProjectStore, ProjectDirectory]]:
    """Node A's store, and node B's directory kept fresh by B's own store on the same schema."""
    writer = await open_store(postgres_url)
    reader = await open_store(f"{postgres_url}&application_name={reader_name}")
    directory = ProjectDirectory()
    refresher = DirectoryRefresher(reader, directory)
    await writer.create(project("before", "b"))
    await refresher.start()
    yield writer, directory
    await refresher.close()
    await reader.close()
    await writer.close()


@pytest.mark.postgres
async def test_writes_on_another_node_reach_the_directory(
    two_nodes: tuple[ProjectStore, ProjectDirectory],
) -> None:
    writer, directory = two_nodes
    assert directory.get("before") is not None  # loaded at start
    await writer.create(project("new", "n1"))
    await eventually(lambda: directory.project_for_secret("n1") is not None)
    await writer.update("new", lambda p: msgspec.structs.replace(p, lockdown=True))
    await eventually(lambda: (p := directory.get("new")) is not None and p.lockdown)
    await writer.delete("before")
    await eventually(lambda: directory.get("before") is None)
    assert directory.project_for_secret("b") is None


@pytest.mark.postgres
async def test_a_lost_listen_connection_is_reopened_and_resynchronised(
    two_nodes: tuple[ProjectStore, ProjectDirectory],
    reader_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    writer, directory = two_nodes
    admin = await asyncpg.connect(POSTGRES_URL)
    try:
        # Only node B's listening backend: this database, B's application_name. Parallel
        # suites and other users of the server keep their connections.
        killed = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = $1 "
            "AND query LIKE 'LISTEN %'",
            reader_name,
        )
        assert killed == 1
        # Written while B is not listening: only the resynchronisation can bring it.
        await writer.create(project("while-away", "w"))
    finally:
        await admin.close()
    await eventually(lambda: directory.get("while-away") is not None, within_s=10)
    assert "lost the PostgreSQL LISTEN connection" in caplog.text
    await writer.create(project("after", "a"))
    await eventually(lambda: directory.get("after") is not None)
