"""Choosing a backend from its URL, and keeping passwords out of logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from matchmaker.errors import MatchmakerError
from matchmaker.store import open_store, redact_url
from matchmaker.store.memory import MemoryStore
from matchmaker.store.sqlite import SqliteStore


async def test_memory_and_sqlite_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(await open_store("memory://"), MemoryStore)
    monkeypatch.chdir(tmp_path)
    relative = await open_store("sqlite:///rel.db")
    absolute = await open_store(f"sqlite:///{tmp_path / 'abs.db'}")
    try:
        assert isinstance(relative, SqliteStore)
        assert (tmp_path / "rel.db").is_file()
        assert (tmp_path / "abs.db").is_file()
        assert relative.description == "sqlite:///rel.db"
    finally:
        await relative.close()
        await absolute.close()


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("redis://localhost", "store.bad_url"),
        ("memory", "store.bad_url"),
        ("sqlite://", "store.bad_url"),
        ("sqlite:///", "store.bad_url"),
        ("sqlite:////no/such/dir/x.db", "store.unavailable"),
        ("postgresql://postgres@127.0.0.1:1/test", "store.unavailable"),
    ],
)
async def test_bad_urls_are_coded_errors(url: str, code: str) -> None:
    with pytest.raises(MatchmakerError) as caught:
        await open_store(url)
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("postgresql://u:p%40ss@h/db?x=1", "postgresql://u:***@h/db?x=1"),
        ("sqlite:///x.db", "sqlite:///x.db"),
    ],
)
def test_redact_url_hides_the_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown


async def test_sqlite_file_is_in_wal_mode(tmp_path: Path) -> None:
    import aiosqlite

    store = await open_store(f"sqlite:///{tmp_path / 'wal.db'}")
    await store.close()
    async with aiosqlite.connect(tmp_path / "wal.db") as db:
        rows = list(await db.execute_fetchall("PRAGMA journal_mode"))
    assert rows[0][0] == "wal"  # WAL is a property of the file, kept across connections


async def test_postgresql_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "asyncpg", None)  # as if not installed
    with pytest.raises(MatchmakerError) as caught:
        await open_store("postgresql://postgres@127.0.0.1:5432/test")
    assert caught.value.code == "store.missing_extra"
    assert "matchmaker[postgres]" in caught.value.message


@pytest.mark.parametrize("where", ["no/such/dir/x.db", "a-directory"])
async def test_an_sqlite_file_that_cannot_be_opened_is_named(tmp_path: Path, where: str) -> None:
    (tmp_path / "a-directory").mkdir()
    path = tmp_path / where
    with pytest.raises(MatchmakerError) as caught:
        await open_store(f"sqlite:///{path}")
    assert caught.value.code == "store.unavailable"
    assert f"cannot open the SQLite store {path}: " in caught.value.message
    assert caught.value.details == {"path": str(path)}
    if where.startswith("no/"):
        assert f"(the folder {path.parent} does not exist)" in caught.value.message
