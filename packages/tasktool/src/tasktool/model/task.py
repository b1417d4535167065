"""The task model: statuses, priorities and the ``Task`` record.

A ``Task`` is an immutable value built from one Markdown file's frontmatter.
Scalars are kept as the text the file holds (the fast reader keeps every YAML
scalar as a string); ordering helpers turn them into ranks.
"""

from __future__ import annotations

import re
from enum import StrEnum

import msgspec

__all__ = [
    "DEFAULT_EFFORT",
    "KEPT",
    "PRIORITY_ORDER",
    "RESOLVED_STATUSES",
    "STATUS_ORDER",
    "TASK_TYPES",
    "Priority",
    "Status",
    "Task",
    "natural_key",
]


class Status(StrEnum):
    """Task statuses, declared in advancement order (see :data:`STATUS_ORDER`)."""

    PENDING = "pending"
    BLOCKED = "blocked"
    IN_PROGRESS = "in-progress"
    IN_REVIEW = "in-review"
    CANCELLED = "cancelled"
    COMPLETED = "completed"


#: Advancement rank: pending < blocked < in-progress < in-review < cancelled < completed.
STATUS_ORDER: dict[str, int] = {status.value: rank for rank, status in enumerate(Status)}
#: Statuses whose work is finished, one way or the other.
RESOLVED_STATUSES = frozenset({Status.COMPLETED.value, Status.CANCELLED.value})


class Priority(StrEnum):
    """Task priorities, lowest first."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


PRIORITY_ORDER: dict[str, int] = {priority.value: rank for rank, priority in enumerate(Priority)}
TASK_TYPES: tuple[str, ...] = ("feature", "bug", "improvement", "chore", "docs")
DEFAULT_EFFORT: tuple[str, ...] = ("small", "medium", "large")


#: What :attr:`Task.raw_body` holds when the parse cache keeps the body (a NUL: one
#: string for every such task, nothing to decode or hold per task): the load that decoded
#: the task reads it (``repo.bodies.read(task)``, :mod:`tasktool.files.caches.bodies`). A file
#: whose whole body is a NUL reads as kept too, and its file then gives it.
KEPT = "\x00"


# gc=False: a task holds only strings, tuples and flags, so it can never be part of a cycle;
# untracked, 10,000 of them do not set off garbage collections while a run loads them.
class Task(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One task file's frontmatter, plus where it lives (``group``, ``file_path``, ``archived``)."""

    id: str
    title: str
    status: str = Status.PENDING.value
    priority: str | None = None
    effort: str | None = None
    type: str | None = None
    dependencies: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    touches: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    owner: str | None = None
    phase: str | None = None
    parent: str | None = None
    created_at: str | None = None
    completed_at: str | None = None
    cancelled_at: str | None = None
    pr: tuple[str, ...] = ()
    external_id: str | None = None
    group: str | None = None
    file_path: str = ""
    archived: bool = False
    #: Worktree overlay provenance: the sibling worktree (path) and branch whose copy gave
    #: the effective status, or that holds the only copy (``sibling_only``); unset when the
    #: current worktree's own copy stands (docs/tasktool.md, "Git worktrees").
    worktree: str | None = None
    branch: str | None = None
    sibling_only: bool = False
    #: The Markdown after the frontmatter as the task holds it: its text (a file parsed by
    #: this run, a task made in memory), or :data:`KEPT` when the parse cache keeps it, to
    #: be read on first use through the load that decoded the task (``repo.bodies``): no
    #: caller decides up front whether it needs bodies, and none sees an empty body for a
    #: kept one.
    raw_body: str = msgspec.field(default="", name="body")

    @property
    def resolved(self) -> bool:
        """Completed or cancelled."""
        return self.status in RESOLVED_STATUSES


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``9`` before ``10`` and ``T-2`` before ``T-10``."""
    if text.isascii() and text.isdigit():
        return ((0, int(text)),)  # the common case, without the regex
    return tuple(
        (0, int(part)) if part.isdecimal() else (1, part.lower())
        for part in _DIGITS.split(text)
        if part
    )
