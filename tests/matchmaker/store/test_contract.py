"""The contract every ``ProjectStore`` backend passes (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio

import msgspec

from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project
from matchmaker.store import ProjectStore

from .conftest import Opener, code_of, project


async def test_an_open_store_answers_ping(store: ProjectStore) -> None:
    await store.ping()  # readiness: raises store.unavailable when it cannot answer


async def test_create_then_get_returns_an_equal_project(store: ProjectStore) -> None:
    created = project("p1", "s1", lockdown=True)
    await store.create(created)
    assert await store.get("p1") == created
    assert await store.get("p2") is None


async def test_create_existing_id_conflicts_and_keeps_the_first(store: ProjectStore) -> None:
    await store.create(project("p1"))
    assert await code_of(store.create(project("p1", "other"))) == "project.exists"
    assert await store.get("p1") == project("p1")


async def test_an_update_cannot_change_the_id(store: ProjectStore) -> None:
    await store.create(project("a"))
    renamed = store.update("a", lambda p: msgspec.structs.replace(p, id="b"))
    assert await code_of(renamed) == "request.invalid"
    assert await store.get("a") == project("a")
    assert await store.get("b") is None


async def test_secret_bound_to_one_project_only(store: ProjectStore) -> None:
    await store.create(project("a", "shared"))
    assert await code_of(store.create(project("b", "shared"))) == "project.secret_in_use"
    assert await store.get("b") is None  # the failed create left nothing behind
    await store.create(project("b", "mine"))
    to_shared = msgspec.structs.replace
    code = await code_of(
        store.update("b", lambda p: to_shared(p, keys=project("b", "shared").keys))
    )
    assert code == "project.secret_in_use"
    assert await store.get("b") == project("b", "mine")


async def test_secret_is_free_again_after_delete_or_rebinding(store: ProjectStore) -> None:
    await store.create(project("a", "s"))
    await store.update("a", lambda p: msgspec.structs.replace(p, keys=()))
    await store.create(project("b", "s"))
    assert await store.delete("b")
    await store.create(project("c", "s"))
    assert (await store.get("c")) == project("c", "s")


async def test_page_orders_by_id_and_resumes_after(store: ProjectStore) -> None:
    ids = ["b", "a", "Z", "é", "a/b", "10", "9", "zz"]
    for i in ids:
        await store.create(project(i))
    expected = sorted(ids)  # code point order, the same in every backend
    assert [s.project.id for s in await store.page(limit=100)] == expected
    seen: list[str] = []
    after = None
    while batch := await store.page(limit=3, after=after):
        assert len(batch) <= 3
        seen += [s.project.id for s in batch]
        after = batch[-1].project.id
    assert seen == expected
    assert await store.page(limit=5, after=expected[-1]) == []


async def test_update_replaces_and_returns_the_result(store: ProjectStore) -> None:
    await store.create(project("p", "s1"))
    updated = await store.update("p", lambda p: msgspec.structs.replace(p, lockdown=True))
    assert updated.project.lockdown
    assert await store.read("p") == updated


async def test_update_unknown_is_not_found(store: ProjectStore) -> None:
    assert await code_of(store.update("nope", lambda p: p)) == "project.not_found"


async def test_failing_change_writes_nothing(store: ProjectStore) -> None:
    await store.create(project("p", "s"))

    def boom(current: Project) -> Project:
        raise MatchmakerError("refused", code="request.invalid")

    assert await code_of(store.update("p", boom)) == "request.invalid"
    assert await store.get("p") == project("p", "s")
    await store.create(project("q"))  # the store is still usable


async def test_delete(store: ProjectStore) -> None:
    await store.create(project("p"))
    assert await store.delete("p") is True
    assert await store.get("p") is None
    assert await store.delete("p") is False
    assert await store.page(limit=10) == []


async def test_concurrent_creates_of_one_id_make_exactly_one(store: ProjectStore) -> None:
    results = await asyncio.gather(
        *(store.create(project("race", f"s{i}")) for i in range(8)), return_exceptions=True
    )
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 7
    assert all(isinstance(r, MatchmakerError) and r.code == "project.exists" for r in errors)
    assert len(await store.page(limit=10)) == 1


async def test_concurrent_updates_lose_nothing(store: ProjectStore) -> None:
    await store.create(project("p"))

    def add_policy(name: str) -> msgspec.Struct:
        return MatchmakingPolicy(name=name, mode="claim", group_size=2)

    async def append(i: int) -> None:
        await store.update(
            "p",
            lambda p: msgspec.structs.replace(p, policies=(*p.policies, add_policy(f"n{i}"))),
        )

    await asyncio.gather(*(append(i) for i in range(10)))
    stored = await store.get("p")
    assert stored is not None
    assert {p.name for p in stored.policies} == {"duel"} | {f"n{i}" for i in range(10)}


async def test_everything_survives_reopening(reopen: Opener, store_url: str) -> None:
    first = await reopen()
    await first.create(project("kept", "s1"))
    await first.create(project("gone", "s2"))
    await first.update("kept", lambda p: msgspec.structs.replace(p, lockdown=True))
    await first.delete("gone")
    await first.close()
    if store_url == "memory://":
        second = await reopen()
        assert await second.page(limit=10) == []  # memory is not durable, by design
        return
    second = await reopen()
    assert [s.project.id for s in await second.page(limit=10)] == ["kept"]
    kept = await second.get("kept")
    assert kept is not None
    assert kept.lockdown
    assert await code_of(second.create(project("x", "s1"))) == "project.secret_in_use"
    await second.create(project("gone", "s2"))  # its secret was released with it


async def test_every_write_gives_a_new_revision_and_read_returns_it(store: ProjectStore) -> None:
    created = await store.create(project("p", "s"))
    assert await store.read("p") == created
    updated = await store.update("p", lambda p: p)
    assert updated.revision != created.revision
    assert [s.revision for s in await store.page(limit=10)] == [updated.revision]
    await store.delete("p")
    recreated = await store.create(project("p", "s"))
    assert recreated.revision not in (created.revision, updated.revision)  # no ABA


async def test_a_stale_if_match_is_a_conflict_and_changes_nothing(store: ProjectStore) -> None:
    first = await store.create(project("p", "s"))
    second = await store.update("p", lambda p: msgspec.structs.replace(p, lockdown=True))
    stale = {first.revision}
    unlock = store.update("p", lambda p: msgspec.structs.replace(p, lockdown=False), if_match=stale)
    assert await code_of(unlock) == "project.conflict"
    assert await code_of(store.delete("p", if_match=stale)) == "project.conflict"
    assert await store.read("p") == second
    await store.create(project("q", "s2"))  # the failed writes left the store usable
    third = await store.update("p", lambda p: p, if_match={first.revision, second.revision})
    assert await store.delete("p", if_match={third.revision})
    assert await store.read("p") is None
