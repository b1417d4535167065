"""The ``ProjectStore`` protocol every backend implements, and what backends share.

A store holds valid Projects only (the control plane validates before it
writes) and enforces the two invariants that need atomicity across requests:
an id names at most one Project, and a shared secret is bound to at most one
Project. Every write is one transaction; a failed write changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Protocol, Self

from matchmaker.errors import MatchmakerError
from matchmaker.model import Project
from matchmaker.store.rows import Stored, etag
from matchmaker.store.sealing import StoreKey

Change = Callable[[Project], Project]
"""A pure function from the stored Project to its replacement; it may raise to abort."""

Watcher = Callable[[str | None], None]
"""Told the id of a Project that was written, or ``None`` when anything may have changed."""

Revisions = Collection[str] | None
"""The revisions a conditional write accepts (from ``If-Match``); ``None``: unconditional."""


class ProjectStore(Protocol):
    """Durable (or, for ``memory://``, process-lifetime) Project records, ordered by id.

    Every write gives the Project a new revision (:class:`Stored`, its ``ETag``);
    ``update`` and ``delete`` take the revisions the caller read (``If-Match``)
    and refuse with ``project.conflict`` when the Project has changed since.
    """

    @property
    def description(self) -> str:
        """Which store this is, safe to log (no password)."""
        ...

    @property
    def sealed(self) -> bool | None:
        """Whether secrets at rest are sealed under a store key; ``None``: nothing is at rest."""
        ...

    async def create(self, project: Project) -> Stored:
        """Insert a new Project.

        Raises ``project.exists`` if the id is taken and ``project.secret_in_use``
        if one of its secrets is bound to another Project.
        """
        ...

    async def read(self, project_id: str) -> Stored | None:
        """The Project with this id and its revision, or ``None``."""
        ...

    async def get(self, project_id: str) -> Project | None:
        """The Project with this id, or ``None``."""
        ...

    async def page(self, *, limit: int, after: str | None = None) -> list[Stored]:
        """At most ``limit`` Projects with ids greater than ``after``, ordered by id."""
        ...

    async def update(
        self, project_id: str, change: Change, *, if_match: Revisions = None
    ) -> Stored:
        """Replace a Project by ``change(current)`` atomically and return the result.

        No concurrent write to the same Project is lost: ``change`` always sees
        the latest committed version. If ``change`` raises, nothing is written
        and the exception propagates. Raises ``project.not_found``,
        ``project.secret_in_use`` and, when ``if_match`` is given and does not
        hold the current revision, ``project.conflict``. ``change`` must keep the id.
        """
        ...

    async def delete(self, project_id: str, *, if_match: Revisions = None) -> bool:
        """Remove a Project and its secret bindings; ``False`` if there was none.

        ``if_match`` as for :meth:`update`.
        """
        ...

    async def rekey(self, old_keys: Sequence[StoreKey | None], new_key: StoreKey | None) -> int:
        """Re-seal every stored secret under ``new_key`` in one transaction; how many Projects.

        Each row is opened with the old key its key id names (``None``: in clear).
        A row under a key not given fails the whole call (``store.key_mismatch``)
        and nothing is written.
        """
        ...

    async def keep_handover(self, name: str, body: str) -> None:
        """Keep ``body`` under ``name``, replacing what was kept there, in one transaction.

        The restart hand-over (:mod:`matchmaker.data.handover`): a process stopping for a
        restart writes what its clients need to resume, for the next process to take.
        """
        ...

    async def take_handover(self, name: str) -> str | None:
        """What :meth:`keep_handover` kept under ``name``, removed in the same transaction
        (``None`` if nothing is): a hand-over is taken once, by one process."""
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


class _Readable(Protocol):
    async def read(self, project_id: str) -> Stored | None: ...

    async def close(self) -> None: ...


class ClosedOnExit:
    """What every backend shares: ``get`` is ``read`` without the revision, and
    ``async with store:`` closes the store on the way out, an exception included.
    An SQLite store left open keeps its worker thread (aiosqlite's, not a daemon)
    and with it the process alive after ``asyncio.run`` returns."""

    async def get(self: _Readable, project_id: str) -> Project | None:
        stored = await self.read(project_id)
        return None if stored is None else stored.project

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self: _Readable, *exc_info: object) -> None:
        await self.close()


def check_revision(project_id: str, current: str, if_match: Revisions) -> None:
    """Refuse a conditional write whose ``If-Match`` does not hold the current revision."""
    if if_match is not None and current not in if_match:
        raise MatchmakerError(
            f"Project {project_id!r} changed since it was read (If-Match does not hold its "
            "current ETag): read it again and retry",
            code="project.conflict",
            details={"etag": etag(current)},
        )


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
