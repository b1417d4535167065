"""``?dryRun=true``: every check of a write, including the store's conflicts, and no write.

As in Kubernetes, a dry run answers what the real request would answer (the
same status and body, or the same coded error) and changes nothing, so
``matchmaker admin apply --dry-run`` asks the server itself and can never
approve what the real run refuses. The conflicts a store enforces at write
time (``project.exists``, ``project.secret_in_use``) are checked against the
store (the id) and the directory (which secret is bound where), both current
under the control plane's write lock.
"""

from __future__ import annotations

from starlette.requests import Request

from matchmaker.control.validation import invalid
from matchmaker.directory import ProjectDirectory
from matchmaker.model import Project
from matchmaker.store import ProjectStore, Revisions
from matchmaker.store.base import (
    check_revision,
    exists_error,
    not_found_error,
    secret_in_use_error,
)

PARAMETER = "dryRun"


def dry_run_requested(request: Request) -> bool:
    """``dryRun=true`` or ``false`` (the default); any other value is ``request.invalid``."""
    value = request.query_params.get(PARAMETER, "false")
    if value not in ("true", "false"):
        raise invalid(PARAMETER, f"must be true or false, not {value!r}")
    return value == "true"


async def check_create(store: ProjectStore, directory: ProjectDirectory, project: Project) -> None:
    """Raise what ``store.create(project)`` would raise, writing nothing."""
    if await store.get(project.id) is not None:
        raise exists_error(project.id)
    check_secrets_free(directory, project)


async def current(store: ProjectStore, project_id: str, revisions: Revisions) -> Project:
    """The stored Project a dry-run PATCH or DELETE applies to: ``project.not_found`` if
    none, ``project.conflict`` if ``If-Match`` does not hold its revision."""
    stored = await store.read(project_id)
    if stored is None:
        raise not_found_error(project_id)
    check_revision(project_id, stored.revision, revisions)
    return stored.project


def check_secrets_free(directory: ProjectDirectory, project: Project) -> None:
    """``project.secret_in_use`` if a secret of ``project`` is bound to another Project."""
    for key in project.keys:
        owner = directory.project_for_secret(key.secret)
        if owner is not None and owner.id != project.id:
            raise secret_in_use_error()
