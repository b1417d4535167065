"""The effective config: flag > environment > config file > default, with where each came from.

Nothing is read at import time; the caller hands in the flags it parsed and the
environment, and the config file is read here. Every bad value is a
:class:`ConfigError` naming the flag, the variable or the file key and line.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matchmaker.config import ControlLimits, Limits, ServerConfig
from matchmaker.configure.options import (
    ADMIN_OPTIONS,
    CONFIG_OPTION,
    ENV_PREFIX,
    OPTIONS,
    Option,
    option_for_key,
)
from matchmaker.errors import MatchmakerError
from mtcommon import CodedError, key_lines, load_roundtrip

__all__ = [
    "KNOWN_ENV",
    "ConfigError",
    "Effective",
    "liveness_warnings",
    "resolve",
    "unknown_env_warnings",
]

KNOWN_ENV = frozenset(
    name for option in (*OPTIONS, CONFIG_OPTION, *ADMIN_OPTIONS) for name in option.envs
)
"""Every environment variable the ``matchmaker`` command reads."""


class ConfigError(MatchmakerError):
    """A setting that cannot be used: ``config.invalid``, ``config.unknown_key``, ..."""

    code = "config.invalid"


@dataclass(frozen=True, slots=True)
class Effective:
    """The config in force, and per option field where its value came from."""

    config: ServerConfig
    origins: Mapping[str, str]
    config_file: str | None
    warnings: tuple[str, ...]


def resolve(
    flags: Mapping[str, Any], environ: Mapping[str, str], config_flag: str | None = None
) -> Effective:
    """Merge the sources. ``flags`` maps option fields to values given on the command line."""
    config_file = config_flag or environ.get(CONFIG_OPTION.env) or None
    from_file = {} if config_file is None else read_config_file(Path(config_file))
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for option in OPTIONS:
        env_name = next((name for name in option.envs if name in environ), None)
        if option.field in flags:
            values[option.field] = flags[option.field]
            origins[option.field] = f"flag {option.flag}"
        elif env_name is not None:
            values[option.field] = _parse_env(option, env_name, environ[env_name])
            origins[option.field] = f"env {env_name}"
        elif option.field in from_file:
            values[option.field], line = from_file[option.field]
            origins[option.field] = f"file {config_file}:{line}"
        else:
            values[option.field] = option.default
            origins[option.field] = "default"
    config = _build(values)
    _check_together(config, origins)
    warnings = [*unknown_env_warnings(environ), *liveness_warnings(config)]
    return Effective(config, origins, config_file, tuple(warnings))


def read_config_file(path: Path) -> dict[str, tuple[Any, int]]:
    """Option field to ``(value, line)`` for each key of a YAML config file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read the config file {path}: {exc}",
            code="config.unreadable",
            details={"file": str(path)},
        ) from None
    try:
        data = load_roundtrip(text, source=str(path))
    except CodedError as exc:
        raise ConfigError(exc.message, code=exc.code, details=exc.details) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: the config file must be a mapping of setting names to values",
            details={"file": str(path)},
        )
    lines = key_lines(data)
    found: dict[str, tuple[Any, int]] = {}
    for key, raw in data.items():
        line = lines.get(str(key), 0)
        where = f"{path}:{line}"
        option = option_for_key(str(key))
        if option is None:
            hint = _closest(str(key).replace("-", "_"), [o.key for o in OPTIONS])
            raise ConfigError(
                f"{where}: unknown setting {key!r}{hint}",
                code="config.unknown_key",
                details={"file": str(path), "line": line, "key": str(key)},
            )
        if option.field in found:
            raise ConfigError(
                f"{where}: {key!r} repeats a setting given on line {found[option.field][1]}",
                details={"file": str(path), "line": line, "key": str(key)},
            )
        try:
            found[option.field] = (option.kind.from_file(raw), line)
        except ValueError as exc:
            shown = "***" if option.secret else repr(raw)
            raise ConfigError(
                f"{where}: {key} must be {exc}, not {shown}",
                details={"file": str(path), "line": line, "key": str(key)},
            ) from None
    return found


def unknown_env_warnings(environ: Mapping[str, str]) -> list[str]:
    """One warning per ``MATCHMAKER_*`` variable that no option reads, naming the closest."""
    warnings = []
    for name in sorted(environ):
        if name.startswith(ENV_PREFIX) and name not in KNOWN_ENV:
            hint = _closest(name, sorted(KNOWN_ENV))
            warnings.append(f"unknown environment variable {name} is ignored{hint}")
    return warnings


def _parse_env(option: Option, name: str, raw: str) -> Any:
    try:
        return option.kind.parse(raw)
    except ValueError as exc:
        shown = "***" if option.secret else repr(raw)
        raise ConfigError(
            f"environment variable {name} must be {exc}, not {shown}",
            details={"variable": name},
        ) from None


def _check_together(config: ServerConfig, origins: Mapping[str, str]) -> None:
    """The rules between options, each valid alone: refused naming where each came from."""
    limits = config.limits
    if limits.heartbeat_timeout_ms <= limits.heartbeat_interval_ms:
        # Every connection would be dropped between two pings.
        timeout, interval = "limits.heartbeat_timeout_ms", "limits.heartbeat_interval_ms"
        raise ConfigError(
            f"{_where(origins[timeout])}heartbeat_timeout_ms ({limits.heartbeat_timeout_ms}, "
            f"{origins[timeout]}) must be greater than heartbeat_interval_ms "
            f"({limits.heartbeat_interval_ms}, {origins[interval]})",
            details={"key": "heartbeat_timeout_ms"},
        )


def liveness_warnings(config: ServerConfig) -> list[str]:
    """A warning when a connection that dies silently (half-open) is noticed later than a
    dropped client is given to come back: valid, but its peers then wait longer for it than
    for a client that disconnected, with no ``away`` to tell them why."""
    limits = config.limits
    if limits.heartbeat_timeout_ms < limits.resume_grace_ms:
        return []
    return [
        f"heartbeat_timeout_ms ({limits.heartbeat_timeout_ms}) is not below resume_grace_ms "
        f"({limits.resume_grace_ms}): a connection that dies silently is noticed later than "
        "a dropped client is given to resume (see docs/operations.md, Tuning for realtime games)"
    ]


def _where(origin: str) -> str:
    """``path:line: `` for a setting read from the config file, else nothing (the message
    names the flag or variable)."""
    return f"{origin.removeprefix('file ')}: " if origin.startswith("file ") else ""


def _build(values: Mapping[str, Any]) -> ServerConfig:
    groups: dict[str, dict[str, Any]] = {"": {}, "limits": {}, "control": {}}
    for field, value in values.items():
        group, _, name = field.rpartition(".")
        groups[group][name] = value
    return ServerConfig(
        limits=Limits(**groups["limits"]), control=ControlLimits(**groups["control"]), **groups[""]
    )


def _closest(name: str, candidates: list[str]) -> str:
    match = difflib.get_close_matches(name, candidates, n=1, cutoff=0.5)
    return f" (did you mean {match[0]}?)" if match else ""
