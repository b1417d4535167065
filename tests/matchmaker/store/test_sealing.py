"""Secrets at rest: sealed under the store key in SQLite and PostgreSQL, refused under another.

The bytes of the SQLite file (with its ``-wal``) and the raw rows of the
PostgreSQL tables are read directly: no secret may appear in them in clear.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from matchmaker.model import Project, ProjectKey
from matchmaker.store import ProjectStore, StoreKey, open_store
from tests.matchmaker.jwtkeys import signer
from tests.matchmaker.storekeys import new_key_file

from .conftest import code_of, project

SECRETS = ("first-client-secret-5b1f9c", "second-client-secret-e0d4a7")
HS256_SECRET = "an-hs256-secret-sealed-at-rest-0c9e7a51d2"

RawText = Callable[[], Awaitable[bytes]]


def key_file(tmp_path: Path, name: str) -> Path:
    return new_key_file(tmp_path / name)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def at_rest_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store that keeps Projects at rest (SQLite, PostgreSQL)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'projects.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
async def raw(at_rest_url: str, tmp_path: Path) -> AsyncIterator[RawText]:
    """Everything the store holds, as the bytes a copied backup would hold."""
    if at_rest_url.startswith("sqlite"):

        def read_files() -> bytes:
            return b"".join(p.read_bytes() for p in sorted(tmp_path.glob("projects.db*")))

        async def files() -> bytes:
            return await asyncio.to_thread(read_files)

        yield files
        return
    import asyncpg

    conn = await asyncpg.connect(at_rest_url)

    async def tables() -> bytes:
        rows = await conn.fetch("SELECT id, body, key_id, revision FROM matchmaker_projects")
        index = await conn.fetch("SELECT secret_sha256, project_id FROM matchmaker_project_secrets")
        cells = [c for r in [*rows, *index] for c in r]
        return b"\x00".join(c if isinstance(c, bytes) else str(c).encode() for c in cells)

    yield tables
    await conn.close()


def assert_no_secret(data: bytes) -> None:
    for secret in SECRETS:
        assert secret.encode() not in data
        assert hashlib.sha256(secret.encode()).digest() not in data  # the index is keyed


async def test_a_store_written_with_a_key_holds_no_secret_in_clear(
    at_rest_url: str, raw: RawText, tmp_path: Path
) -> None:
    key = StoreKey.from_file(key_file(tmp_path, "store.key"))
    async with await open_store(at_rest_url, key) as store:
        await store.create(project("a", SECRETS[0]))
        await store.create(project("b"))
        await store.update("b", lambda p: project("b", SECRETS[1]))
        assert_no_secret(await raw())  # the -wal included, before any checkpoint
        assert await code_of(store.create(project("c", SECRETS[0]))) == "project.secret_in_use"
    assert_no_secret(await raw())
    async with await open_store(at_rest_url, key) as reopened:
        assert await reopened.get("a") == project("a", SECRETS[0])
        assert await reopened.get("b") == project("b", SECRETS[1])


async def test_an_hs256_jwt_key_is_sealed_like_a_shared_secret(
    at_rest_url: str, raw: RawText, tmp_path: Path
) -> None:
    hs256 = ProjectKey(type="jwt", algorithm="HS256", key=HS256_SECRET, issuer="https://id.test")
    public = ProjectKey(type="jwt", algorithm="EdDSA", key=signer("EdDSA").verifying)
    jwt_project = Project(id="j", keys=(hs256, public))
    key = StoreKey.from_file(key_file(tmp_path, "store.key"))
    async with await open_store(at_rest_url, key) as store:
        await store.create(jwt_project)
        assert HS256_SECRET.encode() not in await raw()
    async with await open_store(at_rest_url, key) as reopened:
        assert await reopened.get("j") == jwt_project


async def sealed_store(url: str, tmp_path: Path) -> StoreKey:
    """A store holding Project ``a`` sealed under a new key; that key."""
    key = StoreKey.from_file(key_file(tmp_path, "store.key"))
    async with await open_store(url, key) as store:
        await store.create(project("a", SECRETS[0]))
    return key


async def test_a_store_sealed_under_another_key_or_none_is_refused_and_left_alone(
    at_rest_url: str, raw: RawText, tmp_path: Path
) -> None:
    await sealed_store(at_rest_url, tmp_path)
    other = StoreKey.from_file(key_file(tmp_path, "other.key"))
    before = await raw()
    for wrong in (other, None):
        assert await code_of(open_store(at_rest_url, wrong)) == "store.key_mismatch"
    assert await raw() == before


async def test_a_store_in_clear_is_refused_with_a_key(at_rest_url: str, tmp_path: Path) -> None:
    async with await open_store(at_rest_url) as store:
        await store.create(project("a", SECRETS[0]))
    key = StoreKey.from_file(key_file(tmp_path, "store.key"))
    assert await code_of(open_store(at_rest_url, key)) == "store.key_mismatch"


async def rotate(url: str, old: list[StoreKey | None], new: StoreKey) -> int:
    async with await open_store(url, new, verify_key=False) as store:
        return await store.rekey(old, new)


async def test_rotation_seals_a_clear_store_then_moves_it_to_a_new_key(
    at_rest_url: str, raw: RawText, tmp_path: Path
) -> None:
    async with await open_store(at_rest_url) as store:
        await store.create(project("a", SECRETS[0]))
        await store.create(project("b", SECRETS[1]))
    first = StoreKey.from_file(key_file(tmp_path, "first.key"))
    second = StoreKey.from_file(key_file(tmp_path, "second.key"))
    assert await rotate(at_rest_url, [None], first) == 2
    if at_rest_url.startswith("sqlite"):
        assert_no_secret(await raw())  # the clear pages were overwritten, the WAL emptied
    assert await rotate(at_rest_url, [first], second) == 2
    assert await code_of(open_store(at_rest_url, first)) == "store.key_mismatch"
    async with await open_store(at_rest_url, second) as store:
        assert await store.get("a") == project("a", SECRETS[0])
        # The index was rebuilt under the new key: it still makes secrets unique.
        assert await code_of(store.create(project("c", SECRETS[1]))) == "project.secret_in_use"


async def test_rotation_without_the_old_key_changes_nothing(
    at_rest_url: str, raw: RawText, tmp_path: Path
) -> None:
    key = await sealed_store(at_rest_url, tmp_path)
    before = await raw()
    new = StoreKey.from_file(key_file(tmp_path, "new.key"))
    assert await code_of(rotate(at_rest_url, [None], new)) == "store.key_mismatch"
    assert await raw() == before
    async with await open_store(at_rest_url, key) as store:
        assert await store.get("a") == project("a", SECRETS[0])


@pytest.mark.parametrize(
    ("content", "why"),
    [(b"not base64 at all!", "base64"), (base64.b64encode(b"short"), "32 bytes"), (None, "read")],
)
def test_a_bad_key_file_is_a_coded_error(tmp_path: Path, content: bytes | None, why: str) -> None:
    path = tmp_path / "store.key"
    if content is not None:
        path.write_bytes(content)
        path.chmod(0o600)
    from matchmaker.errors import MatchmakerError

    with pytest.raises(MatchmakerError) as caught:
        StoreKey.from_file(path)
    assert caught.value.code == "store.bad_key"
    assert why in caught.value.message


async def test_a_file_from_before_revisions_and_key_ids_opens_and_is_written(
    tmp_path: Path,
) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE projects (id TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE project_secrets (secret_sha256 BLOB PRIMARY KEY, project_id TEXT NOT NULL)"
        " WITHOUT ROWID;"
        """INSERT INTO projects VALUES ('a', '{"id": "a"}');"""
    )
    old.commit()
    old.close()
    store: ProjectStore
    async with await open_store(f"sqlite:///{path}") as store:
        stored = await store.read("a")
        assert stored is not None
        assert stored.etag == '"0"'
        updated = await store.update("a", lambda p: project("a", SECRETS[0]), if_match={"0"})
        assert updated.etag != '"0"'
