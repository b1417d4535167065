"""``memory://``: Projects in a dict, gone when the process exits (tests, local play)."""

from __future__ import annotations

import bisect

from matchmaker.model import Project
from matchmaker.store.base import (
    Change,
    ClosedOnExit,
    Watcher,
    check_same_id,
    exists_error,
    not_found_error,
    secret_in_use_error,
)


class MemoryStore(ClosedOnExit):
    """A ``ProjectStore`` in process memory.

    Every method runs without awaiting between its reads and its writes, so on
    one event loop each call is atomic without a lock.
    """

    def __init__(self) -> None:
        self._projects: dict[str, Project] = {}
        self._ids: list[str] = []  # sorted, for paging
        self._owners: dict[str, str] = {}  # secret -> project id

    @property
    def description(self) -> str:
        return "memory://"

    async def ping(self) -> None:
        """Always answers: the dict is in this process."""

    async def create(self, project: Project) -> None:
        if project.id in self._projects:
            raise exists_error(project.id)
        self._check_secrets(project)
        self._put(project)
        bisect.insort(self._ids, project.id)

    async def get(self, project_id: str) -> Project | None:
        return self._projects.get(project_id)

    async def page(self, *, limit: int, after: str | None = None) -> list[Project]:
        start = 0 if after is None else bisect.bisect_right(self._ids, after)
        return [self._projects[i] for i in self._ids[start : start + limit]]

    async def update(self, project_id: str, change: Change) -> Project:
        current = self._projects.get(project_id)
        if current is None:
            raise not_found_error(project_id)
        updated = change(current)
        check_same_id(current, updated)
        self._check_secrets(updated)
        self._drop_secrets(current)
        self._put(updated)
        return updated

    async def delete(self, project_id: str) -> bool:
        current = self._projects.pop(project_id, None)
        if current is None:
            return False
        self._drop_secrets(current)
        del self._ids[bisect.bisect_left(self._ids, project_id)]
        return True

    async def watch(self, changed: Watcher) -> None:
        """Only this process writes here: there is nothing to report."""

    async def close(self) -> None:
        """Nothing to release."""

    def _check_secrets(self, project: Project) -> None:
        for key in project.keys:
            if self._owners.get(key.secret, project.id) != project.id:
                raise secret_in_use_error()

    def _put(self, project: Project) -> None:
        self._projects[project.id] = project
        for key in project.keys:
            self._owners[key.secret] = project.id

    def _drop_secrets(self, project: Project) -> None:
        for key in project.keys:
            self._owners.pop(key.secret, None)
