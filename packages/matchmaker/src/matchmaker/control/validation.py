"""Turn request bytes into valid Projects, or into ``request.*`` / ``project.*`` errors.

msgspec checks types, required and unknown fields and the per-field
constraints declared in ``matchmaker.model``; the rules spanning fields
(unique policy names, one default, the reserved id, and each key type's
rules from :mod:`matchmaker.control.keys`) are checked here on the whole
result, so a PATCH is validated after merging. So are the name rule for
policy names and the secret length cap: the store decodes Projects with the
same Structs, and a Project stored before those rules must still load.
A body that repeats a key in one object is refused (:mod:`.uniquekeys`).
"""

from __future__ import annotations

import re
from typing import TypeVar

import msgspec
from msgspec import UNSET

from matchmaker.config import ControlLimits, Limits
from matchmaker.control.keys import check_keys
from matchmaker.control.uniquekeys import check_unique_keys
from matchmaker.control.wire import ProjectPatch
from matchmaker.errors import MatchmakerError
from matchmaker.model import (
    RESERVED_PROJECT_ID,
    MatchmakingPolicy,
    Project,
    name_problem,
)
from matchmaker.rules.filters import filter_problem, group_problem
from matchmaker.rules.teams import team_problem

T = TypeVar("T")

_PROJECT = msgspec.json.Decoder(Project)
_POLICY = msgspec.json.Decoder(MatchmakingPolicy)
_PATCH = msgspec.json.Decoder(ProjectPatch)
_AT = re.compile(r" - at `(?P<path>[^`]*)`$")
_NAMED = re.compile(r"field `(?P<name>[^`]*)`")


def decode_project(body: bytes, limits: Limits, control: ControlLimits) -> Project:
    """A new Project from a ``POST`` body, fully validated."""
    project = _decode(_PROJECT, body)
    if project.id == RESERVED_PROJECT_ID:
        raise MatchmakerError(
            f"the Project id {RESERVED_PROJECT_ID!r} is reserved and cannot be created",
            code="project.reserved_id",
            details={"field": "$.id"},
        )
    check_project(project, limits, control)
    return project


def decode_policy(body: bytes, limits: Limits) -> MatchmakingPolicy:
    """One policy object as a Project's ``policies`` list holds it, checked by the rules
    ``/admin`` applies to each policy (the same decoder and checks, so the same coded
    errors; their paths start at the policy, ``$``): ``matchmaker simulate`` reads its
    policy files with it."""
    policy = _decode(_POLICY, body)
    _check_policy("$", policy, limits)
    return policy


def decode_patch(body: bytes, project_id: str) -> ProjectPatch:
    """A ``PATCH`` body; its ``id``, if present, must equal the path's."""
    patch = _decode(_PATCH, body)
    if patch.id is not UNSET and patch.id != project_id:
        raise invalid("$.id", "the id cannot be changed (it differs from the path)")
    return patch


def apply_patch(
    project: Project, patch: ProjectPatch, limits: Limits, control: ControlLimits
) -> Project:
    """The merged Project, validated as a whole (so an invalid PATCH changes nothing)."""
    changes = {
        name: value
        for name in ("display_name", "lockdown", "keys", "policies")
        if (value := getattr(patch, name)) is not UNSET
    }
    merged = msgspec.structs.replace(project, **changes)
    check_project(merged, limits, control)
    return merged


def check_project(project: Project, limits: Limits, control: ControlLimits) -> None:
    """The cross-field rules msgspec cannot express, and the per-Project limits."""
    _check_count("policies", len(project.policies), control.max_policies_per_project)
    _check_count("keys", len(project.keys), control.max_keys_per_project)
    names: dict[str, int] = {}
    default_at: int | None = None
    for i, policy in enumerate(project.policies):
        _check_policy(f"$.policies[{i}]", policy, limits)
        if policy.name in names:
            raise invalid(
                f"$.policies[{i}].name",
                f"duplicate policy name {policy.name!r} (also policies[{names[policy.name]}])",
            )
        names[policy.name] = i
        if policy.default:
            if default_at is not None:
                raise invalid(
                    f"$.policies[{i}].default",
                    f"at most one policy may be the default (policies[{default_at}] already is)",
                )
            default_at = i
    check_keys(project, limits, invalid)


def _check_policy(at: str, policy: MatchmakingPolicy, limits: Limits) -> None:
    """The rules of one policy on its own: its name, its sizes, its filter."""
    if (broken := name_problem(policy.name)) is not None:
        raise invalid(f"{at}.name", broken)
    if policy.group_size > limits.max_session_members:
        raise invalid(
            f"{at}.groupSize",
            f"must be at most {limits.max_session_members} (the server's max session size)",
        )
    problem = filter_problem(policy.filter or {}, policy.mode, limits)
    if problem is not None:
        raise invalid(problem.path(f"{at}.filter"), problem.rule)
    sizes = (policy.min_group_size, policy.fill_timeout_ms)
    problem = group_problem(policy.mode, policy.group_size, *sizes) or team_problem(
        policy.mode,
        policy.group_size,
        policy.min_group_size,
        teams=policy.teams,
        balance=policy.balance,
        regions=policy.regions,
    )
    if problem is not None:
        raise invalid(problem.path(at), problem.rule)


def _check_count(field: str, count: int, limit: int) -> None:
    if count > limit:
        name = f"max_{field}_per_project"
        raise MatchmakerError(
            f"a Project may have at most {limit} {field} (--{name.replace('_', '-')}); "
            f"this one has {count}",
            code="project.limit",
            details={"field": f"$.{field}", "limit": name, "max": limit},
        )


def invalid(field: str, rule: str) -> MatchmakerError:
    """A ``request.invalid`` error naming the field (a JSON path) and the rule broken."""
    return MatchmakerError(
        f"{rule} - at `{field}`", code="request.invalid", details={"field": field}
    )


def _decode(decoder: msgspec.json.Decoder[T], body: bytes) -> T:
    try:
        decoded = decoder.decode(body)
    except msgspec.ValidationError as exc:
        message = str(exc)
        at = _AT.search(message)
        field = at["path"] if at else "$"
        if named := _NAMED.search(message):  # unknown or missing field: name it in the path
            field = f"{field}.{named['name']}"
        raise MatchmakerError(message, code="request.invalid", details={"field": field}) from None
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        # msgspec reports invalid UTF-8 inside a string as a UnicodeDecodeError.
        raise MatchmakerError(
            f"the body is not valid JSON: {exc}", code="request.malformed_json"
        ) from None
    check_unique_keys(body)
    return decoded
