"""``memory://``: Projects in a dict, gone when the process exits (tests, local play)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

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
)
from matchmaker.store.rows import Stored, new_revision
from matchmaker.store.sealing import StoreKey


class MemoryStore(ClosedOnExit):
    """A ``ProjectStore`` in process memory.

    Every method runs without awaiting between its reads and its writes, so on
    one event loop each call is atomic without a lock. Nothing is at rest, so
    nothing is sealed.
    """

    def __init__(self) -> None:
        self._projects: dict[str, Stored] = {}
        self._ids: list[str] = []  # sorted, for paging
        self._owners: dict[str, str] = {}  # secret -> project id
        self._handovers: dict[str, str] = {}  # gone with the process, like the Projects

    @property
    def description(self) -> str:
        return "memory://"

    @property
    def sealed(self) -> bool | None:
        return None

    async def ping(self) -> None:
        """Always answers: the dict is in this process."""

    async def keep_handover(self, name: str, body: str) -> None:
        self._handovers[name] = body

    async def take_handover(self, name: str) -> str | None:
        return self._handovers.pop(name, None)

    async def create(self, project: Project) -> Stored:
        if project.id in self._projects:
            raise exists_error(project.id)
        self._check_secrets(project)
        stored = self._put(project)
        bisect.insort(self._ids, project.id)
        return stored

    async def read(self, project_id: str) -> Stored | None:
        return self._projects.get(project_id)

    async def page(self, *, limit: int, after: str | None = None) -> list[Stored]:
        start = 0 if after is None else bisect.bisect_right(self._ids, after)
        return [self._projects[i] for i in self._ids[start : start + limit]]

    async def update(
        self, project_id: str, change: Change, *, if_match: Revisions = None
    ) -> Stored:
        current = self._projects.get(project_id)
        if current is None:
            raise not_found_error(project_id)
        check_revision(project_id, current.revision, if_match)
        updated = change(current.project)
        check_same_id(current.project, updated)
        self._check_secrets(updated)
        self._drop_secrets(current.project)
        return self._put(updated)

    async def delete(self, project_id: str, *, if_match: Revisions = None) -> bool:
        current = self._projects.get(project_id)
        if current is None:
            return False
        check_revision(project_id, current.revision, if_match)
        del self._projects[project_id]
        self._drop_secrets(current.project)
        del self._ids[bisect.bisect_left(self._ids, project_id)]
        return True

    async def rekey(self, old_keys: Sequence[StoreKey | None], new_key: StoreKey | None) -> int:
        """Refused: nothing here is at rest, so there is nothing to re-seal."""
        raise MatchmakerError(
            "memory:// keeps nothing at rest: there is no store key to rotate",
            code="store.bad_url",
        )

    async def watch(self, changed: Watcher) -> None:
        """Only this process writes here: there is nothing to report."""

    async def close(self) -> None:
        """Nothing to release."""

    def _check_secrets(self, project: Project) -> None:
        for secret in project.shared_secrets():
            if self._owners.get(secret, project.id) != project.id:
                raise secret_in_use_error()

    def _put(self, project: Project) -> Stored:
        stored = Stored(project, new_revision())
        self._projects[project.id] = stored
        for secret in project.shared_secrets():
            self._owners[secret] = project.id
        return stored

    def _drop_secrets(self, project: Project) -> None:
        for secret in project.shared_secrets():
            self._owners.pop(secret, None)
