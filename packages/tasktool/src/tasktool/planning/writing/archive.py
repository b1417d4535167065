"""Which tasks ``archive`` moves and where, decided before anything moves.

The command line gives ids or a selection (``--all``, ``--status``, ``--tag``,
``--older-than``: all must hold; without ``--status``, completed and cancelled tasks);
:func:`archive_plan` pairs each chosen task with its target and marks the ones a real
run refuses (not completed or cancelled, no ``--force``). ``--dry-run`` shows the plan;
a real run checks it with :func:`refuse_unresolved`, then archives each task
(:func:`~tasktool.planning.writing.writes.archive_task`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from tasktool.model.errors import TaskToolError
from tasktool.model.task import RESOLVED_STATUSES, Task
from tasktool.planning.writing.writes import archive_target

if TYPE_CHECKING:
    from tasktool.planning.repository import Repository

__all__ = ["ArchiveMove", "archive_plan", "choose_to_archive", "refuse_unresolved"]


class ArchiveMove(msgspec.Struct, frozen=True, kw_only=True):
    """One task ``archive`` would move: from its file to ``target``."""

    task: Task
    target: Path
    #: Not completed or cancelled, and no ``--force``: a real run refuses the whole plan.
    needs_force: bool

    def to_json(self) -> dict[str, Any]:
        """``archive --dry-run --format json``'s row."""
        return {
            "id": self.task.id,
            "from": self.task.file_path,
            "to": str(self.target),
            "needs_force": self.needs_force,
        }


def _older_than(task: Task, days: int, today: dt.date) -> bool:
    """Whether the task was resolved (else created) more than ``days`` days ago."""
    stamp = task.completed_at or task.cancelled_at or task.created_at
    try:
        return stamp is not None and (today - dt.date.fromisoformat(stamp[:10])).days > days
    except ValueError:
        return False


def choose_to_archive(
    repo: Repository,
    task_ids: Sequence[str],
    *,
    statuses: Collection[str] = (),
    tags: Collection[str] = (),
    older_than: int | None = None,
    today: dt.date,
) -> list[Task]:
    """The tasks named by ``task_ids`` (each must be an active task here), or else the
    active tasks in one of ``statuses`` (completed and cancelled when none is given),
    with one of ``tags`` (any when none is given), resolved (else created) more than
    ``older_than`` days before ``today``."""
    if task_ids:
        return [repo.local(task_id) for task_id in task_ids]
    wanted = set(statuses) or set(RESOLVED_STATUSES)
    tagged = set(tags)
    return [
        task
        for task in repo.tasks
        if task.status in wanted
        and (not tagged or tagged & set(task.tags))
        and (older_than is None or _older_than(task, older_than, today))
    ]


def archive_plan(repo: Repository, chosen: Sequence[Task], *, force: bool) -> list[ArchiveMove]:
    """Where each chosen task goes; unresolved ones marked ``needs_force`` unless ``force``."""
    return [
        ArchiveMove(
            task=task,
            target=archive_target(repo, Path(task.file_path)),
            needs_force=not force and task.status not in RESOLVED_STATUSES,
        )
        for task in chosen
    ]


def refuse_unresolved(plan: Sequence[ArchiveMove]) -> None:
    """``task.unresolved`` when the plan moves a task that needs ``--force``."""
    unresolved = [move.task.id for move in plan if move.needs_force]
    if unresolved:
        raise TaskToolError(
            f"not completed or cancelled: {', '.join(unresolved)}; use --force to archive anyway",
            code="task.unresolved",
        )
