"""Writes to a repository kept by another tool (Backlog.md's layout), as that tool writes.

What a user types is read in the repository's terms first (``--status "In Progress"``,
``--dep 12``; in any repository ``done``, ``in_progress`` or ``To Do`` for tasktool's
statuses, as taskmd and Backlog.md users type them), so tasktool's checks apply; what
is written is in the repository's terms again
(:func:`tasktool.files.parsing.backlogmd.backlog_updates`). A new task takes the next number over
every task Backlog.md counts (``tasks/``, ``completed/``, ``archive/tasks/``) and a file
named as Backlog.md names it, in ``tasks/``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from tasktool.files.parsing.backlogmd import new_backlog_name, new_backlog_text, normalized_scan
from tasktool.files.scanning.scan import scan_source
from tasktool.files.storage import atomic_write_text, repository_lock
from tasktool.model.errors import TaskToolError
from tasktool.model.layout import TASKS_DIR, Layout
from tasktool.model.task import STATUS_ORDER, Task
from tasktool.model.vocabulary import INVALID_CODE
from tasktool.planning.repository import Repository
from tasktool.planning.writing.changes import TaskChange, check_references

__all__ = ["create_foreign", "incoming", "incoming_fields", "status_in"]


def status_in(layout: Layout, name: str) -> str:
    """The tasktool status a status the user typed stands for in this repository (its own
    names in any case, tasktool's too); ``task.invalid_status`` naming its statuses."""
    found = layout.status_of(name)
    if found is not None:
        return found
    if layout.statuses:
        expected = f"this repository's statuses: {', '.join(layout.statuses)}"
    else:
        expected = f"expected one of: {', '.join(STATUS_ORDER)}"
    raise TaskToolError(f"invalid status {name!r}; {expected}", code=INVALID_CODE["status"])


def _ids(
    resolve: Callable[[str], str], values: Mapping[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    return {
        field: tuple(map(resolve, items)) if field == "dependencies" else items
        for field, items in values.items()
    }


def incoming(change: TaskChange, layout: Layout, resolve: Callable[[str], str]) -> TaskChange:
    """``change`` in tasktool's terms: statuses as tasktool spells them, and the task ids
    it names (dependencies, parent) as ``resolve`` finds them (``back-3``, or ``1`` for
    ``001``: :meth:`~tasktool.planning.repository.Repository.resolve`)."""
    scalars = dict(change.set)
    if scalars.get("status"):
        scalars["status"] = status_in(layout, str(scalars["status"]))
    if scalars.get("parent"):
        scalars["parent"] = resolve(str(scalars["parent"]))
    return msgspec.structs.replace(
        change,
        set=scalars,
        replace=_ids(resolve, change.replace),
        add=_ids(resolve, change.add),
        remove=_ids(resolve, change.remove),
    )


def incoming_fields(
    fields: Mapping[str, Any], layout: Layout, resolve: Callable[[str], str]
) -> dict[str, Any]:
    """A new task's fields in tasktool's terms (see :func:`incoming`)."""
    result = dict(fields)
    if result.get("status"):
        result["status"] = status_in(layout, str(result["status"]))
    if result.get("parent"):
        result["parent"] = resolve(str(result["parent"]))
    if result.get("dependencies"):
        result["dependencies"] = [resolve(d) for d in result["dependencies"]]
    return result


def create_foreign(
    repo: Repository, fields: Mapping[str, Any], body: str, now: dt.datetime
) -> Task:
    """Write a new task as Backlog.md does: ``tasks/back-<N> - <Title>.md``, the next
    number over every task it counts (read again under the repository lock), the
    repository's default status unless one is given."""
    layout = repo.config.layout
    with repository_lock(repo.task_dir):
        scan = scan_source(repo.task_dir, repo.config.ignore)
        found, _drafts = normalized_scan(scan.result, layout, repo.task_dir, scan.bodies)
        every = (*found.tasks, *found.archived)
        known = {task.id for task in every} | {p.task_id for p in found.broken if p.task_id}
        numbers = [layout.number_of(task_id) for task_id in known]
        task_id = layout.canonical_id(str(max([n for n in numbers if n is not None] + [0]) + 1))
        for field in ("dependencies", "parent"):
            value = fields.get(field)
            refs = [value] if isinstance(value, str) else list(value or ())
            check_references(task_id, field, refs, known)
        folder = repo.task_dir / TASKS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / new_backlog_name(task_id, str(fields["title"]))
        text = new_backlog_text(task_id, {**fields, "body": body}, layout, now)
        try:
            atomic_write_text(path, text, exclusive=True)
        except FileExistsError:
            raise TaskToolError(f"{path} already exists", code="task.exists") from None
    return _read_back(repo, path, task_id)


def _read_back(repo: Repository, path: Path, task_id: str) -> Task:
    from tasktool.files.parsing.backlogmd import backlog_task
    from tasktool.files.scanning.scan import read_entry

    parsed = read_entry(str(repo.task_dir), str(path))
    if not isinstance(parsed, Task):
        raise TaskToolError(f"{path} was written but does not read back", code="task.conflict")
    task = backlog_task(parsed, repo.config.layout)
    if task.id != task_id:
        raise TaskToolError(f"{path} was written but does not read back", code="task.conflict")
    return task
