"""The restart hand-over's row, on every backend: kept under a name, taken once."""

from __future__ import annotations

import asyncio

from matchmaker.store import ProjectStore

from .conftest import Opener


async def test_a_hand_over_is_taken_once(store: ProjectStore) -> None:
    assert await store.take_handover("port 8080") is None
    await store.keep_handover("port 8080", '{"clients": []}')
    assert await store.take_handover("port 8080") == '{"clients": []}'
    assert await store.take_handover("port 8080") is None


async def test_keeping_again_replaces_and_names_are_apart(store: ProjectStore) -> None:
    await store.keep_handover("port 8080", "first")
    await store.keep_handover("port 8080", "second")
    await store.keep_handover("port 9090", "other")
    assert await store.take_handover("port 8080") == "second"
    assert await store.take_handover("port 9090") == "other"


async def test_two_processes_taking_at_once_get_it_once(reopen: Opener, store_url: str) -> None:
    """The take is one transaction: of two stores on one database, one gets the row."""
    first = await reopen()
    await first.keep_handover("port 8080", "body")
    second = first if store_url == "memory://" else await reopen()
    taken = await asyncio.gather(
        first.take_handover("port 8080"), second.take_handover("port 8080")
    )
    assert sorted(map(str, taken)) == ["None", "body"]


async def test_a_hand_over_survives_reopening(reopen: Opener, store_url: str) -> None:
    first = await reopen()
    await first.keep_handover("port 8080", "body")
    await first.close()
    second = await reopen()
    expected = None if store_url == "memory://" else "body"  # memory:// ends with its process
    assert await second.take_handover("port 8080") == expected
