"""One store fixture over every backend, plus a way to reopen it (a restart)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from matchmaker.store import ProjectStore, open_store

POSTGRES_URL = os.environ.get(
    "MATCHMAKER_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)

Opener = Callable[[], Awaitable[ProjectStore]]


@pytest.fixture
async def postgres_url() -> AsyncIterator[str]:
    """A store URL whose tables live in a fresh schema, dropped afterwards."""
    import asyncpg

    schema = f"mm_test_{uuid.uuid4().hex[:12]}"
    try:
        admin = await asyncpg.connect(POSTGRES_URL)
    except OSError as exc:
        pytest.skip(f"PostgreSQL is not reachable at {POSTGRES_URL}: {exc}")
    await admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{POSTGRES_URL}?search_path={schema}"
    finally:
        await admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.close()


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'projects.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
async def reopen(store_url: str) -> AsyncIterator[Opener]:
    """Open the store under test; every call opens it again (closing is the caller's)."""
    opened: list[ProjectStore] = []

    async def _open() -> ProjectStore:
        store = await open_store(store_url)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        await store.close()


@pytest.fixture
async def store(reopen: Opener) -> ProjectStore:
    return await reopen()
