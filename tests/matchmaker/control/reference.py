"""A reference model of the control plane, written from docs/control-plane.md alone.

The property and storm tests judge the server with it instead of with the
implementation's own validation: :func:`project_violations` states every documented
rule of a stored Project, and :class:`ReferenceStore` predicts the status of a request
and the Projects stored afterwards. Where the docs leave the outcome open (which of two
errors comes first, query parameters, paths outside ``/admin/projects``) the model
says so: it accepts either error, or follows the server, rather than guess.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

MODES = frozenset({"auto", "claim", "mutual", "propose", "delegated"})
PROJECT_FIELDS = frozenset({"id", "displayName", "lockdown", "keys", "policies"})
POLICY_FIELDS = frozenset({"name", "mode", "groupSize", "default", "filter"})
JSON_TYPES = frozenset({"application/json"})
PATCH_TYPES = frozenset({"application/json", "application/merge-patch+json"})
MAX_GROUP = 64  # --max-session-members' default
RESERVED_ID = "default"
MAX_ATTRIBUTES = 32  # --max-attributes' default
MAX_VALUE_CHARS = 256  # --max-attribute-value-chars' default
ATTRIBUTE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class Unspecified(Exception):
    """The docs do not decide this request's outcome."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_filter_value(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int | bool)  # any JSON number: ints of any size too


def _policy_violations(policy: object, where: str) -> list[str]:
    if not isinstance(policy, dict):
        return [f"{where} is not an object"]
    problems = [f"{where}.{name}: unknown field" for name in policy.keys() - POLICY_FIELDS]
    for name in ("name", "mode", "groupSize"):
        if name not in policy:
            problems.append(f"{where}.{name}: missing")
    name = policy.get("name", "x")
    if not isinstance(name, str) or not name:
        problems.append(f"{where}.name: not a non-empty string")
    if policy.get("mode", "auto") not in MODES:
        problems.append(f"{where}.mode: not a mode")
    size = policy.get("groupSize", 1)
    if not _is_int(size) or not 1 <= size <= MAX_GROUP:
        problems.append(f"{where}.groupSize: not an integer in 1..{MAX_GROUP}")
    if not isinstance(policy.get("default", False), bool):
        problems.append(f"{where}.default: not a boolean")
    filter_ = policy.get("filter")
    if filter_ is not None and not (
        isinstance(filter_, dict) and all(_check_filter_value(v) for v in filter_.values())
    ):
        problems.append(f"{where}.filter: not a map of strings, numbers and booleans")
    elif filter_:
        problems.extend(_filter_rule_violations(filter_, policy.get("mode"), where))
    return problems


def _filter_rule_violations(filter_: dict[str, Any], mode: object, where: str) -> list[str]:
    """The data plane's filter rules, as docs/control-plane.md states them for policies."""
    problems = []
    if mode in MODES and mode != "auto":
        problems.append(f"{where}.filter: only on mode auto")
    if len(filter_) > MAX_ATTRIBUTES:
        problems.append(f"{where}.filter: more than {MAX_ATTRIBUTES} keys")
    for key, value in filter_.items():
        if not ATTRIBUTE_NAME.fullmatch(key):
            problems.append(f"{where}.filter.{key}: not an attribute name")
        if isinstance(value, str) and value != "@self" and len(value) > MAX_VALUE_CHARS:
            problems.append(f"{where}.filter.{key}: longer than {MAX_VALUE_CHARS} characters")
    return problems


def project_violations(project: object, management_key: str) -> list[str]:
    """Every documented rule a (full, defaults-filled or not) Project breaks."""
    if not isinstance(project, dict):
        return ["not an object"]
    problems = [f"{name}: unknown field" for name in project.keys() - PROJECT_FIELDS]
    project_id = project.get("id")
    if not isinstance(project_id, str) or not 1 <= len(project_id) <= 128:
        problems.append("id: not a string of 1 to 128 characters")
    elif any(ord(c) < 0x20 or c == "\x7f" for c in project_id):
        problems.append("id: control character")
    if not isinstance(project.get("displayName"), str | None):
        problems.append("displayName: not a string or null")
    if not isinstance(project.get("lockdown", False), bool):
        problems.append("lockdown: not a boolean")
    keys = project.get("keys", [])
    if not isinstance(keys, list):
        return [*problems, "keys: not an array"]
    secrets = []
    for i, key in enumerate(keys):
        if not isinstance(key, dict) or set(key) != {"type", "secret"}:
            problems.append(f"keys[{i}]: not exactly type and secret")
            continue
        if key["type"] != "shared-secret":
            problems.append(f"keys[{i}].type: not shared-secret")
        if not isinstance(key["secret"], str) or not key["secret"]:
            problems.append(f"keys[{i}].secret: not a non-empty string")
        elif key["secret"] == management_key:
            problems.append(f"keys[{i}].secret: the management key")
        secrets.append(key["secret"])
    if len(secrets) != len({json.dumps(s) for s in secrets}):
        problems.append("keys: a secret appears twice")
    policies = project.get("policies", [])
    if not isinstance(policies, list):
        return [*problems, "policies: not an array"]
    for i, policy in enumerate(policies):
        problems += _policy_violations(policy, f"policies[{i}]")
    if not problems:
        names = [policy["name"] for policy in policies]
        if len(names) != len(set(names)):
            problems.append("policies: a name appears twice")
        if sum(policy.get("default", False) for policy in policies) > 1:
            problems.append("policies: more than one default")
    return problems


def canonical(project: dict[str, Any]) -> dict[str, Any]:
    """A Project with its defaults filled in and a policy's defaults left out, as stored."""
    policies = [
        {k: v for k, v in policy.items() if (k, v) not in (("default", False), ("filter", None))}
        for policy in project.get("policies", [])
    ]
    return {
        "id": project["id"],
        "displayName": project.get("displayName"),
        "lockdown": project.get("lockdown", False),
        "keys": list(project.get("keys", [])),
        "policies": policies,
    }


def _has_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


@dataclass
class Prediction:
    """The statuses the docs allow, and the stored Project after a success (None: deleted)."""

    statuses: set[int]
    after: dict[str, Any] | None = None


@dataclass
class ReferenceStore:
    """The Projects the server should hold, by id, and the rules that change them."""

    management_key: str
    projects: dict[str, dict[str, Any]] = field(default_factory=dict)

    def listed(self) -> list[dict[str, Any]]:
        """What ``GET /admin/projects`` should answer: every Project, by code point order."""
        return [self.projects[key] for key in sorted(self.projects)]

    def _secrets_elsewhere(self, project: dict[str, Any]) -> bool:
        ours = {key["secret"] for key in project["keys"]}
        return any(
            key["secret"] in ours
            for other in self.projects.values()
            if other["id"] != project["id"]
            for key in other["keys"]
        )

    def predict(
        self, method: str, path: str, body: object, content_type: str | None, query: dict[str, str]
    ) -> Prediction:
        """The documented outcome of one authorised request; ``body`` is the decoded JSON,
        or ``bytes`` that may not be JSON. Raises :class:`Unspecified` when the docs are
        silent."""
        if query or not path.startswith("/admin/projects"):
            raise Unspecified("query parameters or a path outside /admin/projects")
        if path == "/admin/projects":
            if method in ("GET", "HEAD"):
                return Prediction({200})
            if method != "POST":
                return Prediction({405})
            return self._post(body, content_type)
        project_id = path.removeprefix("/admin/projects/")
        if not project_id or "/" in project_id or project_id in (".", ".."):
            raise Unspecified("an id the router may not see as one segment")
        if any(ord(char) < 0x20 or ord(char) == 0x7F for char in project_id):
            # No Project can have such an id; whether the route matches it is not documented.
            raise Unspecified("an id with a control character")
        if method in ("GET", "HEAD"):
            return Prediction({200} if project_id in self.projects else {404})
        if method == "DELETE":
            return Prediction({204} if project_id in self.projects else {404})
        if method != "PATCH":
            return Prediction({405})
        return self._patch(project_id, body, content_type)

    def _decoded(self, body: object) -> object:
        if isinstance(body, bytes):
            try:
                body = json.loads(body)
            except (ValueError, RecursionError):
                return _MALFORMED
            raise Unspecified("generated bytes that happen to be JSON")
        return _MALFORMED if _has_surrogate(body) else body

    def _post(self, body: object, content_type: str | None) -> Prediction:
        if content_type not in JSON_TYPES:
            return Prediction({415})
        value = self._decoded(body)
        if value is _MALFORMED or project_violations(value, self.management_key):
            return Prediction({400})
        assert isinstance(value, dict)
        project = canonical(value)
        if project["id"] == RESERVED_ID:
            return Prediction({400})
        if project["id"] in self.projects or self._secrets_elsewhere(project):
            return Prediction({409})
        return Prediction({201}, project)

    def _patch(self, project_id: str, body: object, content_type: str | None) -> Prediction:
        errors: set[int] = set()
        if content_type not in PATCH_TYPES:
            errors.add(415)
        if project_id not in self.projects:
            errors.add(404)
        value = self._decoded(body)
        if (
            value is _MALFORMED
            or not isinstance(value, dict)
            or value.keys() - PROJECT_FIELDS
            or value.get("id", project_id) != project_id
            or any(value.get(name, 0) is None for name in ("lockdown", "keys", "policies"))
        ):
            errors.add(400)
        elif project_id not in self.projects and project_violations(
            {**value, "id": project_id}, self.management_key
        ):
            errors.add(400)  # a body wrong on its own: refused before or after the lookup
        if errors:
            return Prediction(errors)
        assert isinstance(value, dict)
        merged = {**self.projects[project_id], **value, "id": project_id}
        if project_violations(merged, self.management_key):
            return Prediction({400})
        project = canonical(merged)
        if self._secrets_elsewhere(project):
            return Prediction({409})
        return Prediction({200}, project)

    def apply(self, path: str, prediction: Prediction, method: str) -> None:
        """Record a write the server acknowledged as the model predicted it."""
        if method == "DELETE":
            del self.projects[path.removeprefix("/admin/projects/")]
        elif prediction.after is not None:
            self.projects[prediction.after["id"]] = prediction.after


_MALFORMED = object()
