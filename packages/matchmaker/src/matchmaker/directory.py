"""The read-through Project directory the data plane consults.

The control plane writes to the store and then to the directory; the data
plane reads only the directory, so resolving a Project or a credential at
``hello`` or ``pool.enter`` is two dict lookups and never a store round trip.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from matchmaker.model import Project

Listener = Callable[[str, Project | None], None]
"""Told ``(id, the Project now)`` after a Project changed; ``None`` when it was removed."""


class ProjectDirectory:
    """In-memory index of declared Projects by id, by shared secret and by jwt issuer.

    An issuer may be named by several Projects' jwt keys (one identity provider
    serving several games): :meth:`projects_for_issuer` gives them all, and
    ``hello`` then needs ``project`` to choose.

    Listeners hear of every actual change (a ``put`` of an equal Project is
    not one), whether it came from this process's control plane or from the
    store reporting another node's write.
    """

    def __init__(self, projects: Iterable[Project] = ()) -> None:
        self._by_id: dict[str, Project] = {}
        self._by_secret: dict[str, str] = {}
        self._by_issuer: dict[str, set[str]] = {}
        self._listeners: list[Listener] = []
        for project in projects:
            self.put(project)

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

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

    def projects_for_issuer(self, issuer: str) -> list[str]:
        """The ids of the Projects with a jwt key of this ``issuer``, sorted."""
        return sorted(self._by_issuer.get(issuer, ()))

    def put(self, project: Project) -> None:
        """Insert or replace a Project, re-indexing its secrets."""
        old = self._unindex(project.id)
        self._by_id[project.id] = project
        for secret in project.shared_secrets():
            self._by_secret[secret] = project.id
        for issuer in _issuers(project):
            self._by_issuer.setdefault(issuer, set()).add(project.id)
        if old != project:
            self._tell(project.id, project)

    def remove(self, project_id: str) -> None:
        """Forget a Project and its secrets; unknown ids are ignored."""
        if self._unindex(project_id) is not None:
            self._tell(project_id, None)

    def _unindex(self, project_id: str) -> Project | None:
        old = self._by_id.pop(project_id, None)
        if old is not None:
            for secret in old.shared_secrets():
                if self._by_secret.get(secret) == project_id:
                    del self._by_secret[secret]
            for issuer in _issuers(old):
                ids = self._by_issuer[issuer]
                ids.discard(project_id)
                if not ids:
                    del self._by_issuer[issuer]
        return old

    def _tell(self, project_id: str, project: Project | None) -> None:
        for listener in list(self._listeners):
            listener(project_id, project)


def _issuers(project: Project) -> set[str]:
    return {key.issuer for key in project.jwt_keys() if key.issuer is not None}
