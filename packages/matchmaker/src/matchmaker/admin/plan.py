"""``matchmaker admin apply``: what must change for the server to hold the Projects of a file.

Pure functions over plain values, so the plan is the same whether it is
printed (``--dry-run``) or carried out. Projects are compared after
normalisation through the ``Project`` struct, so a file that omits defaults
(``lockdown: false``, ``keys: []``) matches what the server returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from matchmaker.errors import MatchmakerError
from matchmaker.model import Project

__all__ = ["Change", "desired_projects", "plan"]

UPDATABLE = ("displayName", "lockdown", "keys", "policies")
_PROJECT = msgspec.json.Decoder(Project)


@dataclass(frozen=True, slots=True)
class Change:
    """One step: ``body`` is the POST or PATCH body; ``fields`` the fields that differ."""

    action: Literal["create", "patch", "delete", "unchanged"]
    project_id: str
    body: dict[str, Any] | None = None
    fields: tuple[str, ...] = ()

    def describe(self, before: Mapping[str, Any] | None) -> list[str]:
        """Diff lines; secrets are never printed, only how many keys there are."""
        sign = {"create": "+", "delete": "-", "patch": "~", "unchanged": "="}[self.action]
        lines = [f"{sign} {self.project_id}"]
        for name in self.fields:
            old = None if before is None else before.get(name)
            new = None if self.body is None else self.body.get(name)
            lines.append(f"    {name}: {_shown(name, old)} -> {_shown(name, new)}")
        return lines


def desired_projects(document: Any, source: str) -> list[dict[str, Any]]:
    """The normalised Projects of an apply file (``projects:`` list in the /admin body shape)."""
    if not isinstance(document, dict) or not isinstance(document.get("projects"), list):
        raise _bad_file(source, "the file must be a mapping with a 'projects:' list")
    if extra := sorted(set(document) - {"projects"}):
        raise _bad_file(source, f"unknown top-level key {extra[0]!r} (only 'projects')")
    seen: set[str] = set()
    projects = []
    for i, item in enumerate(document["projects"]):
        try:
            project = _PROJECT.decode(msgspec.json.encode(item))
        except (msgspec.DecodeError, TypeError) as exc:
            raise _bad_file(source, f"projects[{i}]: {exc}") from None
        if project.id in seen:
            raise _bad_file(source, f"projects[{i}]: the id {project.id!r} appears twice")
        seen.add(project.id)
        projects.append(_plain(project))
    return projects


def plan(
    current: Sequence[Mapping[str, Any]], desired: Sequence[Mapping[str, Any]], *, prune: bool
) -> list[Change]:
    """Creates and patches for ``desired``, deletes of the rest with ``prune``, by id order."""
    by_id = {
        project["id"]: _plain(_PROJECT.decode(msgspec.json.encode(project))) for project in current
    }
    wanted = {project["id"]: project for project in desired}
    changes = []
    for project_id in sorted(by_id.keys() | wanted.keys()):
        before, after = by_id.get(project_id), wanted.get(project_id)
        if after is None:
            if prune:
                changes.append(Change("delete", project_id))
            continue
        if before is None:
            changes.append(Change("create", project_id, dict(after), _differing({}, after)))
            continue
        fields = _differing(before, after)
        if not fields:
            changes.append(Change("unchanged", project_id))
        else:
            changes.append(Change("patch", project_id, {f: after[f] for f in fields}, fields))
    return changes


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
