"""``deduplicate``: renumber colliding ids, the same way in a dry run as in the real run.

A dry run stores its plan in ``<task dir>/.tasktool/deduplicate-plan.json``; the next
real run reuses it while the same copies still collide and the new ids are still free,
so the ids a dry run prints are the ids the real run assigns (with the ``random`` and
``ulid`` strategies a fresh plan would draw new ones). A worklog kept next to a renumbered
copy (taskmd's per-folder ``.worklogs/``) is renamed along with it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import msgspec

from tasktool.files.storage import atomic_write_bytes, ensure_state_dir, repository_lock
from tasktool.model.ids import Renumbering, plan_deduplicate, rewrite_references
from tasktool.planning.repository import WORKLOG_DIR, Repository
from tasktool.planning.writing.writes import renumber_task

__all__ = ["deduplicate"]

_PLAN_FILE = "deduplicate-plan.json"


def _stored(repo: Repository, fresh: list[Renumbering]) -> list[Renumbering] | None:
    """The stored plan when it renumbers exactly the copies ``fresh`` does, to free ids."""
    path = repo.task_dir / ".tasktool" / _PLAN_FILE
    try:
        stored = msgspec.json.decode(path.read_bytes(), type=list[Renumbering])
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    shape = sorted((step.old_id, step.file_path, step.kept_by) for step in fresh)
    if sorted((step.old_id, step.file_path, step.kept_by) for step in stored) != shape:
        return None
    new_ids = [step.new_id for step in stored]
    if len(set(new_ids)) != len(new_ids) or set(new_ids) & repo.taken_ids:
        return None
    return stored


def _store(repo: Repository, plan: list[Renumbering]) -> None:
    state = ensure_state_dir(repo.task_dir)
    atomic_write_bytes(state / _PLAN_FILE, msgspec.json.encode(plan), sync=False)


def _forget(repo: Repository) -> None:
    with contextlib.suppress(FileNotFoundError):
        (repo.task_dir / ".tasktool" / _PLAN_FILE).unlink()


def _carry_worklog(step: Renumbering) -> None:
    """Rename ``<copy's folder>/.worklogs/<old>.md`` to ``<new>.md``, unless the copy that
    keeps the id shares that folder (the worklog is then as much its own)."""
    folder = Path(step.file_path).parent
    if Path(step.kept_by).parent == folder:
        return
    old = folder / WORKLOG_DIR / f"{step.old_id}.md"
    new = old.with_name(f"{step.new_id}.md")
    if old.is_file() and not new.exists():
        os.replace(old, new)


def deduplicate(repo: Repository, *, dry_run: bool) -> list[dict[str, Any]]:
    """Renumber every copy of a colliding id but the oldest; rows of ``old_id``,
    ``new_id``, ``file_path`` (after the rename) and ``kept_by``."""
    with repository_lock(repo.task_dir):
        tasks = repo.all_tasks
        mtimes = {task.file_path: os.stat(task.file_path).st_mtime for task in tasks}
        fresh = plan_deduplicate(tasks, repo.config, mtimes)
        plan = _stored(repo, fresh) or fresh
        rows: list[dict[str, Any]] = msgspec.to_builtins(plan)
        if dry_run:
            if plan:
                _store(repo, plan)
            return rows
        by_path = {task.file_path: task for task in tasks}
        for row, step in zip(rows, plan, strict=True):
            task = by_path[step.file_path]
            row["file_path"] = str(renumber_task(repo, task, rewrite_references(task, plan)))
            _carry_worklog(step)
        _forget(repo)
        return rows
