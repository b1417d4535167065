"""``sqlite:///path.db``: the embedded default, one durable file in WAL mode.

One connection serves the process; an ``asyncio.Lock`` makes each call one
transaction that no other call of this process interleaves with, and
``BEGIN IMMEDIATE`` plus a busy timeout serialise writers of other processes
sharing the file. ``synchronous=FULL`` makes a committed write survive a crash,
and a write is acknowledged only while the file is still the one a restart
opens. A new file is created owner-only (0600). Rows are encoded by
:mod:`matchmaker.store.rows` (secrets sealed under the store key, a revision each).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite

from matchmaker.errors import MatchmakerError
from matchmaker.model import Project
from matchmaker.store.base import (
    Change,
    ClosedOnExit,
    Revisions,
    Watcher,
    check_revision,
    check_same_id,
    exists_error,
    not_found_error,
    secret_in_use_error,
    unavailable_error,
)
from matchmaker.store.rows import RowCodec, Stored, new_revision, reseal
from matchmaker.store.sealing import StoreKey

_SCHEMA = """
CREATE TABLE IF NOT EXISTS projects (
    id TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    key_id TEXT,
    revision TEXT NOT NULL DEFAULT '0'
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS project_secrets (
    secret_sha256 BLOB PRIMARY KEY,
    project_id TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS project_secrets_by_project ON project_secrets (project_id);
CREATE TABLE IF NOT EXISTS handovers (
    name TEXT PRIMARY KEY,
    body TEXT NOT NULL
) WITHOUT ROWID;
"""
# Columns added since the first schema: a file written before them gets them on open.
_ADDED_COLUMNS = {"key_id": "key_id TEXT", "revision": "revision TEXT NOT NULL DEFAULT '0'"}
_ROW = "SELECT body, key_id, revision FROM projects"


class SqliteStore(ClosedOnExit):
    """A ``ProjectStore`` in one SQLite file."""

    def __init__(self, path: Path, connection: aiosqlite.Connection, rows: RowCodec) -> None:
        self._path = path
        self._db = connection
        self._rows = rows
        self._lock = asyncio.Lock()
        self._identity = _identity(path)

    @classmethod
    async def open(
        cls, path: Path, key: StoreKey | None = None, *, verify_key: bool = True
    ) -> SqliteStore:
        """Open (creating if needed) the database file and its schema.

        Refuses (``store.key_mismatch``) a file whose secrets were sealed under
        another key than ``key``, or are in clear when there is a key.
        """
        try:
            # Probe first: when aiosqlite's connect fails, its worker thread may
            # outlive the event loop and print a traceback at exit.
            await asyncio.to_thread(_probe, path)
            db = await aiosqlite.connect(path, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            raise _cannot_open(path, exc) from exc
        rows = RowCodec(key)
        try:
            await db.execute("PRAGMA busy_timeout = 5000")
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA synchronous = FULL")
            # Deleted content is overwritten, so a secret once in clear (before a
            # rotation) does not linger in free pages.
            await db.execute("PRAGMA secure_delete = ON")
            await db.executescript(_SCHEMA)
            await _add_columns(db)
            if verify_key:
                found = await db.execute_fetchall("SELECT DISTINCT key_id FROM projects")
                rows.check(row[0] for row in found)
        except sqlite3.Error as exc:
            await db.close()
            raise unavailable_error(exc) from exc
        except BaseException:
            await db.close()
            raise
        return cls(path, db, rows)

    @property
    def description(self) -> str:
        return f"sqlite:///{self._path}"

    @property
    def sealed(self) -> bool | None:
        return self._rows.key is not None

    async def create(self, project: Project) -> Stored:
        revision = new_revision()
        async with self._transaction() as db:
            try:
                await db.execute(
                    "INSERT INTO projects (id, body, key_id, revision) VALUES (?, ?, ?, ?)",
                    (project.id, self._rows.encode(project), self._rows.key_id, revision),
                )
            except sqlite3.IntegrityError as exc:
                raise exists_error(project.id) from exc
            await self._bind_secrets(db, project)
        return Stored(project, revision)

    async def read(self, project_id: str) -> Stored | None:
        async with self._transaction(write=False) as db:
            rows = await db.execute_fetchall(f"{_ROW} WHERE id = ?", (project_id,))
        return self._first(rows)

    async def page(self, *, limit: int, after: str | None = None) -> list[Stored]:
        async with self._transaction(write=False) as db:
            rows = await db.execute_fetchall(
                f"{_ROW} WHERE id > ? ORDER BY id LIMIT ?", (after or "", limit)
            )
        return [self._stored(row) for row in rows]

    async def update(
        self, project_id: str, change: Change, *, if_match: Revisions = None
    ) -> Stored:
        revision = new_revision()
        async with self._transaction() as db:
            rows = await db.execute_fetchall(f"{_ROW} WHERE id = ?", (project_id,))
            current = self._first(rows)
            if current is None:
                raise not_found_error(project_id)
            check_revision(project_id, current.revision, if_match)
            updated = change(current.project)
            check_same_id(current.project, updated)
            await db.execute(
                "UPDATE projects SET body = ?, key_id = ?, revision = ? WHERE id = ?",
                (self._rows.encode(updated), self._rows.key_id, revision, project_id),
            )
            await db.execute("DELETE FROM project_secrets WHERE project_id = ?", (project_id,))
            await self._bind_secrets(db, updated)
        return Stored(updated, revision)

    async def delete(self, project_id: str, *, if_match: Revisions = None) -> bool:
        async with self._transaction() as db:
            if if_match is not None:
                rows = await db.execute_fetchall(
                    "SELECT revision FROM projects WHERE id = ?", (project_id,)
                )
                for row in rows:
                    check_revision(project_id, row[0], if_match)
            cursor = await db.execute("DELETE FROM projects WHERE id = ?", (project_id,))
            await db.execute("DELETE FROM project_secrets WHERE project_id = ?", (project_id,))
            return cursor.rowcount > 0

    async def rekey(self, old_keys: Sequence[StoreKey | None], new_key: StoreKey | None) -> int:
        async with self._transaction() as db:
            rows = await db.execute_fetchall("SELECT id, body, key_id FROM projects")
            resealed = reseal(((r[0], r[1], r[2]) for r in rows), old_keys, new_key)
            await db.executemany(
                "UPDATE projects SET body = ?, key_id = ? WHERE id = ?",
                [(row.body, row.key_id, row.project_id) for row in resealed],
            )
            await db.execute("DELETE FROM project_secrets")
            await db.executemany(
                "INSERT INTO project_secrets (secret_sha256, project_id) VALUES (?, ?)",
                [(digest, row.project_id) for row in resealed for digest in row.digests],
            )
        try:
            # The old bodies must not stay behind in the write-ahead log.
            await self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            raise unavailable_error(exc) from exc
        self._rows = RowCodec(new_key)
        return len(resealed)

    def _stored(self, row: sqlite3.Row) -> Stored:
        return Stored(self._rows.decode(row[0], row[1]), row[2])

    def _first(self, rows: Iterable[sqlite3.Row]) -> Stored | None:
        for row in rows:
            return self._stored(row)
        return None

    async def _bind_secrets(self, db: aiosqlite.Connection, project: Project) -> None:
        try:
            await db.executemany(
                "INSERT INTO project_secrets (secret_sha256, project_id) VALUES (?, ?)",
                [(digest, project.id) for digest in self._rows.digests(project)],
            )
        except sqlite3.IntegrityError as exc:
            raise secret_in_use_error() from exc

    async def keep_handover(self, name: str, body: str) -> None:
        async with self._transaction() as db:
            await db.execute(
                "INSERT INTO handovers (name, body) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET body = excluded.body",
                (name, body),
            )

    async def take_handover(self, name: str) -> str | None:
        async with self._transaction() as db:
            rows = await db.execute_fetchall(
                "DELETE FROM handovers WHERE name = ? RETURNING body", (name,)
            )
        return None if not rows else str(next(iter(rows))[0])

    async def ping(self) -> None:
        """The file must still be the one opened and writable, and answer a query."""
        self._check_file()
        async with self._transaction(write=False) as db:
            await db.execute_fetchall("SELECT 1 FROM projects LIMIT 1")

    async def watch(self, changed: Watcher) -> None:
        """Not reported: other processes sharing the file are not watched."""

    async def close(self) -> None:
        async with self._lock:
            await self._db.close()

    def _check_file(self) -> None:
        """Raise ``store.unavailable`` unless a write would reach the file a restart opens.

        An open connection keeps reading and writing a file that was deleted or
        replaced (or made read-only), so such writes would land where no
        restart finds them: they are refused instead of acknowledged.
        """
        try:
            same = _identity(self._path) == self._identity
        except OSError as exc:
            raise unavailable_error(exc) from exc
        if not same:
            raise unavailable_error(FileNotFoundError(f"{self._path} was replaced"))
        if not os.access(self._path, os.W_OK):
            raise unavailable_error(PermissionError(f"{self._path} is not writable"))

    @asynccontextmanager
    async def _transaction(self, *, write: bool = True) -> AsyncIterator[aiosqlite.Connection]:
        """One transaction that no other call of this process interleaves with.

        A read is one ``SELECT``, atomic by itself in autocommit mode, so it
        skips ``BEGIN``/``COMMIT`` (two round trips to the worker thread). A
        write checks the file before it begins and again after it commits: a
        write is acknowledged only if it reached the file a restart opens.
        """
        async with self._lock:
            try:
                if write:
                    self._check_file()
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
            if write:
                self._check_file()


def _cannot_open(path: Path, exc: sqlite3.Error | OSError) -> MatchmakerError:
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
    """Create the file owner-only (0600) if it is new, then open it once.

    SQLite gives the ``-wal`` and ``-shm`` files the mode of the database file,
    so they are owner-only too; an existing file keeps the mode it has.
    """
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    sqlite3.connect(path).close()


async def _add_columns(db: aiosqlite.Connection) -> None:
    have = {row[1] for row in await db.execute_fetchall("PRAGMA table_info(projects)")}
    for name, column in _ADDED_COLUMNS.items():
        if name not in have:
            try:
                await db.execute(f"ALTER TABLE projects ADD COLUMN {column}")
            except sqlite3.OperationalError as exc:
                # Another process opening the same file may have added it first.
                if "duplicate column" not in str(exc):
                    raise


async def _rollback(db: aiosqlite.Connection, began: bool) -> None:
    if not began:
        return
    # The transaction may already be gone: SQLite rolls back by itself on some errors.
    with contextlib.suppress(sqlite3.Error):
        await db.execute("ROLLBACK")
