"""Finding the one config file: current directory, parents up to the repository root, home.

In each folder ``.tasktool.yaml`` comes first, then taskmd's ``.taskmd.yaml``: taskmd
writes the same keys (``dir``, ``id``, ``phases``, ``scopes``, ``todos``, ``web``,
``workflow``), so a repository that keeps its tasks with taskmd is read as it is, without
copying its config. ``~/.taskmd.yaml`` is never read: it is taskmd's project registry.
Then Backlog.md's ``backlog/config.yml`` (:mod:`tasktool.config.backlogmd`).
"""

from __future__ import annotations

from pathlib import Path

from tasktool.config.backlogmd import backlog_config, is_backlog_config

__all__ = [
    "CONFIG_NAME",
    "HOME_CONFIG_ENV",
    "TASKMD_CONFIG_NAME",
    "find_config",
    "is_home_file",
    "project_config",
    "taskmd_notice",
]

CONFIG_NAME = ".tasktool.yaml"
#: taskmd's config file, read in a folder that has no ``.tasktool.yaml``.
TASKMD_CONFIG_NAME = ".taskmd.yaml"
#: Where the global file is when set, instead of ``~/.tasktool.yaml`` (the project registry).
HOME_CONFIG_ENV = "TASKTOOL_HOME_CONFIG"


def project_config(directory: Path) -> Path | None:
    """The folder's ``.tasktool.yaml``, else its ``.taskmd.yaml``, else its
    ``backlog/config.yml``, else ``None``."""
    for name in (CONFIG_NAME, TASKMD_CONFIG_NAME):
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return backlog_config(directory)


def find_config(cwd: Path, home: Path | None, *, fallback: bool = True) -> Path | None:
    """The first project config file (:func:`project_config`) from ``cwd`` upwards,
    stopping at the first ``.git``.

    When no project file is found, ``home/.tasktool.yaml`` is the fallback (unless
    ``fallback`` is false: a project file or nothing). The first file found wins: files
    are never merged. The search passes through the home folder (from a folder under
    ``~`` outside any repository) without taking a file there: the home file is still
    only the fallback, whose relative paths mean the current folder (see
    :func:`is_home_file`). Run in the home folder itself, its file is the current
    folder's (the same folder either way).
    """
    for directory in (cwd, *cwd.parents):
        passing = directory != cwd and _is_home(directory, home)
        candidate = None if passing else project_config(directory)
        if candidate is not None:
            return candidate
        if (directory / ".git").exists():
            break
    if fallback and home is not None and (home / CONFIG_NAME).is_file():
        return home / CONFIG_NAME
    return None


def _is_home(directory: Path, home: Path | None) -> bool:
    if home is None:
        return False
    try:
        return directory.samefile(home)
    except OSError:
        return False


def is_home_file(path: Path, home: Path | None) -> bool:
    """Whether ``path`` is ``~/.tasktool.yaml``: a fallback config, whose relative
    ``dir`` (and default ``.``) means the current folder, never the home folder."""
    return path.name == CONFIG_NAME and _is_home(path.parent, home)


def taskmd_notice(file: str | None) -> str | None:
    """What to say on stderr when the config loaded is taskmd's or Backlog.md's (``None``
    otherwise)."""
    if file is None:
        return None
    if Path(file).name == TASKMD_CONFIG_NAME:
        return f"no {CONFIG_NAME} found: reading taskmd's config {file}"
    if is_backlog_config(Path(file)):
        return f"no {CONFIG_NAME} found: reading Backlog.md's config {file}"
    return None
