"""Finding the one config file: current directory, parents up to the repository root, home.

In each folder ``.tasktool.yaml`` comes first, then taskmd's ``.taskmd.yaml``: taskmd
writes the same keys (``dir``, ``id``, ``phases``, ``scopes``, ``todos``, ``web``,
``workflow``), so a repository that keeps its tasks with taskmd is read as it is, without
copying its config. ``~/.taskmd.yaml`` is never read: it is taskmd's project registry.
"""

from __future__ import annotations

from pathlib import Path

CONFIG_NAME = ".tasktool.yaml"
#: taskmd's config file, read in a folder that has no ``.tasktool.yaml``.
TASKMD_CONFIG_NAME = ".taskmd.yaml"
#: Where the global file is when set, instead of ``~/.tasktool.yaml`` (the project registry).
HOME_CONFIG_ENV = "TASKTOOL_HOME_CONFIG"


def project_config(directory: Path) -> Path | None:
    """The folder's ``.tasktool.yaml``, else its ``.taskmd.yaml``, else ``None``."""
    for name in (CONFIG_NAME, TASKMD_CONFIG_NAME):
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def find_config(cwd: Path, home: Path | None) -> Path | None:
    """The first project config file (:func:`project_config`) from ``cwd`` upwards,
    stopping at the first ``.git``.

    When no project file is found, ``home/.tasktool.yaml`` is the fallback. The
    first file found wins: files are never merged.
    """
    for directory in (cwd, *cwd.parents):
        candidate = project_config(directory)
        if candidate is not None:
            return candidate
        if (directory / ".git").exists():
            break
    if home is not None:
        fallback = home / CONFIG_NAME
        if fallback.is_file():
            return fallback
    return None


def taskmd_notice(file: str | None) -> str | None:
    """What to say on stderr when the config loaded is taskmd's (``None`` otherwise)."""
    if file is None or Path(file).name != TASKMD_CONFIG_NAME:
        return None
    return f"no {CONFIG_NAME} found: reading taskmd's config {file}"
