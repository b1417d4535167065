"""The effective configuration: what the core needs, already validated and typed.

The config loader (``tasktool.config``) builds one ``Config`` from defaults,
the one config file, ``TASKTOOL_*`` variables and flags, and records where
each value came from. The core (ranking, tracks, validation) takes a
``Config`` and never looks at files or the environment.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from tasktool.model.layout import Layout
from tasktool.model.task import DEFAULT_EFFORT

__all__ = ["Config", "IdStrategy", "Phase", "Scope", "Unphased", "Workflow", "WorktreeScope"]

IdStrategy = Literal["sequential", "prefixed", "random", "ulid"]
Unphased = Literal["current", "last"]
WorktreeScope = Literal["unified", "isolated"]
Workflow = Literal["solo", "pr-review"]


class Phase(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of ``phases``; ``id`` falls back to ``name`` when the file omits it."""

    id: str
    name: str
    description: str | None = None
    due: str | None = None


class Scope(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of ``scopes``."""

    description: str | None = None
    paths: tuple[str, ...] = ()


class Config(msgspec.Struct, frozen=True, kw_only=True):
    """Every effective setting of one run."""

    task_dir: str = "."
    ignore: tuple[str, ...] = ()
    worklogs: bool = False
    workflow: Workflow = "solo"
    worktree_scope: WorktreeScope = "unified"
    todos_exclude: tuple[str, ...] = ()
    web_port: int = 8080
    web_host: str = "127.0.0.1"
    web_auto_open_browser: bool = False
    web_readonly: bool = False
    id_strategy: IdStrategy = "sequential"
    id_prefix: str = ""
    id_length: int = 6
    id_padding: int = 3
    effort: tuple[str, ...] = DEFAULT_EFFORT
    scopes: dict[str, Scope] | None = None
    phases: tuple[Phase, ...] = ()
    next_unphased: Unphased = "current"
    verbose: bool = False
    quiet: bool = False
    #: Another tool's layout (Backlog.md's), from its config file; tasktool's otherwise.
    layout: Layout = Layout()
