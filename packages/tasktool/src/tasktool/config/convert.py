"""Turning one key's raw value into its typed setting, with the seed's rules as diagnostics.

Every function returns ``(value, diagnostics)``; a value of :data:`INVALID`
means the default stays in effect.
"""

from __future__ import annotations

import os
import re
from typing import Any, Final

from tasktool.config.layers import Raw
from tasktool.config.options import Option, parse_env_bool
from tasktool.model.config import Phase, Scope
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.vocabulary import is_date

__all__ = [
    "INVALID",
    "Converted",
    "convert_effort",
    "convert_phases",
    "convert_scalar",
    "convert_scopes",
    "convert_strlist",
]

INVALID: Final = object()
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
Converted = tuple[Any, list[Diagnostic]]


def _error(code: str, message: str, raw: Raw) -> Diagnostic:
    file = raw.origin if raw.source == "file" else None
    return Diagnostic(severity="error", code=code, message=message, file=file)


def _warning(code: str, message: str, raw: Raw) -> Diagnostic:
    file = raw.origin if raw.source == "file" else None
    return Diagnostic(severity="warning", code=code, message=message, file=file)


def _where(option: Option, raw: Raw) -> str:
    return f"{raw.origin}" if raw.source == "env" else option.key


def _type_error(option: Option, raw: Raw, expected: str) -> Converted:
    code = "config.env.invalid" if raw.source == "env" else "config.type"
    if option.key == "next.unphased":
        code = "config.next.unphased"
    return INVALID, [
        _error(code, f"{_where(option, raw)}: expected {expected}, got {raw.value!r}", raw)
    ]


def convert_scalar(option: Option, raw: Raw, base_dir: str) -> Converted:
    """Convert a ``path``/``str``/``bool``/``int``/``choice`` value from any layer."""
    value = raw.value
    from_text = raw.source != "file" and isinstance(value, str)
    if option.kind in {"path", "str", "choice"}:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return _type_error(option, raw, "a string")
        text = str(value)
        if option.kind == "path":
            if not text.strip():
                return _type_error(option, raw, "a directory path")
            return os.path.normpath(os.path.join(base_dir, os.path.expanduser(text))), []
        if option.kind == "choice" and text not in option.choices:
            return _type_error(option, raw, "one of " + ", ".join(option.choices))
        return text, []
    if option.kind == "bool":
        parsed = parse_env_bool(value) if from_text else value
        if not isinstance(parsed, bool):
            return _type_error(option, raw, "true or false")
        return parsed, []
    number: Any = value
    if from_text:
        try:
            number = int(str(value).strip())
        except ValueError:
            return _type_error(option, raw, "an integer")
    if isinstance(number, bool) or not isinstance(number, int):
        return _type_error(option, raw, "an integer")
    low, high = option.minimum, option.maximum
    if (low is not None and number < low) or (high is not None and number > high):
        if high is None:
            return _type_error(option, raw, f"an integer >= {low}")
        return _type_error(option, raw, f"an integer from {low} to {high}")
    return number, []


def convert_strlist(option: Option, raw: Raw) -> Converted:
    """A list of strings; ``key:`` with no value is the empty list."""
    if raw.value is None:
        return (), []
    if not isinstance(raw.value, list) or not all(
        isinstance(item, str | int | float) and not isinstance(item, bool) for item in raw.value
    ):
        return _type_error(option, raw, "a list of strings")
    return tuple(str(item) for item in raw.value), []


def convert_effort(raw: Raw) -> Converted:
    """The effort vocabulary: a non-empty list of distinct, non-blank strings."""
    value = raw.value
    if value is None:
        return INVALID, []  # a bare "effort:" means the default list
    problem: tuple[str, str] | None = None
    if not isinstance(value, list):
        problem = ("config.effort.not_list", f"effort must be a list of strings, got {value!r}")
    elif not value:
        problem = ("config.effort.empty", "effort must list at least one value")
    elif any(not isinstance(item, str) for item in value):
        bad = next(item for item in value if not isinstance(item, str))
        problem = (
            "config.effort.non_string",
            f"effort items must be strings, got {bad!r} "
            "(object items are reserved for future per-value metadata)",
        )
    elif any(not item.strip() for item in value):
        problem = ("config.effort.blank", "effort has a blank entry")
    elif len(set(value)) != len(value):
        repeated = sorted({item for item in value if value.count(item) > 1})
        repeats = ", ".join(repeated)
        problem = ("config.effort.duplicate", f"effort lists a value more than once: {repeats}")
    if problem is not None:
        code, message = problem
        return INVALID, [_error(code, message, raw)]
    return tuple(value), []


def convert_scopes(raw: Raw) -> Converted:
    """``scopes``: scope id to ``{description, paths}``."""
    if raw.value is None:
        return INVALID, []
    if not isinstance(raw.value, dict):
        return INVALID, [_error("config.scopes.type", "scopes must be a mapping of scope ids", raw)]
    scopes: dict[str, Scope] = {}
    problems: list[Diagnostic] = []
    for name, entry in raw.value.items():
        if entry is None:
            scopes[name] = Scope()
            continue
        paths = entry.get("paths") if isinstance(entry, dict) else None
        description = entry.get("description") if isinstance(entry, dict) else None
        if (
            not isinstance(entry, dict)
            or not isinstance(paths, list | None)
            or not all(isinstance(path, str) for path in paths or ())
            or not isinstance(description, str | None)
        ):
            problems.append(
                _error(
                    "config.scopes.entry",
                    f"scope {name!r} must be a mapping with a description and a list of paths",
                    raw,
                )
            )
            continue
        problems.extend(
            _warning("config.unknown_key", f"unknown config key 'scopes.{name}.{key}'", raw)
            for key in entry
            if key not in {"paths", "description"}
        )
        scopes[name] = Scope(description=description, paths=tuple(paths or ()))
    return scopes, problems


def _single(value: Any) -> bool:
    """A scalar that reads as text (a list's or a map's repr is no id or name)."""
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _phase(index: int, entry: Any, raw: Raw) -> tuple[Phase | None, list[Diagnostic]]:
    label = f"phases[{index}]"
    if not isinstance(entry, dict):
        return None, [_error("config.phases.entry", f"{label} must be a mapping", raw)]
    problems = [
        _warning("config.unknown_key", f"unknown config key 'phases.{index}.{key}'", raw)
        for key in entry
        if key not in {"id", "name", "description", "due"}
    ]
    name, phase_id = entry.get("name"), entry.get("id")
    description, due = entry.get("description"), entry.get("due")
    if not _single(name) or not str(name).strip():
        problems.append(_error("config.phases.name_missing", f"{label} has no name", raw))
        name = None
    if phase_id is not None and not _single(phase_id):
        problems.append(_error("config.phases.id", f"{label}: id must be a single value", raw))
        return None, problems
    if description is not None and not _single(description):
        problems.append(
            _error("config.phases.description", f"{label}: description must be text", raw)
        )
        description = None
    if phase_id is None or (isinstance(phase_id, str) and not phase_id.strip()):
        if name is not None:
            problems.append(
                _warning(
                    "config.phases.id_missing",
                    f"phase {name!r} has no id; its name is used as the id",
                    raw,
                )
            )
        phase_id = name
    if due is not None and not (isinstance(due, str) and _DATE.match(due) and is_date(due)):
        problems.append(_error("config.phases.due", f"{label}: due must be YYYY-MM-DD", raw))
        due = None
    if phase_id is None:
        return None, problems
    phase = Phase(
        id=str(phase_id),
        name=str(name if name is not None else phase_id),
        description=None if description is None else str(description),
        due=due,
    )
    return phase, problems


def convert_phases(raw: Raw) -> Converted:
    """``phases``: an ordered list of ``{id, name, description, due}``."""
    if raw.value is None:
        return (), []
    if not isinstance(raw.value, list):
        return INVALID, [_error("config.phases.type", "phases must be a list", raw)]
    phases: list[Phase] = []
    problems: list[Diagnostic] = []
    for index, entry in enumerate(raw.value):
        phase, found = _phase(index, entry, raw)
        problems.extend(found)
        if phase is None:
            continue
        if any(existing.id == phase.id for existing in phases):
            problems.append(
                _error("config.phases.duplicate_id", f"phase id {phase.id!r} is repeated", raw)
            )
            continue
        phases.append(phase)
    return tuple(phases), problems
