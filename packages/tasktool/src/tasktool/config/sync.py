"""The ``sync.sources`` entries of the config file, checked and typed.

Each entry names an external tracker to copy tasks from. Which kind of tracker
(``github`` or ``jira``) an entry is: an explicit ``type`` key wins; otherwise
the name decides when it mentions exactly one kind (the seed names sources
after their tracker, ``github``, ``jira-web``); otherwise ``base_url`` does
(``api.github.com``, ``*.atlassian.net``, a host or path mentioning ``github``
or ``jira``). An entry that none of these classify is a ``sync.config.type``
error naming it.

The loader turns every problem into an error diagnostic (``validate`` shows
them); only ``sync`` refuses to run under them, other commands do not care.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

import msgspec

from tasktool.model.diagnostics import Diagnostic
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Priority, Status

SourceKind = Literal["github", "jira"]
KINDS: tuple[SourceKind, ...] = ("github", "jira")
GITHUB_API = "https://api.github.com"
GITHUB_STATES = ("open", "closed", "all")
_ENTRY_KEYS = frozenset(
    {"name", "type", "project", "base_url", "token_env", "user_env", "output_dir"}
    | {"field_map", "filters"}
)
_FIELD_MAP_KEYS = frozenset({"status", "priority", "labels_to_tags", "assignee_to_owner"})
_FILTER_KEYS: dict[SourceKind, frozenset[str]] = {
    "github": frozenset({"state"}),
    "jira": frozenset({"jql"}),
}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_GITHUB_PROJECT = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_JIRA_PROJECT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class FieldMap(msgspec.Struct, frozen=True, kw_only=True):
    """How external fields become task fields."""

    status: dict[str, str] = msgspec.field(default_factory=dict)
    priority: dict[str, str] = msgspec.field(default_factory=dict)
    labels_to_tags: bool = False
    assignee_to_owner: bool = False


class SourceConfig(msgspec.Struct, frozen=True, kw_only=True):
    """One checked ``sync.sources`` entry; ``output_dir`` is absolute."""

    name: str
    kind: SourceKind
    project: str
    base_url: str
    output_dir: str
    token_env: str | None = None
    user_env: str | None = None
    field_map: FieldMap = msgspec.field(default_factory=FieldMap)
    state: str | None = None  # GitHub filters.state
    jql: str | None = None  # Jira filters.jql


def _error(code: str, message: str) -> TaskToolError:
    return TaskToolError(message, code=code)


def _text(entry: Mapping[str, Any], key: str, label: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float) or not str(value):
        raise _error(
            "sync.config.value", f"{label}: {key} must be a non-empty string, got {value!r}"
        )
    return str(value)


def _mentions(text: str) -> set[SourceKind]:
    lowered = text.lower()
    found: set[SourceKind] = {kind for kind in KINDS if kind in lowered}
    if "atlassian" in lowered:
        found.add("jira")
    return found


def infer_kind(entry: Mapping[str, Any], label: str) -> SourceKind:
    """The entry's source kind: ``type``, else its name, else its ``base_url``."""
    explicit = entry.get("type")
    if explicit is not None:
        if explicit not in KINDS:
            raise _error(
                "sync.config.type", f"{label}: type must be github or jira, got {explicit!r}"
            )
        kind: SourceKind = explicit
        return kind
    for clue in (entry.get("name"), entry.get("base_url")):
        found = _mentions(clue) if isinstance(clue, str) else set()
        if len(found) == 1:
            return found.pop()
    raise _error(
        "sync.config.type",
        f"{label}: cannot tell whether it is a github or a jira source from its name or "
        "base_url; add 'type: github' or 'type: jira'",
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _base_url(value: str, label: str) -> str:
    """An ``https`` URL (``http`` only to this machine: a token must not cross a network
    in clear text)."""
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise _error(
            "sync.config.base_url", f"{label}: base_url must be an http(s) URL, got {value!r}"
        )
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise _error(
            "sync.config.base_url",
            f"{label}: base_url {value!r} is plain http; use https (credentials would be "
            "sent in clear text)",
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise _error(
            "sync.config.base_url",
            f"{label}: base_url must not carry credentials, a query or a fragment",
        )
    return value.rstrip("/")


def _env_name(entry: Mapping[str, Any], key: str, label: str) -> str | None:
    name = _text(entry, key, label)
    if name is not None and not _ENV_NAME.match(name):
        raise _error(
            "sync.config.value",
            f"{label}: {key} names an environment variable (like GITHUB_TOKEN), got {name!r}",
        )
    return name


def _mapping(value: Any, allowed: tuple[str, ...], what: str, label: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _error("sync.config.field_map", f"{label}: field_map.{what} must be a mapping")
    result: dict[str, str] = {}
    for key, target in value.items():
        if target not in allowed:
            raise _error(
                "sync.config.field_map",
                f"{label}: field_map.{what} maps {key!r} to {target!r}; "
                f"expected one of: {', '.join(allowed)}",
            )
        result[str(key)] = str(target)
    return result


def _field_map(value: Any, label: str) -> FieldMap:
    if value is None:
        return FieldMap()
    if not isinstance(value, dict):
        raise _error("sync.config.field_map", f"{label}: field_map must be a mapping")
    _refuse_unknown(value, _FIELD_MAP_KEYS, f"{label}: field_map")
    flags = {}
    for key in ("labels_to_tags", "assignee_to_owner"):
        flag = value.get(key, False)
        if not isinstance(flag, bool):
            raise _error("sync.config.field_map", f"{label}: field_map.{key} must be true or false")
        flags[key] = flag
    return FieldMap(
        status=_mapping(value.get("status"), tuple(Status), "status", label),
        priority=_mapping(value.get("priority"), tuple(Priority), "priority", label),
        **flags,
    )


def _refuse_unknown(entry: Mapping[str, Any], allowed: frozenset[str], label: str) -> None:
    unknown = sorted(str(key) for key in entry if key not in allowed)
    if unknown:
        raise _error(
            "sync.config.unknown_key",
            f"{label}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})",
        )


def _filters(value: Any, kind: SourceKind, label: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _error("sync.config.filters", f"{label}: filters must be a mapping")
    _refuse_unknown(value, _FILTER_KEYS[kind], f"{label}: filters")
    result = {}
    for key, item in value.items():
        if not isinstance(item, str) or not item.strip():
            raise _error(
                "sync.config.filters", f"{label}: filters.{key} must be a non-empty string"
            )
        result[str(key)] = item
    state = result.get("state")
    if state is not None and state not in GITHUB_STATES:
        raise _error(
            "sync.config.filters",
            f"{label}: filters.state must be one of {', '.join(GITHUB_STATES)}",
        )
    return result


def _entry(entry: Any, index: int, base_dir: str) -> SourceConfig:
    label = f"sync.sources[{index}]"
    if not isinstance(entry, dict):
        raise _error("sync.config.entry", f"{label} must be a mapping")
    name = _text(entry, "name", label)
    if name is None:
        raise _error("sync.config.missing", f"{label}: name is required")
    label = f"sync source {name!r}"
    _refuse_unknown(entry, _ENTRY_KEYS, label)
    kind = infer_kind(entry, label)
    output_dir = _text(entry, "output_dir", label)
    if output_dir is None:
        raise _error("sync.config.missing", f"{label}: output_dir is required")
    project = _text(entry, "project", label)
    base_url = _text(entry, "base_url", label)
    token_env = _env_name(entry, "token_env", label)
    user_env = _env_name(entry, "user_env", label)
    if kind == "github":
        if project is None or not _GITHUB_PROJECT.match(project):
            raise _error(
                "sync.config.project", f"{label}: project must be owner/repository, got {project!r}"
            )
    else:
        missing = [
            key
            for key, value in (
                ("base_url", base_url),
                ("project", project),
                ("user_env", user_env),
                ("token_env", token_env),
            )
            if value is None
        ]
        if missing:
            raise _error(
                "sync.config.missing", f"{label}: a jira source needs {', '.join(missing)}"
            )
        assert project is not None
        if not _JIRA_PROJECT.match(project):
            raise _error(
                "sync.config.project", f"{label}: project must be a Jira project key like PROJ"
            )
    filters = _filters(entry.get("filters"), kind, label)
    return SourceConfig(
        name=name,
        kind=kind,
        project=project,
        base_url=_base_url(base_url or GITHUB_API, label),
        output_dir=os.path.normpath(os.path.join(base_dir, os.path.expanduser(output_dir))),
        token_env=token_env,
        user_env=user_env,
        field_map=_field_map(entry.get("field_map"), label),
        state=filters.get("state"),
        jql=filters.get("jql"),
    )


def _parse(section: Any, base_dir: str) -> tuple[tuple[SourceConfig, ...], list[TaskToolError]]:
    """The entries that are usable, and one error per entry (or section) that is not."""
    if section is None:
        return (), []
    if not isinstance(section, dict):
        return (), [
            _error("sync.config.type", "the sync section must be a mapping with a 'sources' list")
        ]
    unknown = sorted(str(key) for key in section if key != "sources")
    if unknown:
        return (), [
            _error(
                "sync.config.unknown_key", f"sync: unknown key {unknown[0]!r} (allowed: sources)"
            )
        ]
    entries = section.get("sources")
    if entries is None:
        return (), []
    if not isinstance(entries, list):
        return (), [_error("sync.config.type", "sync.sources must be a list")]
    sources: list[SourceConfig] = []
    errors: list[TaskToolError] = []
    for index, entry in enumerate(entries):
        try:
            source = _entry(entry, index, base_dir)
        except TaskToolError as exc:
            errors.append(exc)
            continue
        if any(other.name == source.name for other in sources):
            errors.append(
                _error(
                    "sync.config.duplicate",
                    f"sync source name {source.name!r} is used more than once",
                )
            )
            continue
        sources.append(source)
    return tuple(sources), errors


def parse_sources(section: Any, base_dir: str) -> tuple[SourceConfig, ...]:
    """The checked entries of the ``sync`` section (``output_dir`` relative to ``base_dir``,
    the config file's directory); the first problem raises ``sync.config.*``."""
    sources, errors = _parse(section, base_dir)
    if errors:
        raise errors[0]
    return sources


def sync_diagnostics(section: Any, base_dir: str, file: str | None) -> list[Diagnostic]:
    """Every problem of the ``sync`` section as an error diagnostic (shown by ``validate``;
    only ``sync`` refuses to run under them)."""
    _, errors = _parse(section, base_dir)
    return [
        Diagnostic(severity="error", code=error.code, message=error.message, file=file)
        for error in errors
    ]


def _credential(source: SourceConfig, variable: str, what: str, env: Mapping[str, str]) -> str:
    value = env.get(variable, "").strip()
    where = f"sync source {source.name!r}: the environment variable {variable}"
    if not value:
        raise TaskToolError(f"{where} is not set (it holds the {what})", code="sync.env_missing")
    # A line break or control character would end up in an HTTP header, whose error
    # messages quote it: refuse it here, without showing it.
    if not value.isprintable() or (what == "API token" and any(c.isspace() for c in value)):
        raise TaskToolError(
            f"{where} holds characters no {what} has (blanks, line breaks, control characters)",
            code="sync.env_invalid",
        )
    return value


def read_credentials(source: SourceConfig, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """``(user, token)`` from the variables the source names: ``sync.env_missing`` when one
    is named but unset or empty, ``sync.env_invalid`` when it cannot be a credential. The
    values are never part of any message."""
    user = (
        None if source.user_env is None else _credential(source, source.user_env, "user name", env)
    )
    token = (
        None
        if source.token_env is None
        else _credential(source, source.token_env, "API token", env)
    )
    return user, token


__all__ = [
    "GITHUB_API",
    "FieldMap",
    "SourceConfig",
    "SourceKind",
    "infer_kind",
    "parse_sources",
    "read_credentials",
    "sync_diagnostics",
]
