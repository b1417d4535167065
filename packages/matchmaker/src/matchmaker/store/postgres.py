"""``postgresql://...``: Projects in PostgreSQL through asyncpg (extra ``matchmaker[postgres]``).

Each write is one transaction: an update locks the row (``SELECT ... FOR
UPDATE``) so concurrent PATCHes of a Project apply one after the other, and the
two primary keys (id, secret digest) decide concurrent creates and secret
conflicts. Ids use the ``C`` collation so the order matches the other stores.
Bodies are ``text`` (not ``jsonb``, which refuses ``\\u0000``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

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
"""


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

    def __init__(self, url: str, pool: Any) -> None:
        self._url = url
        self._pool = pool
        self._watcher: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, url: str) -> PostgresStore:
        """Connect a small pool and create the tables if needed."""
        asyncpg = _driver()
        try:
            pool = await asyncpg.create_pool(
                url, min_size=1, max_size=4, timeout=_TIMEOUT_S, command_timeout=_TIMEOUT_S
            )
        except _failures() as exc:
            raise unavailable_error(exc) from exc
        try:
            async with pool.acquire() as conn, conn.transaction():
                await conn.execute(_SCHEMA)
        except _failures() as exc:
            await pool.close()
            raise unavailable_error(exc) from exc
        return cls(url, pool)

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

    async def create(self, project: Project) -> None:
        asyncpg = _driver()
        async with self._transaction() as conn:
            try:
                await conn.execute(
                    "INSERT INTO matchmaker_projects (id, body) VALUES ($1, $2)",
                    project.id,
                    encode_project(project),
                )
            except asyncpg.UniqueViolationError as exc:
                raise exists_error(project.id) from exc
            await _bind_secrets(conn, project)
            await _notify(conn, project.id)

    async def get(self, project_id: str) -> Project | None:
        async with self._transaction(write=False) as conn:
            body = await conn.fetchval(
                "SELECT body FROM matchmaker_projects WHERE id = $1", project_id
            )
        return None if body is None else decode_project(body)

    async def page(self, *, limit: int, after: str | None = None) -> list[Project]:
        async with self._transaction(write=False) as conn:
            rows = await conn.fetch(
                "SELECT body FROM matchmaker_projects WHERE id > $1 ORDER BY id LIMIT $2",
                after or "",
                limit,
            )
        return [decode_project(row["body"]) for row in rows]

    async def update(self, project_id: str, change: Change) -> Project:
        async with self._transaction() as conn:
            body = await conn.fetchval(
                "SELECT body FROM matchmaker_projects WHERE id = $1 FOR UPDATE", project_id
            )
            if body is None:
                raise not_found_error(project_id)
            current = decode_project(body)
            updated = change(current)
            check_same_id(current, updated)
            await conn.execute(
                "UPDATE matchmaker_projects SET body = $2 WHERE id = $1",
                project_id,
                encode_project(updated),
            )
            await conn.execute(
                "DELETE FROM matchmaker_project_secrets WHERE project_id = $1", project_id
            )
            await _bind_secrets(conn, updated)
            await _notify(conn, project_id)
        return updated

    async def delete(self, project_id: str) -> bool:
        async with self._transaction() as conn:
            status = await conn.execute("DELETE FROM matchmaker_projects WHERE id = $1", project_id)
            if status == "DELETE 0":
                return False
            await _notify(conn, project_id)
        return True

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


async def _bind_secrets(conn: Any, project: Project) -> None:
    asyncpg = _driver()
    try:
        await conn.executemany(
            "INSERT INTO matchmaker_project_secrets (secret_sha256, project_id) VALUES ($1, $2)",
            [(digest, project.id) for digest in secret_digests(project)],
        )
    except asyncpg.UniqueViolationError as exc:
        raise secret_in_use_error() from exc
