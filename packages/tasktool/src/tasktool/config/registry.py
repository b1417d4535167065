"""The project registry: ``projects`` and ``default_project`` in the global file.

The global file is ``$TASKTOOL_HOME_CONFIG`` when set, else ``~/.tasktool.yaml``;
``--config`` never changes it. It is read with the config reader and written with
ruamel's round-trip mode, so comments, key order and every other key survive
``projects register``/``unregister``; the write is atomic.

A project's ``path`` is the folder holding its ``.tasktool.yaml``. All worktrees of
one git repository are one project: registering a folder inside a linked worktree
registers the same folder of the main worktree, and a path registered twice (as
itself or through another worktree) is one project.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from tasktool.config.discovery import (
    CONFIG_NAME,
    HOME_CONFIG_ENV,
    TASKMD_CONFIG_NAME,
    project_config,
)
from tasktool.config.document import read_config
from tasktool.files.scanning.worktrees import discover_worktrees
from tasktool.files.storage import atomic_write_text
from tasktool.model.errors import TaskToolError

__all__ = [
    "Project",
    "Registry",
    "project_home",
    "read_registry",
    "register",
    "registry_file",
    "unregister",
]


class Project(msgspec.Struct, frozen=True, kw_only=True):
    """One registered project."""

    id: str
    name: str
    path: str


class Registry(msgspec.Struct, frozen=True, kw_only=True):
    """The registry as the global file holds it."""

    file: str
    projects: tuple[Project, ...] = ()
    default_project: str | None = None

    def get(self, project_id: str) -> Project:
        """The project with this id, or ``projects.not_found``."""
        for project in self.projects:
            if project.id == project_id:
                return project
        known = ", ".join(project.id for project in self.projects) or "none"
        raise TaskToolError(
            f"no registered project {project_id!r} in {self.file} (registered: {known})",
            code="projects.not_found",
        )

    def folder(self, project_id: str) -> Path:
        """The folder of the project with this id: ``projects.not_found`` for an unknown id,
        ``projects.folder_missing`` when the folder is gone (never an empty project)."""
        project = self.get(project_id)
        folder = Path(project.path)
        if not folder.is_dir():
            raise TaskToolError(
                f"project {project_id!r} is registered at {project.path}, which no longer "
                f"exists; register its new folder or run: tasktool projects unregister "
                f"{project_id}",
                code="projects.folder_missing",
            )
        return folder


def registry_file(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """``$TASKTOOL_HOME_CONFIG``, else ``~/.tasktool.yaml``."""
    env = os.environ if env is None else env
    named = env.get(HOME_CONFIG_ENV, "")
    if named:
        return Path(named).expanduser().absolute()
    if home is None:
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home / CONFIG_NAME


def _invalid(file: Path, message: str) -> TaskToolError:
    return TaskToolError(f"{file}: {message}", code="projects.invalid")


def _entry(file: Path, index: int, raw: Any) -> Project:
    if not isinstance(raw, dict):
        raise _invalid(file, f"projects[{index}] is not a mapping")
    found: dict[str, str] = {}
    for key in ("id", "path"):
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            raise _invalid(file, f"projects[{index}] needs a non-empty string {key!r}")
        found[key] = value
    name = raw.get("name")
    shown = name if isinstance(name, str) and name else found["id"]
    return Project(id=found["id"], name=shown, path=found["path"])


def read_registry(env: Mapping[str, str] | None = None, home: Path | None = None) -> Registry:
    """The registry (empty when the global file does not exist); ``projects.invalid`` when
    ``projects`` or ``default_project`` has the wrong shape."""
    file = registry_file(env, home)
    if not file.is_file():
        return Registry(file=str(file))
    data = read_config(file, cache=False).data  # no state folder in the home folder
    raw = data.get("projects")
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise _invalid(file, "projects must be a list")
    projects = tuple(_entry(file, index, item) for index, item in enumerate(raw))
    default = data.get("default_project")
    if default is not None and not isinstance(default, str):
        raise _invalid(file, "default_project must be a project id")
    return Registry(file=str(file), projects=projects, default_project=default or None)


def project_home(path: Path) -> Path:
    """The folder that stands for the project at ``path``: the same folder in the main
    worktree when ``path`` is in a linked worktree of a repository."""
    resolved = path.resolve()
    worktrees = discover_worktrees(resolved)
    if worktrees is None:
        return resolved
    relative = resolved.relative_to(Path(worktrees.current.path).resolve())
    return Path(worktrees.root).resolve() / relative


def _load_document(file: Path) -> Any:
    from mtcommon import load_roundtrip

    if not file.exists():
        return None
    return load_roundtrip(file.read_text(encoding="utf-8"), source=str(file))


def _save(file: Path, document: Any) -> None:
    from mtcommon import dump_roundtrip

    file.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(file, dump_roundtrip(document))


def register(
    path: Path,
    *,
    project_id: str | None = None,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> tuple[Project, bool]:
    """Add the project at ``path``; ``(project, False)`` when that folder (or its main
    worktree's copy) is registered already. Refuses a folder without ``.tasktool.yaml``
    or ``.taskmd.yaml`` (``projects.no_config``) and an id that is taken (``projects.exists``)."""
    if project_config(path) is None:
        raise TaskToolError(
            f"{path} has no {CONFIG_NAME} (nor taskmd's {TASKMD_CONFIG_NAME}); "
            "run 'tasktool init' there first",
            code="projects.no_config",
        )
    folder = project_home(path)
    registry = read_registry(env, home)
    for known in registry.projects:
        if project_home(Path(known.path)) == folder:
            return known, False
    chosen = project_id or folder.name
    if any(known.id == chosen for known in registry.projects):
        raise TaskToolError(
            f"project id {chosen!r} is taken in {registry.file}; choose another with --id",
            code="projects.exists",
        )
    project = Project(id=chosen, name=name or chosen, path=str(folder))
    from ruamel.yaml.comments import CommentedMap

    file = Path(registry.file)
    document = _load_document(file)
    if document is None:
        document = CommentedMap()
    entries = document.get("projects")
    if entries is None:
        document["projects"] = entries = []
    entry = CommentedMap()
    entry["id"] = project.id
    if name:
        entry["name"] = name
    entry["path"] = project.path
    entries.append(entry)
    _save(file, document)
    return project, True


def unregister(
    project_id: str, *, env: Mapping[str, str] | None = None, home: Path | None = None
) -> Project:
    """Remove the project with this id (``projects.not_found`` when there is none)."""
    registry = read_registry(env, home)
    project = registry.get(project_id)
    file = Path(registry.file)
    document = _load_document(file)
    entries = document["projects"]
    for index, entry in enumerate(entries):
        if entry.get("id") == project_id:
            del entries[index]
            break
    _save(file, document)
    return project
