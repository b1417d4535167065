"""Project resolution: which Project a client belongs to, and what it may do now.

Read at ``hello`` and again at every ``pool.enter`` and ``session.join`` from the
:class:`~matchmaker.directory.ProjectDirectory`, so a control-plane change
(lockdown, policies, keys, deletion) applies to the next operation.
"""

from __future__ import annotations

import hmac

from matchmaker.config import Limits
from matchmaker.core.admission.tokens import (
    Identity,
    invalid_credential,
    looks_like_token,
    signed_by,
    unverified_issuer,
    verify,
)
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.model import RESERVED_PROJECT_ID, Project

__all__ = ["DELEGATE_SCOPE", "current_project", "holds_scope", "resolve_hello"]

DELEGATE_SCOPE = "delegate"
"""The key scope that lets a connection attach as a delegated pool's delegate."""


def resolve_hello(
    directory: ProjectDirectory,
    project_id: str | None,
    credential: str | None,
    *,
    require_declared: bool,
    now_ms: int,
    limits: Limits,
    resuming: bool = False,
) -> tuple[Project, Identity | None]:
    """The Project a ``hello`` binds to, by the design's rules, and the identity a token
    proves (``None`` for a shared secret or no credential).

    1. A credential bound through a ``shared-secret`` key is authoritative; a
       different declared ``project`` is ``project.forbidden``.
    2. A credential shaped like a JWT is verified by the ``jwt`` keys of one
       Project: ``project`` when given, else the only Project with a key of the
       token's (unverified) ``iss``. So a ``hello`` looks at one Project's keys,
       never at every Project's.
    3. Any other credential is ``auth.invalid_credential``.
    4. Otherwise ``project`` (absent: ``default``), admitted by :func:`current_project`.

    ``resuming`` (the ``hello`` carries a resume token): a token's ``exp`` is not checked
    (:func:`~matchmaker.core.admission.tokens.verify`).
    """
    if credential is not None:
        bound = directory.project_for_secret(credential)
        if bound is None and looks_like_token(credential):
            project = _token_project(directory, project_id, credential)
            return project, verify(project, credential, now_ms, limits, resuming=resuming)
        if bound is None:
            raise MatchmakerError(
                "the credential is not bound to any Project", code="auth.invalid_credential"
            )
        if project_id is not None and project_id != bound.id:
            raise MatchmakerError(
                "the credential belongs to another Project",
                code="project.forbidden",
                details={"project": project_id},
            )
        return bound, None
    project = current_project(
        directory, project_id or RESERVED_PROJECT_ID, None, require_declared=require_declared
    )
    return project, None


def _token_project(directory: ProjectDirectory, project_id: str | None, token: str) -> Project:
    """The one Project whose jwt keys may verify ``token``."""
    if project_id is None:
        issuer = unverified_issuer(token)
        ids = [] if issuer is None else directory.projects_for_issuer(issuer)
        if len(ids) > 1:
            raise invalid_credential(
                "ambiguous_issuer", "several Projects trust this issuer: send project in hello"
            )
        if not ids:
            raise invalid_credential(
                "unknown_issuer", "no Project trusts the token's issuer: send project in hello"
            )
        project_id = ids[0]
    project = directory.get(project_id)
    if project is None or not project.jwt_keys():
        raise invalid_credential(
            "unknown_project", f"Project {project_id!r} has no jwt key to verify the token"
        )
    return project


def current_project(
    directory: ProjectDirectory,
    project_id: str,
    credential: str | None,
    *,
    require_declared: bool,
) -> Project:
    """The Project's config as of now; implicit (empty) when it is not declared.

    A declared Project with ``keys`` admits only a client holding one of them,
    so rotating keys also applies to connected clients' next operation: a client
    whose credential was removed is told it was revoked (``auth.invalid_credential``,
    ``details.reason``), one that never presented any that it needs one
    (``project.forbidden``).
    """
    project = directory.get(project_id)
    if project is None:
        if require_declared and project_id != RESERVED_PROJECT_ID:
            raise MatchmakerError(
                f"Project {project_id!r} is not declared",
                code="project.not_found",
                details={"project": project_id},
            )
        return Project(id=project_id)
    if project.keys and not _holds_a_key(project, credential):
        if credential is not None:
            # It was one of the Project's keys at hello: a PATCH removed it since.
            raise MatchmakerError(
                f"the credential of this connection was revoked from Project {project_id!r}",
                code="auth.invalid_credential",
                details={"project": project_id, "reason": "revoked"},
            )
        raise MatchmakerError(
            f"Project {project_id!r} requires a credential",
            code="project.forbidden",
            details={"project": project_id},
        )
    return project


def holds_scope(project: Project, credential: str | None, scope: str) -> bool:
    """Whether ``credential`` is one of the Project's keys and that key has ``scope``."""
    if credential is None:
        return False
    offered = credential.encode()
    matches = [
        hmac.compare_digest(key.secret.encode(), offered) and scope in key.scopes
        for key in project.keys
        if key.secret is not None
    ]
    return any(matches)


def _holds_a_key(project: Project, credential: str | None) -> bool:
    """Whether ``credential`` is one of the Project's secrets (compared in constant time),
    or a token one of its jwt keys still verifies."""
    if credential is None:
        return False
    offered = credential.encode()
    # Every key is compared, so the time taken does not tell which one came close.
    matches = [hmac.compare_digest(secret.encode(), offered) for secret in project.shared_secrets()]
    if any(matches):
        return True
    return looks_like_token(credential) and signed_by(project, credential)
