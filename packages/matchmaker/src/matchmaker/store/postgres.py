"""``postgresql://...``: Projects in PostgreSQL through asyncpg (extra ``matchmaker[postgres]``).

Each write is one transaction: an update locks the row (``SELECT ... FOR
UPDATE``) so concurrent PATCHes of a Project apply one after the other, and the
two primary keys (id, secret digest) decide concurrent creates and secret
conflicts. Ids use the ``C`` collation so the order matches the other stores.
Bodies are ``text`` (not ``jsonb``, which refuses ``\\u0000``), encoded by
:mod:`matchmaker.store.rows` (secrets sealed under the store key, a revision each).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

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
from matchmaker.store.url import redact_url

log = logging.getLogger("matchmaker.store")

CHANNEL = "matchmaker_projects"
_RELISTEN_DELAY_S = 1.0
# A database that stops answering fails the request (503) instead of hanging it.
_TIMEOUT_S = 10.0

# asyncpg ships no type information: its pool and connections are ``Any`` here.

_SCHEMA = """
SELECT pg_advisory_xact_lock(hashtext('matchmaker.store.schema'));
CREATE TABLE IF NOT EXISTS matchmaker_projects (
    id text COLLATE "C" PRIMARY KEY,
    body text NOT NULL
);
CREATE TABLE IF NOT EXISTS matchmaker_project_secrets (
    secret_sha256 bytea PRIMARY KEY,
    project_id text COLLATE "C" NOT NULL
        REFERENCES matchmaker_projects (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS matchmaker_project_secrets_by_project
    ON matchmaker_project_secrets (project_id);
ALTER TABLE matchmaker_projects ADD COLUMN IF NOT EXISTS key_id text;
ALTER TABLE matchmaker_projects ADD COLUMN IF NOT EXISTS revision text NOT NULL DEFAULT '0';
CREATE TABLE IF NOT EXISTS matchmaker_handovers (
    name text COLLATE "C" PRIMARY KEY,
    body text NOT NULL
);
"""
_ROW = "SELECT body, key_id, revision FROM matchmaker_projects"


def _driver() -> Any:
    try:
        return importlib.import_module("asyncpg")
    except ImportError as exc:
        raise MatchmakerError(
            "the PostgreSQL store needs asyncpg: pip install 'matchmaker[postgres]'",
            code="store.missing_extra",
        ) from exc


class PostgresStore(ClosedOnExit):
    """A ``ProjectStore`` in PostgreSQL tables ``matchmaker_projects`` and ``..._secrets``."""

    def __init__(self, url: str, pool: Any, rows: RowCodec) -> None:
        self._url = url
        self._pool = pool
        self._rows = rows
        self._watcher: asyncio.Task[None] | None = None

    @classmethod
    async def open(
        cls, url: str, key: StoreKey | None = None, *, verify_key: bool = True
    ) -> PostgresStore:
        """Connect a small pool and create the tables if needed.

        Refuses (``store.key_mismatch``) tables whose secrets were sealed under
        another key than ``key``, or are in clear when there is a key.
        """
        asyncpg = _driver()
        try:
            pool = await asyncpg.create_pool(
                url, min_size=1, max_size=4, timeout=_TIMEOUT_S, command_timeout=_TIMEOUT_S
            )
        except _failures() as exc:
            raise unavailable_error(exc) from exc
        rows = RowCodec(key)
        try:
            async with pool.acquire() as conn:
                async with conn.transaction():
                    await conn.execute(_SCHEMA)
                found = await conn.fetch("SELECT DISTINCT key_id FROM matchmaker_projects")
            if verify_key:
                rows.check(row["key_id"] for row in found)
        except _failures() as exc:
            await pool.close()
            raise unavailable_error(exc) from exc
        except BaseException:
            await pool.close()
            raise
        return cls(url, pool, rows)

    async def watch(self, changed: Watcher) -> None:
        """Report every committed write, by any process, through ``LISTEN``/``NOTIFY``.

        Listening has begun when this returns. If the listening connection is
        lost, it is re-established and ``changed(None)`` says that writes may
        have been missed.
        """
        listener = await self._listen(changed)
        self._watcher = asyncio.create_task(self._keep_listening(listener, changed))

    @property
    def description(self) -> str:
        return redact_url(self._url)

    @property
    def sealed(self) -> bool | None:
        return self._rows.key is not None

    async def create(self, project: Project) -> Stored:
        asyncpg = _driver()
        revision = new_revision()
        async with self._transaction() as conn:
            try:
                await conn.execute(
                    "INSERT INTO matchmaker_projects (id, body, key_id, revision) "
                    "VALUES ($1, $2, $3, $4)",
                    project.id,
                    self._rows.encode(project),
                    self._rows.key_id,
                    revision,
                )
            except asyncpg.UniqueViolationError as exc:
                raise exists_error(project.id) from exc
            await self._bind_secrets(conn, project)
            await _notify(conn, project.id)
        return Stored(project, revision)

    async def read(self, project_id: str) -> Stored | None:
        async with self._transaction(write=False) as conn:
            row = await conn.fetchrow(f"{_ROW} WHERE id = $1", project_id)
        return None if row is None else self._stored(row)

    async def page(self, *, limit: int, after: str | None = None) -> list[Stored]:
        async with self._transaction(write=False) as conn:
            rows = await conn.fetch(
                f"{_ROW} WHERE id > $1 ORDER BY id LIMIT $2", after or "", limit
            )
        return [self._stored(row) for row in rows]

    async def update(
        self, project_id: str, change: Change, *, if_match: Revisions = None
    ) -> Stored:
        revision = new_revision()
        async with self._transaction() as conn:
            row = await conn.fetchrow(f"{_ROW} WHERE id = $1 FOR UPDATE", project_id)
            if row is None:
                raise not_found_error(project_id)
            current = self._stored(row)
            check_revision(project_id, current.revision, if_match)
            updated = change(current.project)
            check_same_id(current.project, updated)
            await conn.execute(
                "UPDATE matchmaker_projects SET body = $2, key_id = $3, revision = $4 "
                "WHERE id = $1",
                project_id,
                self._rows.encode(updated),
                self._rows.key_id,
                revision,
            )
            await conn.execute(
                "DELETE FROM matchmaker_project_secrets WHERE project_id = $1", project_id
            )
            await self._bind_secrets(conn, updated)
            await _notify(conn, project_id)
        return Stored(updated, revision)

    async def delete(self, project_id: str, *, if_match: Revisions = None) -> bool:
        async with self._transaction() as conn:
            revision = await conn.fetchval(
                "DELETE FROM matchmaker_projects WHERE id = $1 RETURNING revision", project_id
            )
            if revision is None:
                return False
            # Raising rolls the delete back.
            check_revision(project_id, revision, if_match)
            await _notify(conn, project_id)
        return True

    async def rekey(self, old_keys: Sequence[StoreKey | None], new_key: StoreKey | None) -> int:
        async with self._transaction() as conn:
            rows = await conn.fetch(
                "SELECT id, body, key_id FROM matchmaker_projects ORDER BY id FOR UPDATE"
            )
            resealed = reseal(((r["id"], r["body"], r["key_id"]) for r in rows), old_keys, new_key)
            await conn.executemany(
                "UPDATE matchmaker_projects SET body = $2, key_id = $3 WHERE id = $1",
                [(row.project_id, row.body, row.key_id) for row in resealed],
            )
            await conn.execute("DELETE FROM matchmaker_project_secrets")
            await conn.executemany(
                "INSERT INTO matchmaker_project_secrets (secret_sha256, project_id) "
                "VALUES ($1, $2)",
                [(digest, row.project_id) for row in resealed for digest in row.digests],
            )
        self._rows = RowCodec(new_key)
        return len(resealed)

    def _stored(self, row: Any) -> Stored:
        return Stored(self._rows.decode(row["body"], row["key_id"]), row["revision"])

    async def _bind_secrets(self, conn: Any, project: Project) -> None:
        asyncpg = _driver()
        try:
            await conn.executemany(
                "INSERT INTO matchmaker_project_secrets (secret_sha256, project_id) "
                "VALUES ($1, $2)",
                [(digest, project.id) for digest in self._rows.digests(project)],
            )
        except asyncpg.UniqueViolationError as exc:
            raise secret_in_use_error() from exc

    async def keep_handover(self, name: str, body: str) -> None:
        async with self._transaction() as conn:
            await conn.execute(
                "INSERT INTO matchmaker_handovers (name, body) VALUES ($1, $2) "
                "ON CONFLICT (name) DO UPDATE SET body = excluded.body",
                name,
                body,
            )

    async def take_handover(self, name: str) -> str | None:
        async with self._transaction() as conn:
            body = await conn.fetchval(
                "DELETE FROM matchmaker_handovers WHERE name = $1 RETURNING body", name
            )
        return None if body is None else str(body)

    async def ping(self) -> None:
        async with self._transaction(write=False) as conn:
            await conn.fetchval("SELECT 1")

    async def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        await self._pool.close()

    async def _listen(self, changed: Watcher) -> tuple[Any, asyncio.Event]:
        asyncpg = _driver()
        lost = asyncio.Event()
        try:
            conn = await asyncpg.connect(self._url, timeout=_TIMEOUT_S)
            conn.add_termination_listener(lambda _: lost.set())
            await conn.add_listener(CHANNEL, lambda _c, _pid, _ch, payload: changed(payload))
        except _failures() as exc:
            raise unavailable_error(exc) from exc
        return conn, lost

    async def _keep_listening(self, listener: tuple[Any, asyncio.Event], changed: Watcher) -> None:
        conn, lost = listener
        try:
            while True:
                await lost.wait()
                log.warning("lost the PostgreSQL LISTEN connection; reconnecting")
                while True:
                    try:
                        conn, lost = await self._listen(changed)
                        break
                    except MatchmakerError:
                        await asyncio.sleep(_RELISTEN_DELAY_S)  # a retry delay, not a wait
                changed(None)
        finally:
            await conn.close()

    @asynccontextmanager
    async def _transaction(self, *, write: bool = True) -> AsyncIterator[Any]:
        """A pooled connection in one transaction, driver errors translated.

        A read is one statement, atomic by itself, so it runs without
        ``BEGIN``/``COMMIT``.
        """
        try:
            async with self._pool.acquire() as conn:
                if not write:
                    yield conn
                    return
                async with conn.transaction():
                    yield conn
        except _failures() as exc:
            raise unavailable_error(exc) from exc


def _failures() -> tuple[type[BaseException], ...]:
    asyncpg = _driver()
    return (OSError, asyncpg.PostgresError, asyncpg.InterfaceError)


async def _notify(conn: Any, project_id: str) -> None:
    # Delivered to every listener when (and only if) the transaction commits.
    await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, project_id)
