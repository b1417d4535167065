"""The read-through Project directory the data plane consults.

The control plane writes to the store and then to the directory; the data
plane reads only the directory, so resolving a Project or a credential at
``hello`` or ``pool.enter`` is two dict lookups and never a store round trip.
"""

from __future__ import annotations

from collections.abc import Iterable

from matchmaker.model import Project


class ProjectDirectory:
    """In-memory index of declared Projects by id and by shared secret."""

    def __init__(self, projects: Iterable[Project] = ()) -> None:
        self._by_id: dict[str, Project] = {}
        self._by_secret: dict[str, str] = {}
        for project in projects:
            self.put(project)

    def __len__(self) -> int:
        return len(self._by_id)

    def ids(self) -> set[str]:
        """The ids of every declared Project."""
        return set(self._by_id)

    def get(self, project_id: str) -> Project | None:
        """The declared Project with this id, or ``None`` (implicit or unknown)."""
        return self._by_id.get(project_id)

    def project_for_secret(self, secret: str) -> Project | None:
        """The Project a shared secret is bound to, or ``None``."""
        project_id = self._by_secret.get(secret)
        return None if project_id is None else self._by_id.get(project_id)

    def put(self, project: Project) -> None:
        """Insert or replace a Project, re-indexing its secrets."""
        self.remove(project.id)
        self._by_id[project.id] = project
        for key in project.keys:
            self._by_secret[key.secret] = project.id

    def remove(self, project_id: str) -> None:
        """Forget a Project and its secrets; unknown ids are ignored."""
        old = self._by_id.pop(project_id, None)
        if old is not None:
            for key in old.keys:
                if self._by_secret.get(key.secret) == project_id:
                    del self._by_secret[key.secret]
