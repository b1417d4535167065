"""The ``/admin`` wire shapes that are not the stored ``Project`` itself."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from matchmaker.model import MatchmakingPolicy, Project, ProjectKey


class ProjectPatch(msgspec.Struct, forbid_unknown_fields=True, frozen=True, rename="camel"):
    """The body of ``PATCH /admin/projects/{id}`` (JSON Merge Patch of the updatable fields).

    An absent field keeps the stored value, a present one replaces it (arrays
    whole), ``displayName: null`` removes the label. ``id`` may be repeated but
    must equal the path.
    """

    id: str | UnsetType = UNSET
    display_name: str | UnsetType | None = UNSET
    lockdown: bool | UnsetType = UNSET
    keys: tuple[ProjectKey, ...] | UnsetType = UNSET
    policies: tuple[MatchmakingPolicy, ...] | UnsetType = UNSET


class ProjectList(msgspec.Struct, frozen=True):
    """One page of ``GET /admin/projects``: ordered by id; ``next_cursor`` null on the last.

    ``etags`` holds the ``ETag`` of each listed Project by id: what ``If-Match``
    takes to patch or delete it only if it has not changed since this page.
    """

    projects: list[Project]
    next_cursor: str | None
    etags: dict[str, str] = {}


class ErrorDetail(msgspec.Struct, frozen=True, omit_defaults=True):
    """What went wrong: a stable dotted ``code`` and a human ``message``."""

    code: str
    message: str
    details: dict[str, Any] | None = None


class ErrorResponse(msgspec.Struct, frozen=True):
    """The body of every non-2xx response except 204."""

    error: ErrorDetail


class Health(msgspec.Struct, frozen=True):
    """``GET /healthz``."""

    status: str = "ok"
