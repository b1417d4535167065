"""Fixtures shared by the matchmaker tests: a PostgreSQL schema of their own, and a store
URL for each backend."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

POSTGRES_URL = os.environ.get(
    "MATCHMAKER_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


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
    """The URL of an empty store, once per backend (the test runs three times)."""
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'projects.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url
