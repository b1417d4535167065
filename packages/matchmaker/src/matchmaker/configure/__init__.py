"""The configuration of the ``matchmaker`` command (a :class:`~matchmaker.config.ServerConfig`):
one option table, every source (flags, ``MATCHMAKER_*``, the ``--config`` file) derived
from it.

See :mod:`matchmaker.configure.options` for the table and
:mod:`matchmaker.configure.resolve` for the precedence rules.
"""

from __future__ import annotations

from matchmaker.configure.options import (
    ADMIN_OPTIONS,
    CONFIG_OPTION,
    GROUPS,
    OPTIONS,
    PROCESS,
    Kind,
    Option,
)
from matchmaker.configure.resolve import KNOWN_ENV, ConfigError, Effective, resolve
from matchmaker.configure.show import effective_rows, environment_rows, environment_table

__all__ = [
    "ADMIN_OPTIONS",
    "CONFIG_OPTION",
    "GROUPS",
    "KNOWN_ENV",
    "OPTIONS",
    "PROCESS",
    "ConfigError",
    "Effective",
    "Kind",
    "Option",
    "effective_rows",
    "environment_rows",
    "environment_table",
    "resolve",
]
