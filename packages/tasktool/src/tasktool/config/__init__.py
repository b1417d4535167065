"""Configuration: the one ``.tasktool.yaml``, ``TASKTOOL_*`` variables and flags.

:func:`load_config` finds the file (current directory, parents up to the
repository root, taskmd's ``.taskmd.yaml`` where a folder has no ``.tasktool.yaml``,
then ``~/.tasktool.yaml``; ``--config`` replaces the search),
applies the precedence flags > environment > file > defaults and returns the
effective :class:`~tasktool.model.config.Config` with each key's source and
every diagnostic of the seed's rules.
"""

from __future__ import annotations

from tasktool.config.discovery import (
    CONFIG_NAME,
    TASKMD_CONFIG_NAME,
    find_config,
    project_config,
    taskmd_notice,
)
from tasktool.config.loader import LoadedConfig, Overrides, load_config
from tasktool.config.options import OPTIONS, Option, Source

__all__ = [
    "CONFIG_NAME",
    "OPTIONS",
    "TASKMD_CONFIG_NAME",
    "LoadedConfig",
    "Option",
    "Overrides",
    "Source",
    "find_config",
    "load_config",
    "project_config",
    "taskmd_notice",
]
