"""Fixtures shared by the matchmaker tests: a PostgreSQL schema of their own."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

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
