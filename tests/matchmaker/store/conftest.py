"""The store under test on every backend (``store_url``), plus a way to reopen it (a restart)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project, ProjectKey
from matchmaker.store import ProjectStore, open_store

Opener = Callable[[], Awaitable[ProjectStore]]


def project(project_id: str, *secrets: str, lockdown: bool = False) -> Project:
    return Project(
        id=project_id,
        display_name=f"Project {project_id}",
        lockdown=lockdown,
        keys=tuple(ProjectKey(type="shared-secret", secret=s) for s in secrets),
        policies=(
            MatchmakingPolicy(name="duel", mode="auto", group_size=2, filter={"r": "@self"}),
        ),
    )


async def code_of(awaitable: object) -> str:
    with pytest.raises(MatchmakerError) as caught:
        await awaitable  # type: ignore[misc]
    return caught.value.code


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
