"""The store under test on every backend (``store_url``), plus a way to reopen it (a restart)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from matchmaker.store import ProjectStore, open_store

Opener = Callable[[], Awaitable[ProjectStore]]


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
