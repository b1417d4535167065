"""Building the effective ``Config``: defaults < the one file < ``TASKTOOL_*`` < flags."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from tasktool.config.backlogmd import BACKLOG_IGNORED, backlog_layout, is_backlog_config
from tasktool.config.convert import (
    INVALID,
    convert_effort,
    convert_phases,
    convert_scalar,
    convert_scopes,
    convert_strlist,
)
from tasktool.config.discovery import TASKMD_CONFIG_NAME, find_config, is_home_file
from tasktool.config.document import read_config
from tasktool.config.layers import Raw, env_diagnostics, env_layer, file_layer
from tasktool.config.options import OPTIONS, Option, Source
from tasktool.model.config import Config
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.errors import TaskToolError
from tasktool.model.layout import Layout

if TYPE_CHECKING:
    from tasktool.config.registry import Registry

__all__ = ["LoadedConfig", "Overrides", "load_config"]

#: Error codes that reject the whole config: no command runs under them but ``validate``.
_REJECTING = ("config.type", "config.env.", "config.effort.")


class Overrides(msgspec.Struct, frozen=True, kw_only=True):
    """What the global command-line flags set (``None``: not given)."""

    config: str | None = None
    task_dir: str | None = None
    verbose: bool | None = None
    quiet: bool | None = None
    #: ``--worktree-scope``: ``unified`` or ``isolated``.
    worktree_scope: str | None = None
    #: ``--project``: run in this registered project's folder.
    project: str | None = None


class LoadedConfig(msgspec.Struct, frozen=True, kw_only=True):
    """The effective ``Config``, where each value came from, and every config diagnostic."""

    file: str | None
    config: Config
    values: dict[str, Any]
    sources: dict[str, Source]
    diagnostics: tuple[Diagnostic, ...] = ()
    #: Keys whose environment value was rejected: the variable and its text.
    rejected: dict[str, tuple[str, str]] = msgspec.field(default_factory=dict)

    @property
    def rejections(self) -> tuple[Diagnostic, ...]:
        """Errors that reject the config (bad types, bad values, a bad effort list)."""
        return tuple(d for d in self.diagnostics if d.code.startswith(_REJECTING))

    @property
    def next_errors(self) -> tuple[Diagnostic, ...]:
        """Errors of the ``next`` section: ``next`` refuses to run under them."""
        return tuple(d for d in self.diagnostics if d.code.startswith("config.next."))

    def require_valid(self) -> None:
        """Raise the first rejection as a ``TaskToolError``."""
        _raise_first(self.rejections)

    def require_next_config(self) -> None:
        """Raise when the ``next`` section is malformed (for ``next``)."""
        _raise_first(self.rejections + self.next_errors)


def _raise_first(problems: tuple[Diagnostic, ...]) -> None:
    if problems:
        first = problems[0]
        where = f"{first.file}: " if first.file else ""
        raise TaskToolError(f"{where}{first.message}", code=first.code)


def _json_ready(value: Any) -> Any:
    try:
        return msgspec.json.decode(msgspec.json.encode(value))
    except UnicodeEncodeError:  # a path that is not UTF-8 (``-d $'\xff'``): kept as is
        return msgspec.to_builtins(value)


def _convert(option: Option, raw: Raw, base_dir: str) -> tuple[Any, list[Diagnostic]]:
    if option.scalar:
        return convert_scalar(option, raw, base_dir)
    if option.kind == "strlist":
        return convert_strlist(option, raw)
    if option.kind == "effort":
        return convert_effort(raw)
    if option.kind == "scopes":
        return convert_scopes(raw)
    return convert_phases(raw)


def _registry(env: Mapping[str, str], home: Path) -> Registry:
    # Imported here: a project with its own config file (the usual case) never reads it.
    from tasktool.config.registry import read_registry

    return read_registry(env, home)


def _locate(
    overrides: Overrides, cwd: Path, env: Mapping[str, str], home: Path
) -> tuple[Path | None, Path]:
    """The config file to load and the directory that stands for the current one:
    ``--project``'s folder; else, when no project file is found from ``cwd`` and no
    ``--task-dir`` is given, the folder of the registry's ``default_project``. A
    registered folder that is gone is ``projects.folder_missing``."""
    if overrides.project is not None:
        cwd = _registry(env, home).folder(overrides.project)
    if overrides.config is not None:
        return (cwd / overrides.config).absolute(), cwd
    path = find_config(cwd, home, fallback=False)
    if path is None and overrides.task_dir is None and overrides.project is None:
        registry = _registry(env, home)
        if registry.default_project is not None:
            cwd = registry.folder(registry.default_project)
            path = find_config(cwd, home, fallback=False)
    return (path or find_config(cwd, home)), cwd


def _file(
    path: Path, file_dir: str, *, fallback: bool
) -> tuple[dict[str, Any], dict[str, Raw], list[Diagnostic], Layout]:
    """The config file's data, the values it sets, its problems, and the layout it
    describes (Backlog.md's ``config.yml``: none of its keys is tasktool's)."""
    document = read_config(path, cache=not fallback)
    data = document.data
    diagnostics: list[Diagnostic] = []
    layout = Layout()
    if is_backlog_config(path):
        layout, found = backlog_layout(data, str(path))
        diagnostics.extend(found)
        data = {}
    layers, found = file_layer(data, document.duplicates if data else (), str(path))
    diagnostics.extend(found)
    if "sync" in data:  # its checks (and their imports) only for a config that has one
        from tasktool.config.sync import sync_diagnostics

        diagnostics.extend(sync_diagnostics(data["sync"], file_dir, str(path)))
    return data, layers, diagnostics, layout


def load_config(
    overrides: Overrides | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> LoadedConfig:
    """Find and read the one config file, then apply the environment and the flags.

    A file that cannot be read or parsed raises ``TaskToolError`` naming it;
    every other problem becomes a :class:`Diagnostic` on the result.
    """
    overrides = overrides or Overrides()
    cwd = Path.cwd() if cwd is None else cwd
    env = os.environ if env is None else env
    if home is None:
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    path, cwd = _locate(overrides, cwd, env, home)
    # The home file is a fallback config: its relative paths (and the default task
    # directory) mean the folder the command runs for, never the home folder.
    fallback = (
        path is not None
        and overrides.config is None
        and path.parent != cwd
        and is_home_file(path, home)
    )
    file_dir = str(path.parent) if path is not None and not fallback else str(cwd)

    file = str(path) if path is not None else None
    data, layers, diagnostics, layout = (
        _file(path, file_dir, fallback=fallback) if path is not None else ({}, {}, [], Layout())
    )
    layers.update(env_layer(env, data))
    diagnostics.extend(env_diagnostics(env, data))
    flags = {
        "dir": overrides.task_dir,
        "verbose": overrides.verbose,
        "quiet": overrides.quiet,
        "worktree_scope": overrides.worktree_scope,
    }
    layers.update(
        {
            key: Raw(v, "flag", "--" + key.replace("_", "-"))
            for key, v in flags.items()
            if v is not None
        }
    )

    defaults = Config(task_dir=file_dir)
    fields: dict[str, Any] = {}
    values: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    rejected: dict[str, tuple[str, str]] = {}
    for option in OPTIONS:
        raw = layers.get(option.key)
        value: Any = INVALID
        source: Source = "default"
        if raw is not None:
            base = file_dir if raw.source == "file" else str(cwd)
            value, found = _convert(option, raw, base)
            diagnostics.extend(found)
        if value is INVALID:
            value = getattr(defaults, option.field)
            if raw is not None and raw.source == "env":
                rejected[option.key] = (raw.origin or option.env_name, str(raw.value))
        elif raw is not None:
            source = raw.source
        fields[option.field] = value
        values[option.key] = _json_ready(value)
        sources[option.key] = source
    if path is not None and path.name == TASKMD_CONFIG_NAME and sources["worklogs"] == "default":
        fields["worklogs"] = values["worklogs"] = True  # taskmd's documented default
    if layout.foreign:
        fields["layout"] = layout
        fields["ignore"] = (*fields["ignore"], *BACKLOG_IGNORED)
    return LoadedConfig(
        file=file,
        config=Config(**fields),
        values=values,
        sources=sources,
        diagnostics=tuple(diagnostics),
        rejected=rejected,
    )
