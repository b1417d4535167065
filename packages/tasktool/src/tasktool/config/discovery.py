"""Finding the one config file: current directory, parents up to the repository root, home."""

from __future__ import annotations

from pathlib import Path

CONFIG_NAME = ".tasktool.yaml"
#: Where the global file is when set, instead of ``~/.tasktool.yaml`` (the project registry).
HOME_CONFIG_ENV = "TASKTOOL_HOME_CONFIG"


def find_config(cwd: Path, home: Path | None) -> Path | None:
    """The first ``.tasktool.yaml`` from ``cwd`` upwards, stopping at the first ``.git``.

    When no project file is found, ``home/.tasktool.yaml`` is the fallback. The
    first file found wins: files are never merged.
    """
    for directory in (cwd, *cwd.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            return candidate
        if (directory / ".git").exists():
            break
    if home is not None:
        fallback = home / CONFIG_NAME
        if fallback.is_file():
            return fallback
    return None
