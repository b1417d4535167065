"""Settings as rows: ``matchmaker config show`` and the environment table of the docs."""

from __future__ import annotations

from typing import Any

from matchmaker.configure.options import ADMIN_OPTIONS, CONFIG_OPTION, OPTIONS
from matchmaker.configure.resolve import Effective
from matchmaker.store.url import redact_url

__all__ = ["ENV_TABLE_HEADER", "effective_rows", "environment_rows", "environment_table"]

ENV_TABLE_HEADER = ("variable", "flag", "config key", "default", "meaning")


def effective_rows(effective: Effective) -> list[dict[str, Any]]:
    """One ``{key, value, source}`` per option, secrets redacted, store passwords hidden."""
    rows = []
    for option in OPTIONS:
        value = _get(effective.config, option.field)
        if option.secret and value is not None:
            value = "***"
        elif option.field == "store_url" and isinstance(value, str):
            value = redact_url(value)
        rows.append({"key": option.key, "value": value, "source": effective.origins[option.field]})
    return rows


def environment_rows() -> list[tuple[str, str, str, str, str]]:
    """``(variable, flag, config key, default, meaning)`` for every variable read."""
    rows = []
    for option in (*OPTIONS, CONFIG_OPTION, *ADMIN_OPTIONS):
        key = option.key if option in OPTIONS else "-"
        flag = option.flag if option not in ADMIN_OPTIONS else f"admin {option.flag}"
        if option.field == "management_key":
            flag += " (admin --key)"
        for name in option.envs:
            rows.append((name, flag, key, option.shown_default(), option.help))
    return rows


def environment_table() -> str:
    """The Markdown table ``docs/operations.md`` carries (a test compares the two)."""
    lines = ["| " + " | ".join(ENV_TABLE_HEADER) + " |", "|---|---|---|---|---|"]
    for name, flag, key, default, meaning in environment_rows():
        cells = [f"`{name}`", f"`{flag}`", f"`{key}`" if key != "-" else "-", default, meaning]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _get(config: object, field: str) -> Any:
    value = config
    for part in field.split("."):
        value = getattr(value, part)
    return value
