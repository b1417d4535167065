"""The layout of a repository kept by another tool: what its folders, statuses and ids
mean, so that tasktool reads and writes it as that tool does (docs/tasktool.md,
"Coming from Backlog.md").

A ``Layout`` is a plain value the config loader builds (``Config.layout``); the
default is tasktool's own (and taskmd's, which shares it). ``backlog`` is Backlog.md's:
its statuses are the repository's own names (``To Do``, ``In Progress``, ``Done``), each
read as one of tasktool's six, and its ids are ``PREFIX-N`` (``BACK-208``), named in
any case, with or without the prefix, with leading zeros or an older prefix
(``task-208``): one canonical form, as Backlog.md's ``canonicalTaskId``, while a task
shows its id as its file writes it (``BACK-24.02``).
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from tasktool.model.task import Status

__all__ = ["BACKLOG", "COMPLETED_DIR", "DRAFTS_DIR", "TASKS_DIR", "Layout", "LayoutKind"]

LayoutKind = Literal["tasktool", "backlog"]
BACKLOG: LayoutKind = "backlog"
#: Backlog.md's folders of active tasks and of completed ones (``archive/tasks/`` too).
TASKS_DIR = "tasks"
COMPLETED_DIR = "completed"
#: Backlog.md's drafts: read, shown by ``get`` with a flag, never listed nor recommended.
DRAFTS_DIR = "drafts"

#: Status names Backlog.md users write, by tasktool status (compared lower-cased).
_NAMED: dict[str, str] = {
    "to do": Status.PENDING.value,
    "todo": Status.PENDING.value,
    "backlog": Status.PENDING.value,
    "in progress": Status.IN_PROGRESS.value,
    "blocked": Status.BLOCKED.value,
    "in review": Status.IN_REVIEW.value,
    "review": Status.IN_REVIEW.value,
    "done": Status.COMPLETED.value,
    "won't do": Status.CANCELLED.value,
    "wont do": Status.CANCELLED.value,
    "cancelled": Status.CANCELLED.value,
    "canceled": Status.CANCELLED.value,
}
#: The name written for a status the repository's config does not list.
_USUAL: dict[str, str] = {
    Status.PENDING: "To Do",
    Status.BLOCKED: "Blocked",
    Status.IN_PROGRESS: "In Progress",
    Status.IN_REVIEW: "In Review",
    Status.COMPLETED: "Done",
    Status.CANCELLED: "Won't Do",
}
#: Backlog.md's default task prefix, which files written before a prefix change hold.
_LEGACY_PREFIX = "task"
_ID = re.compile(r"(?:([A-Za-z]+)-)?([0-9]+(?:\.[0-9]+)*)")


def _key(name: str) -> str:
    return " ".join(name.replace("-", " ").replace("_", " ").split()).lower()


class Layout(msgspec.Struct, frozen=True, kw_only=True):
    """How the repository's files are laid out and spelled (see the module docstring)."""

    kind: LayoutKind = "tasktool"
    #: Backlog.md's ``task_prefix`` (``back``); ids are written upper-cased (``BACK-1``).
    prefix: str = ""
    #: The repository's statuses, in its board's order.
    statuses: tuple[str, ...] = ()
    default_status: str = ""

    @property
    def foreign(self) -> bool:
        """Whether the files are another tool's (read and written its way)."""
        return self.kind != "tasktool"

    def status_of(self, name: str) -> str | None:
        """The tasktool status a status name stands for (any case, tasktool's own names
        too), ``None`` when it stands for none. A configured name not known by meaning
        is placed by position: the first is pending, the last completed (Backlog.md's
        last status is its terminal one), any other in progress."""
        key = _key(name)
        known = STATUS_KEYS.get(key) or _NAMED.get(key)
        if known is not None:
            return known
        configured = [_key(status) for status in self.statuses]
        if key not in configured:
            return None
        if key == configured[-1]:
            return Status.COMPLETED.value
        return Status.PENDING.value if key == configured[0] else Status.IN_PROGRESS.value

    def name_of(self, status: str) -> str:
        """The repository's name for a tasktool status: its first configured status that
        stands for it, else Backlog.md's usual name."""
        for name in self.statuses:
            if self.status_of(name) == status:
                return name
        return _USUAL.get(status, status)

    def shown(self, status: str) -> str:
        """A tasktool status as tables show it: under another tool's layout the
        repository's name (a Backlog.md user reads ``In Progress``, as its own CLI and
        ``board`` show it), else as it is. JSON and YAML keep tasktool's status, the one
        value a program can rely on whatever the repository calls it."""
        return self.name_of(status) if self.foreign else status

    def canonical_id(self, text: str) -> str:
        """``back-208``, ``208``, ``task-208`` and ``BACK-0208`` all as ``BACK-208``;
        anything else as it is."""
        found = self._numbered(text)
        if found is None:
            return text
        number = ".".join(part.lstrip("0") or "0" for part in found.group(2).split("."))
        return f"{self.prefix.upper()}-{number}"

    def spelled(self, text: str) -> str:
        """An id as the repository shows it: its prefix upper-cased and the current one
        (``task-24.02`` is ``BACK-24.02``), its number as written (Backlog.md lists
        ``BACK-24.02``); anything else as it is. Two spellings of one task share their
        :meth:`canonical_id`."""
        found = self._numbered(text)
        return f"{self.prefix.upper()}-{found.group(2)}" if found is not None else text

    def _numbered(self, text: str) -> re.Match[str] | None:
        """The id's prefix and number when it names one of the repository's tasks: its
        prefix, ``task`` (Backlog.md's default, which an older file may still hold) or
        none; never another kind's (``DRAFT-1``, ``doc-3``)."""
        found = _ID.fullmatch(text.strip()) if self.prefix else None
        if found is None:
            return None
        prefix = (found.group(1) or self.prefix).lower()
        return found if prefix in {self.prefix.lower(), _LEGACY_PREFIX} else None

    def number_of(self, task_id: str) -> int | None:
        """The top-level number of a canonical id (``BACK-222.1`` is 222)."""
        found = _ID.fullmatch(task_id)
        return int(found.group(2).split(".")[0]) if found is not None else None


#: tasktool's own status names, and their spellings with spaces (``in progress``).
STATUS_KEYS: dict[str, str] = {_key(status.value): status.value for status in Status}
