"""Finding the one config file: current directory, parents up to the repository root, home."""

from __future__ import annotations

from pathlib import Path

CONFIG_NAME = ".tasktool.yaml"
#: Where the global file is when set, instead of ``~/.tasktool.yaml`` (the project registry).
HOME_CONFIG_ENV = "TASKTOOL_HOME_CONFIG"


def find_config(cwd: Path, home: Path | None, *, fallback: bool = True) -> Path | None:
    """The first ``.tasktool.yaml`` from ``cwd`` upwards, stopping at the first ``.git``.

    When no project file is found, ``home/.tasktool.yaml`` is the fallback (unless
    ``fallback`` is false: a project file or nothing). The
    first file found wins: files are never merged. The home file is only ever the
    fallback, even when the search passes through the home folder (a folder under
    ``~`` outside any repository): see :func:`is_home_file`. Run in the home folder
    itself, it is the current directory's file (the same folder either way).
    """
    home_file = home / CONFIG_NAME if home is not None else None
    for directory in (cwd, *cwd.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file() and (directory == cwd or not is_home_file(candidate, home)):
            return candidate
        if (directory / ".git").exists():
            break
    if fallback and home_file is not None and home_file.is_file():
        return home_file
    return None


def is_home_file(path: Path, home: Path | None) -> bool:
    """Whether ``path`` is ``~/.tasktool.yaml``: a fallback of *settings*, whose relative
    ``dir`` (and default ``.``) means the current folder, never the home folder."""
    if home is None:
        return False
    try:
        return path.samefile(home / CONFIG_NAME)
    except OSError:
        return False
