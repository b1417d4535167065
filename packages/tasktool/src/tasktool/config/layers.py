"""Collecting raw values per key from the file, the environment and the flags.

Each layer yields ``(key, raw value, source)``; :mod:`tasktool.config.loader`
keeps the highest layer per key and converts it. Unknown keys are reported
here, while the file is walked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import msgspec

from tasktool.config.discovery import HOME_CONFIG_ENV
from tasktool.config.options import (
    OPTIONS,
    OPTIONS_BY_KEY,
    OTHER_SECTIONS,
    REPORTED_AS_UNKNOWN,
    SECTIONS,
    TASK_DIR_ALIAS,
    TASK_DIR_ALIAS_ENV,
    Source,
)
from tasktool.model.diagnostics import Diagnostic

__all__ = ["DIR_VARIABLES", "Raw", "env_diagnostics", "env_layer", "file_layer"]


class Raw(msgspec.Struct, frozen=True):
    """One key's value as a layer holds it, before conversion."""

    value: Any
    source: Source
    origin: str | None = None  # the file or variable it came from, for messages


def _unknown(key: str, file: str, *, next_section: bool = False) -> Diagnostic:
    if next_section:
        return Diagnostic(
            severity="error",
            code="config.next.unknown_key",
            message=f"unknown key {key!r} in the next section (only 'unphased' is allowed)",
            file=file,
        )
    return Diagnostic(
        severity="warning",
        code="config.unknown_key",
        message=f"unknown config key {key!r}",
        file=file,
    )


def file_layer(
    data: Mapping[str, Any], duplicates: tuple[str, ...], file: str
) -> tuple[dict[str, Raw], list[Diagnostic]]:
    """Values the file sets, keyed by dotted option key, and the problems of its shape."""
    values: dict[str, Raw] = {}
    problems: list[Diagnostic] = []
    for key, value in data.items():
        if key in SECTIONS:
            if key == "id" and "id" in duplicates:
                continue  # more than one id block: the seed says ignore it, silently
            if key == "next" and value is not None and not isinstance(value, dict):
                problems.append(
                    Diagnostic(
                        severity="error",
                        code="config.next.type",
                        message="the next section must be a mapping (next: {unphased: current})",
                        file=file,
                    )
                )
                continue
            if value is None:
                continue
            if not isinstance(value, dict):
                problems.append(
                    Diagnostic(
                        severity="error",
                        code="config.type",
                        message=f"{key}: expected a mapping, got {type(value).__name__}",
                        file=file,
                    )
                )
                continue
            for sub_key, sub_value in value.items():
                dotted = f"{key}.{sub_key}"
                if dotted in OPTIONS_BY_KEY:
                    values[dotted] = Raw(sub_value, "file", file)
                else:
                    problems.append(_unknown(dotted, file, next_section=key == "next"))
        elif key == TASK_DIR_ALIAS:
            values["dir"] = Raw(value, "file", file)
            if "dir" in data:
                problems.append(
                    Diagnostic(
                        severity="warning",
                        code="config.both_dirs",
                        message=f"both dir and task-dir are set; task-dir ({value!r}) is used "
                        f"and dir ({data['dir']!r}) is ignored",
                        file=file,
                    )
                )
        elif key in OPTIONS_BY_KEY:
            if key == "dir" and "dir" in values:
                continue  # task-dir was given too; it wins
            values[key] = Raw(value, "file", file)
            if key in REPORTED_AS_UNKNOWN:
                problems.append(_unknown(key, file))
        elif key not in OTHER_SECTIONS:
            problems.append(_unknown(key, file))
    return values, problems


#: The seed's one rule for the task directory variables, read by the layer and by its
#: diagnostics alike: each applies only when the loaded file has its key (the first wins).
DIR_VARIABLES: Mapping[str, str] = {TASK_DIR_ALIAS_ENV: TASK_DIR_ALIAS, "TASKTOOL_DIR": "dir"}


def env_layer(env: Mapping[str, str], file_keys: Mapping[str, Any]) -> Iterator[tuple[str, Raw]]:
    """Scalar keys set by ``TASKTOOL_*`` variables (an empty variable counts as unset).

    The task directory variables only apply when the loaded file has the matching
    key: ``TASKTOOL_DIR`` needs ``dir``, ``TASKTOOL_TASK_DIR`` needs ``task-dir``.
    """
    for option in OPTIONS:
        if not option.scalar:
            continue
        names = [option.env_name]
        if option.key == "dir":
            names = [name for name, needs in DIR_VARIABLES.items() if needs in file_keys]
        for name in names:
            text = env.get(name, "")
            if text:
                yield option.key, Raw(text, "env", name)
                break


def env_diagnostics(env: Mapping[str, str], file_keys: Mapping[str, Any]) -> list[Diagnostic]:
    """``TASKTOOL_*`` variables that had no effect: matching no key the environment can
    set, or a task directory variable the seed's rule ignores (``TASKTOOL_DIR`` needs a
    ``dir`` key in the file, ``TASKTOOL_TASK_DIR`` a ``task-dir`` key)."""
    settable = {option.env_name for option in OPTIONS if option.scalar} - set(DIR_VARIABLES)
    settable.add(HOME_CONFIG_ENV)
    problems: list[Diagnostic] = []
    for name in sorted(env):
        if not name.startswith("TASKTOOL_") or not env[name] or name in settable:
            continue
        needs = DIR_VARIABLES.get(name)
        if needs is not None:
            if needs in file_keys:
                continue
            message = (
                f"{name} is ignored: the config file has no {needs!r} key (a task "
                f"directory variable applies only to the key the file uses); use --task-dir"
            )
            code = "config.ignored_env"
        else:
            message = f"{name} matches no setting the environment can set; it has no effect"
            code = "config.unknown_env"
        problems.append(Diagnostic(severity="warning", code=code, message=message, file=name))
    return problems
