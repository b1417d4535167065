"""``sqlite:///path.db``: the embedded default, one durable file in WAL mode.

One connection serves the process; an ``asyncio.Lock`` makes each call one
transaction that no other call of this process interleaves with, and
``BEGIN IMMEDIATE`` plus a busy timeout serialise writers of other processes
sharing the file. ``synchronous=FULL`` makes a committed write survive a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite

from matchmaker.errors import MatchmakerError
from matchmaker.model import Project
from matchmaker.store.base import (
    Change,
    ClosedOnExit,
    Watcher,
    check_same_id,
    decode_project,
    encode_project,
    exists_error,
    not_found_error,
    secret_digests,
    secret_in_use_error,
    unavailable_error,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS projects (
    id TEXT PRIMARY KEY,
    body TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS project_secrets (
    secret_sha256 BLOB PRIMARY KEY,
    project_id TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS project_secrets_by_project ON project_secrets (project_id);
"""


class SqliteStore(ClosedOnExit):
    """A ``ProjectStore`` in one SQLite file."""

    def __init__(self, path: Path, connection: aiosqlite.Connection) -> None:
        self._path = path
        self._db = connection
        self._lock = asyncio.Lock()
        self._identity = _identity(path)

    @classmethod
    async def open(cls, path: Path) -> SqliteStore:
        """Open (creating if needed) the database file and its schema."""
        try:
            # Probe first: when aiosqlite's connect fails, its worker thread may
            # outlive the event loop and print a traceback at exit.
            await asyncio.to_thread(_probe, path)
            db = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as exc:
            raise _cannot_open(path, exc) from exc
        try:
            await db.execute("PRAGMA busy_timeout = 5000")
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA synchronous = FULL")
            await db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            await db.close()
            raise unavailable_error(exc) from exc
        return cls(path, db)

    @property
    def description(self) -> str:
        return f"sqlite:///{self._path}"

    async def create(self, project: Project) -> None:
        async with self._transaction() as db:
            try:
                await db.execute(
                    "INSERT INTO projects (id, body) VALUES (?, ?)",
                    (project.id, encode_project(project)),
                )
            except sqlite3.IntegrityError as exc:
                raise exists_error(project.id) from exc
            await _bind_secrets(db, project)

    async def get(self, project_id: str) -> Project | None:
        async with self._transaction(write=False) as db:
            rows = await db.execute_fetchall(
                "SELECT body FROM projects WHERE id = ?", (project_id,)
            )
        return _first(rows)

    async def page(self, *, limit: int, after: str | None = None) -> list[Project]:
        async with self._transaction(write=False) as db:
            rows = await db.execute_fetchall(
                "SELECT body FROM projects WHERE id > ? ORDER BY id LIMIT ?", (after or "", limit)
            )
        return [decode_project(row[0]) for row in rows]

    async def update(self, project_id: str, change: Change) -> Project:
        async with self._transaction() as db:
            rows = await db.execute_fetchall(
                "SELECT body FROM projects WHERE id = ?", (project_id,)
            )
            current = _first(rows)
            if current is None:
                raise not_found_error(project_id)
            updated = change(current)
            check_same_id(current, updated)
            await db.execute(
                "UPDATE projects SET body = ? WHERE id = ?", (encode_project(updated), project_id)
            )
            await db.execute("DELETE FROM project_secrets WHERE project_id = ?", (project_id,))
            await _bind_secrets(db, updated)
        return updated

    async def delete(self, project_id: str) -> bool:
        async with self._transaction() as db:
            cursor = await db.execute("DELETE FROM projects WHERE id = ?", (project_id,))
            await db.execute("DELETE FROM project_secrets WHERE project_id = ?", (project_id,))
            return cursor.rowcount > 0

    async def ping(self) -> None:
        """The file must still be the one opened, and answer a query.

        An open connection keeps reading and writing a file that was deleted or
        replaced, so writes would land where no restart finds them: such a
        store is reported unavailable.
        """
        try:
            same = _identity(self._path) == self._identity
        except OSError as exc:
            raise unavailable_error(exc) from exc
        if not same:
            raise unavailable_error(FileNotFoundError(f"{self._path} was replaced"))
        async with self._transaction(write=False) as db:
            await db.execute_fetchall("SELECT 1 FROM projects LIMIT 1")

    async def watch(self, changed: Watcher) -> None:
        """Not reported: other processes sharing the file are not watched."""

    async def close(self) -> None:
        async with self._lock:
            await self._db.close()

    @asynccontextmanager
    async def _transaction(self, *, write: bool = True) -> AsyncIterator[aiosqlite.Connection]:
        """One transaction that no other call of this process interleaves with.

        A read is one ``SELECT``, atomic by itself in autocommit mode, so it
        skips ``BEGIN``/``COMMIT`` (two round trips to the worker thread).
        """
        async with self._lock:
            try:
                if write:
                    await self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise unavailable_error(exc) from exc
            try:
                yield self._db
            except sqlite3.Error as exc:
                await _rollback(self._db, write)
                raise unavailable_error(exc) from exc
            except BaseException:
                await _rollback(self._db, write)
                raise
            try:
                if write:
                    await self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                await _rollback(self._db, write)
                raise unavailable_error(exc) from exc


def _cannot_open(path: Path, exc: sqlite3.Error) -> MatchmakerError:
    """``store.unavailable`` naming the file, which SQLite's own message never does."""
    where = path.resolve()
    hint = "" if where.parent.is_dir() else f" (the folder {where.parent} does not exist)"
    return MatchmakerError(
        f"cannot open the SQLite store {where}: {exc}{hint}",
        code="store.unavailable",
        details={"path": str(where)},
    )


def _identity(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_dev, stat.st_ino


def _probe(path: Path) -> None:
    sqlite3.connect(path).close()


async def _bind_secrets(db: aiosqlite.Connection, project: Project) -> None:
    try:
        await db.executemany(
            "INSERT INTO project_secrets (secret_sha256, project_id) VALUES (?, ?)",
            [(digest, project.id) for digest in secret_digests(project)],
        )
    except sqlite3.IntegrityError as exc:
        raise secret_in_use_error() from exc


async def _rollback(db: aiosqlite.Connection, began: bool) -> None:
    if not began:
        return
    # The transaction may already be gone: SQLite rolls back by itself on some errors.
    with contextlib.suppress(sqlite3.Error):
        await db.execute("ROLLBACK")


def _first(rows: Iterable[sqlite3.Row]) -> Project | None:
    for row in rows:
        return decode_project(row[0])
    return None
