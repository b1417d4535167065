"""The SQLite store's files: created owner-only, whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from matchmaker.store import open_store

from .conftest import project


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("open_umask")
async def test_the_database_and_its_wal_and_shm_are_created_0600(tmp_path: Path) -> None:
    path = tmp_path / "projects.db"
    async with await open_store(f"sqlite:///{path}") as store:
        await store.create(project("p1", "s1"))
        files = [path, tmp_path / "projects.db-wal", tmp_path / "projects.db-shm"]
        modes = {file.name: stat.S_IMODE(os.stat(file).st_mode) for file in files}
    assert modes == {file.name: 0o600 for file in files}
