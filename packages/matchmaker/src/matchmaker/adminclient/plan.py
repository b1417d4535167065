"""``matchmaker admin apply``: what must change for the server to hold the Projects of a file.

Pure functions over plain values, so the plan is the same whether it is
printed (``--dry-run``) or carried out. Projects are compared after
normalisation through the ``Project`` struct, so a file that omits defaults
(``lockdown: false``, ``keys: []``) matches what the server returns.

The steps are ordered so that every one can succeed when the whole file is
valid: removals first. A secret is bound to one Project at a time, so one that
moves from Project ``a`` to Project ``b`` of the file is first released (``a``
is patched to the keys it keeps, or deleted with ``--prune``), then given to
``b``; a swap of secrets between two Projects applies the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from secrets import token_hex
from typing import Any, Literal

import msgspec

from matchmaker.errors import MatchmakerError
from matchmaker.model import Project

__all__ = ["Plan", "PlanStep", "desired_projects", "plan"]

UPDATABLE = ("displayName", "lockdown", "keys", "policies")
_PROJECT = msgspec.json.Decoder(Project)


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One step: ``body`` is the POST or PATCH body; ``fields`` the fields that differ."""

    action: Literal["create", "patch", "delete", "release", "unchanged"]
    project_id: str
    body: dict[str, Any] | None = None
    fields: tuple[str, ...] = ()

    def describe(self, before: Mapping[str, Any] | None) -> list[str]:
        """Diff lines; secrets are never printed, only how many keys there are."""
        lines = [f"{self.sign} {self.project_id}"]
        for name in self.fields:
            old = None if before is None else before.get(name)
            new = None if self.body is None else self.body.get(name)
            lines.append(f"    {name}: {_shown(name, old)} -> {_shown(name, new)}")
        if self.action == "release":
            lines.append("    (first, to free secrets that another Project of the file takes)")
        return lines

    @property
    def sign(self) -> str:
        """``+`` create, ``~`` patch (or release), ``-`` delete, ``=`` unchanged."""
        return {"create": "+", "delete": "-", "unchanged": "="}.get(self.action, "~")


@dataclass(frozen=True, slots=True)
class Plan:
    """The steps in the order they run; ``moving`` the secrets that change Project."""

    changes: list[PlanStep]
    moving: frozenset[str]

    def stand_ins(self) -> dict[str, str]:
        """A stand-in for each moving secret, for the dry run of the steps that take one.

        The server's dry run sees the Projects as they are before the plan, when a
        moving secret is still bound to the Project that releases it, so it would
        refuse the step that takes it (``project.secret_in_use``) although the
        real run, which releases it first, succeeds. The step is checked with a
        fresh secret in its place instead; the release step's own dry run checks
        the release, and the secret itself is one the server already stores.
        """
        return {secret: f"dry-run-stand-in-{token_hex(16)}" for secret in self.moving}


def desired_projects(document: Any, source: str) -> list[dict[str, Any]]:
    """The normalised Projects of an apply file (``projects:`` list in the /admin body shape)."""
    if not isinstance(document, dict) or not isinstance(document.get("projects"), list):
        raise _bad_file(source, "the file must be a mapping with a 'projects:' list")
    if extra := sorted(set(document) - {"projects"}):
        raise _bad_file(source, f"unknown top-level key {extra[0]!r} (only 'projects')")
    seen: set[str] = set()
    bound: dict[str, int] = {}  # secret -> index of the Project holding it
    projects: list[dict[str, Any]] = []
    for i, item in enumerate(document["projects"]):
        try:
            project = _PROJECT.decode(msgspec.json.encode(item))
        except (msgspec.DecodeError, TypeError) as exc:
            named = f" ({item['id']!r})" if isinstance(item, dict) and "id" in item else ""
            raise _bad_file(source, f"projects[{i}]{named}: {exc}") from None
        if project.id in seen:
            raise _bad_file(source, f"projects[{i}]: the id {project.id!r} appears twice")
        seen.add(project.id)
        for secret in project.shared_secrets():
            if bound.setdefault(secret, i) != i:
                j = bound[secret]
                raise _bad_file(
                    source,
                    f"projects[{i}] ({project.id!r}): a key secret is also in projects[{j}] "
                    f"({projects[j]['id']!r}); a secret is bound to one Project",
                )
        projects.append(_plain(project))
    return projects


def plan(
    current: Sequence[Mapping[str, Any]], desired: Sequence[Mapping[str, Any]], *, prune: bool
) -> Plan:
    """Deletes of the Projects ``desired`` omits (with ``prune``), then releases of moving
    secrets, then creates and patches for ``desired``; by id order within each group."""
    by_id = {
        project["id"]: _plain(_PROJECT.decode(msgspec.json.encode(project))) for project in current
    }
    wanted = {project["id"]: project for project in desired}
    deletes = [PlanStep("delete", i) for i in sorted(by_id.keys() - wanted.keys()) if prune]
    owner = {secret: project["id"] for project in desired for secret in _secrets(project)}
    releases: list[PlanStep] = []
    moving: set[str] = set()
    for project_id, before in sorted(by_id.items()):
        leaving = {s for s in _secrets(before) if owner.get(s, project_id) != project_id}
        if project_id in wanted and leaving:
            kept = [k for k in before["keys"] if k.get("secret") not in leaving]
            releases.append(PlanStep("release", project_id, {"keys": kept}, ("keys",)))
            moving |= leaving
        elif project_id not in wanted and prune:
            moving |= leaving
    return Plan([*deletes, *releases, *_writes(by_id, wanted)], frozenset(moving))


def _writes(
    by_id: Mapping[str, Mapping[str, Any]], wanted: Mapping[str, Mapping[str, Any]]
) -> list[PlanStep]:
    changes = []
    for project_id, after in sorted(wanted.items()):
        before = by_id.get(project_id)
        if before is None:
            changes.append(PlanStep("create", project_id, dict(after), _differing({}, after)))
            continue
        fields = _differing(before, after)
        if not fields:
            changes.append(PlanStep("unchanged", project_id))
        else:
            changes.append(PlanStep("patch", project_id, {f: after[f] for f in fields}, fields))
    return changes


def _secrets(project: Mapping[str, Any]) -> set[str]:
    """The shared secrets of a Project (a jwt key binds by verifying: it has none)."""
    return {key["secret"] for key in project.get("keys") or () if "secret" in key}


def _plain(project: Project) -> dict[str, Any]:
    """The wire form as plain JSON values (lists, not tuples), comparable with the server's."""
    plain: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(project))
    return plain


def _differing(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(name for name in UPDATABLE if before.get(name) != after.get(name))


def _shown(name: str, value: Any) -> str:
    if name == "keys":
        return f"{len(value or ())} key(s)"
    return msgspec.json.encode(value).decode()


def _bad_file(source: str, message: str) -> MatchmakerError:
    return MatchmakerError(f"{source}: {message}", code="admin.invalid_file")
