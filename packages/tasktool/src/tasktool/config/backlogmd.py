"""Backlog.md's ``backlog/config.yml``: the one place that tells a Backlog.md repository
and turns its config into tasktool's :class:`~tasktool.model.layout.Layout`.

A folder with no ``.tasktool.yaml`` nor ``.taskmd.yaml`` but a ``backlog/config.yml``
is read as Backlog.md reads it, without copying or converting a file: the task
directory is ``backlog/``; ``tasks/`` holds the active tasks, ``completed/`` and
``archive/tasks/`` the archived ones (finished, not lost); ``drafts/`` drafts (shown by
``get``, never listed nor recommended); ``docs/``, ``decisions/``, ``milestones/`` and
``assets/`` hold no task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tasktool.model.diagnostics import Diagnostic
from tasktool.model.layout import BACKLOG, Layout

__all__ = [
    "BACKLOG_CONFIG",
    "BACKLOG_DIR",
    "BACKLOG_IGNORED",
    "DEFAULT_PREFIX",
    "backlog_config",
    "backlog_layout",
    "is_backlog_config",
]

BACKLOG_DIR = "backlog"
BACKLOG_CONFIG = "config.yml"
DEFAULT_PREFIX = "task"
#: Folders of ``backlog/`` that hold no task (``archive/tasks/`` and ``drafts/`` are read).
BACKLOG_IGNORED: tuple[str, ...] = (
    "docs",
    "decisions",
    "milestones",
    "assets",
    "archive/drafts",
    "archive/milestones",
    "archive/docs",
    "archive/decisions",
)
_DEFAULT_STATUSES: tuple[str, ...] = ("To Do", "In Progress", "Done")


def backlog_config(directory: Path) -> Path | None:
    """``directory/backlog/config.yml`` (or ``directory/config.yml`` when ``directory``
    is itself the ``backlog`` folder), if it is a file."""
    for candidate in (directory / BACKLOG_DIR / BACKLOG_CONFIG, directory / BACKLOG_CONFIG):
        if candidate.parent.name == BACKLOG_DIR and candidate.is_file():
            return candidate
    return None


def is_backlog_config(path: Path) -> bool:
    """Whether a config file is Backlog.md's."""
    return path.name == BACKLOG_CONFIG and path.parent.name == BACKLOG_DIR


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def backlog_layout(data: dict[str, Any], file: str) -> tuple[Layout, list[Diagnostic]]:
    """The layout ``config.yml`` describes: ``task_prefix`` (else ``prefixes.task``, else
    ``task``), ``statuses`` and ``default_status``; a value of the wrong type is a
    warning and its default stands (Backlog.md falls back the same way)."""
    problems: list[Diagnostic] = []
    prefixes = data.get("prefixes")
    nested = prefixes.get("task") if isinstance(prefixes, dict) else None
    prefix = _text(data.get("task_prefix")) or _text(nested) or DEFAULT_PREFIX
    raw = data.get("statuses")
    statuses = _DEFAULT_STATUSES
    if isinstance(raw, list) and raw and all(_text(item) for item in raw):
        statuses = tuple(str(item).strip() for item in raw)
    elif raw is not None:
        problems.append(_warning(file, "statuses", "a list of status names"))
    default = _text(data.get("default_status")) or statuses[0]
    return Layout(kind=BACKLOG, prefix=prefix, statuses=statuses, default_status=default), problems


def _warning(file: str, key: str, expected: str) -> Diagnostic:
    return Diagnostic(
        severity="warning",
        code="config.backlog.value",
        message=f"{key} in Backlog.md's config must be {expected}; its default is used",
        file=file,
    )
