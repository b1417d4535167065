"""The option table: every config key of the seed, its type, default and environment name."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "MAX_ID_WIDTH",
    "OPTIONS",
    "OPTIONS_BY_KEY",
    "OTHER_SECTIONS",
    "REPORTED_AS_UNKNOWN",
    "SECTIONS",
    "TASK_DIR_ALIAS",
    "TASK_DIR_ALIAS_ENV",
    "Kind",
    "Option",
    "Source",
    "parse_env_bool",
]

Kind = Literal["path", "str", "bool", "int", "choice", "strlist", "effort", "scopes", "phases"]
Source = Literal["default", "file", "env", "flag"]


class Option(msgspec.Struct, frozen=True):
    """One setting: its dotted ``key`` (as the seed writes it) and ``Config`` field."""

    key: str
    field: str
    kind: Kind
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None

    @property
    def scalar(self) -> bool:
        """Scalar keys can be set from the environment."""
        return self.kind in {"path", "str", "bool", "int", "choice"}

    @property
    def env_name(self) -> str:
        """``TASKTOOL_`` + the key upper-cased, ``.`` and ``-`` turned into ``_``."""
        return "TASKTOOL_" + self.key.upper().replace(".", "_").replace("-", "_")


MAX_ID_WIDTH = 64

OPTIONS: tuple[Option, ...] = (
    Option("dir", "task_dir", "path"),
    Option("ignore", "ignore", "strlist"),
    Option("worklogs", "worklogs", "bool"),
    Option("workflow", "workflow", "choice", ("solo", "pr-review")),
    Option("worktree_scope", "worktree_scope", "choice", ("unified", "isolated")),
    Option("todos.exclude", "todos_exclude", "strlist"),
    Option("web.port", "web_port", "int", minimum=0, maximum=65535),
    Option("web.host", "web_host", "str"),
    Option("web.auto_open_browser", "web_auto_open_browser", "bool"),
    Option("web.readonly", "web_readonly", "bool"),
    Option("id.strategy", "id_strategy", "choice", ("sequential", "prefixed", "random", "ulid")),
    Option("id.prefix", "id_prefix", "str"),
    # Bounded so that a typo cannot make ``next-id`` build a gigabyte id.
    Option("id.length", "id_length", "int", minimum=1, maximum=MAX_ID_WIDTH),
    Option("id.padding", "id_padding", "int", minimum=0, maximum=MAX_ID_WIDTH),
    Option("effort", "effort", "effort"),
    Option("scopes", "scopes", "scopes"),
    Option("phases", "phases", "phases"),
    Option("next.unphased", "next_unphased", "choice", ("current", "last")),
    Option("verbose", "verbose", "bool"),
    Option("quiet", "quiet", "bool"),
)
OPTIONS_BY_KEY: dict[str, Option] = {option.key: option for option in OPTIONS}

#: Sections whose sub-keys are options (``web.port``); ``next`` is checked strictly.
SECTIONS = frozenset({"web", "id", "todos", "next"})
#: ``task-dir`` is the seed's second spelling of ``dir`` (its own environment variable).
TASK_DIR_ALIAS = "task-dir"
TASK_DIR_ALIAS_ENV = "TASKTOOL_TASK_DIR"
#: Honoured keys that ``validate`` still reports as unknown (the seed says so).
REPORTED_AS_UNKNOWN = frozenset({"verbose", "quiet", "projects", "default_project"})
#: Top-level keys other features own; they are accepted as they are.
OTHER_SECTIONS = frozenset({"sync"})

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def parse_env_bool(text: str) -> bool | None:
    """``1/true/yes/on`` and ``0/false/no/off`` (any case); anything else is ``None``."""
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    return None
