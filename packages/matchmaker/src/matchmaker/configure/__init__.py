"""Settings of the ``matchmaker`` command: one option table, every source derived from it.

See :mod:`matchmaker.settings.options` for the table and
:mod:`matchmaker.settings.resolve` for the precedence rules.
"""

from __future__ import annotations

from matchmaker.settings.options import (
    ADMIN_OPTIONS,
    CONFIG_OPTION,
    GROUPS,
    OPTIONS,
    PROCESS,
    Kind,
    Option,
)
from matchmaker.settings.resolve import KNOWN_ENV, Effective, SettingsError, resolve
from matchmaker.settings.show import effective_rows, environment_rows, environment_table

__all__ = [
    "ADMIN_OPTIONS",
    "CONFIG_OPTION",
    "GROUPS",
    "KNOWN_ENV",
    "OPTIONS",
    "PROCESS",
    "Effective",
    "Kind",
    "Option",
    "SettingsError",
    "effective_rows",
    "environment_rows",
    "environment_table",
    "resolve",
]
