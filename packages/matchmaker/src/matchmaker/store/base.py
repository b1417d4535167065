"""The ``ProjectStore`` protocol every backend implements, and what backends share.

A store holds valid Projects only (the control plane validates before it
writes) and enforces the two invariants that need atomicity across requests:
an id names at most one Project, and a shared secret is bound to at most one
Project. Every write is one transaction; a failed write changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Protocol, Self

import msgspec

from matchmaker.errors import MatchmakerError
from matchmaker.model import Project

Change = Callable[[Project], Project]
"""A pure function from the stored Project to its replacement; it may raise to abort."""

Watcher = Callable[[str | None], None]
"""Told the id of a Project that was written, or ``None`` when anything may have changed."""

_DECODER = msgspec.json.Decoder(Project)


class ProjectStore(Protocol):
    """Durable (or, for ``memory://``, process-lifetime) Project records, ordered by id."""

    @property
    def description(self) -> str:
        """Which store this is, safe to log (no password)."""
        ...

    async def create(self, project: Project) -> None:
        """Insert a new Project.

        Raises ``project.exists`` if the id is taken and ``project.secret_in_use``
        if one of its secrets is bound to another Project.
        """
        ...

    async def get(self, project_id: str) -> Project | None:
        """The Project with this id, or ``None``."""
        ...

    async def page(self, *, limit: int, after: str | None = None) -> list[Project]:
        """At most ``limit`` Projects with ids greater than ``after``, ordered by id."""
        ...

    async def update(self, project_id: str, change: Change) -> Project:
        """Replace a Project by ``change(current)`` atomically and return the result.

        No concurrent write to the same Project is lost: ``change`` always sees
        the latest committed version. If ``change`` raises, nothing is written
        and the exception propagates. Raises ``project.not_found`` and
        ``project.secret_in_use``. ``change`` must keep the id.
        """
        ...

    async def delete(self, project_id: str) -> bool:
        """Remove a Project and its secret bindings; ``False`` if there was none."""
        ...

    async def watch(self, changed: Watcher) -> None:
        """Call ``changed`` after writes by *other* store instances (other processes).

        Only stores shared between processes report anything (PostgreSQL);
        the others return at once and never call it. Writes made through this
        instance may be reported too.
        """
        ...

    async def ping(self) -> None:
        """Raise ``store.unavailable`` unless the store can answer a query now (readiness)."""
        ...

    async def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
        ...

    async def __aenter__(self) -> Self:
        """``async with await open_store(url) as store:`` closes it however the block ends."""
        ...

    async def __aexit__(self, *exc_info: object) -> None: ...


class _Closable(Protocol):
    async def close(self) -> None: ...


class ClosedOnExit:
    """What every backend shares: ``async with store:`` closes the store on the way out,
    an exception included. An SQLite store left open keeps its worker thread (aiosqlite's,
    not a daemon) and with it the process alive after ``asyncio.run`` returns."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self: _Closable, *exc_info: object) -> None:
        await self.close()


def encode_project(project: Project) -> str:
    """The stored text form of a Project (its wire JSON)."""
    return msgspec.json.encode(project).decode()


def decode_project(body: str | bytes) -> Project:
    """A Project back from its stored text; corrupt rows are a coded error."""
    try:
        return _DECODER.decode(body)
    except msgspec.DecodeError as exc:
        raise MatchmakerError(f"a stored Project is corrupt: {exc}", code="store.corrupt") from exc


def secret_digests(project: Project) -> list[bytes]:
    """SHA-256 digests of a Project's secrets: the unique index stores these, not secrets."""
    return [hashlib.sha256(key.secret.encode()).digest() for key in project.keys]


def exists_error(project_id: str) -> MatchmakerError:
    return MatchmakerError(
        f"a Project with id {project_id!r} already exists", code="project.exists"
    )


def not_found_error(project_id: str) -> MatchmakerError:
    return MatchmakerError(f"no Project with id {project_id!r}", code="project.not_found")


def secret_in_use_error() -> MatchmakerError:
    return MatchmakerError(
        "a shared secret in keys is already bound to another Project",
        code="project.secret_in_use",
    )


def unavailable_error(exc: BaseException) -> MatchmakerError:
    return MatchmakerError(
        f"the Project store failed: {type(exc).__name__}: {exc}", code="store.unavailable"
    )


def check_same_id(before: Project, after: Project) -> None:
    """An update keeps the Project's id (it is the key): the control plane refuses a PATCH
    that changes it before it gets here, so this guards the store's other callers."""
    if before.id != after.id:
        raise MatchmakerError(
            "the id cannot be changed", code="request.invalid", details={"field": "$.id"}
        )
