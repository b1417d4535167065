"""Reconciling a source's items with the task files: create, update, skip or report.

For each item (see :mod:`tasktool.sync.state` for the hashes)::

    no record, no task with its external_id  -> create (id from the configured strategy)
    remote hash unchanged                    -> unchanged (local edits are kept)
    remote changed, file unchanged           -> update the owned fields and body in place
    remote changed, file edited or deleted   -> conflict, resolved by --conflict:
        skip    report it; nothing written, reported again next run
        local   keep the file; remember the remote version (reported again only when
                the remote changes again)
        remote  overwrite the owned fields and body (other keys and comments kept);
                a deleted file is created again

A task that has the item's ``external_id`` but no record (the state file was
lost, or the run was killed before saving it) is adopted: unchanged if it
matches the remote, a conflict otherwise, so an item is never duplicated.
Writes go through :mod:`tasktool.writes` (locks, atomic replace, id
strategy); ``dry_run`` decides everything the same way and writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from tasktool.config.sync import SourceConfig
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task
from tasktool.model.views import BodyReader
from tasktool.planning.repository import Repository
from tasktool.planning.writing.changes import TaskChange
from tasktool.planning.writing.writes import NewTask, create_tasks, update_task
from tasktool.sync.mapping import Desired, desired_task
from tasktool.sync.remote import RemoteItem
from tasktool.sync.report import Action, ConflictMode, Outcome, SourceReport
from tasktool.sync.state import Record, file_hash

#: The frontmatter key naming the source a synced task came from.
SOURCE_KEY = "sync_source"
#: New tasks written per batch (one lock and one directory scan each).
CREATE_BATCH = 100
Progress = Callable[[str, int], None]


def output_group(repo: Repository, config: SourceConfig) -> str | None:
    """``output_dir`` as a folder below the task directory (``None``: the directory itself).

    Elsewhere, synced tasks would not be listed and their ids would be handed out again.
    """
    relative = os.path.relpath(config.output_dir, repo.task_dir)
    if relative == ".":
        return None
    if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
        raise TaskToolError(
            f"sync source {config.name!r}: output_dir {config.output_dir} is outside the task "
            f"directory {repo.task_dir}",
            code="sync.config.output_dir",
        )
    return relative.replace(os.sep, "/")


def _matches(task: Task, desired: Desired, body: BodyReader) -> bool:
    """Whether the task already holds what the remote says (its ``body`` read last)."""
    scalars = all(getattr(task, key) == value for key, value in desired.scalars.items())
    lists = all(getattr(task, key) == value for key, value in desired.lists.items())
    return scalars and lists and body(task).strip("\n") == desired.body.strip("\n")


class Reconciler:
    """One source's pass over the task directory."""

    def __init__(
        self,
        repo: Repository,
        config: SourceConfig,
        records: dict[str, Record],
        *,
        mode: ConflictMode,
        dry_run: bool,
    ) -> None:
        self.repo = repo
        self.config = config
        self.records = records
        self.mode = mode
        self.dry_run = dry_run
        self.group = output_group(repo, config)
        self.by_external = {
            task.external_id: task for task in repo.all_tasks if task.external_id is not None
        }
        self.report = SourceReport(name=config.name, kind=config.kind)
        self.seen: set[str] = set()
        self.pending: list[tuple[Desired, Action, str | None]] = []

    def run(self, items: Iterable[RemoteItem], progress: Progress | None = None) -> SourceReport:
        """Reconcile every item; an error of the source itself ends the pass (recorded)."""
        try:
            for item in items:
                if item.external_id in self.seen:
                    continue  # an item that moved between pages while paging
                self.seen.add(item.external_id)
                outcome = self.reconcile(item)
                if outcome is not None:
                    self.report.outcomes.append(outcome)
                if len(self.pending) >= CREATE_BATCH:
                    self._flush()
                if progress is not None:
                    progress(self.config.name, len(self.seen))
        except TaskToolError as exc:
            self.report.error, self.report.error_code = exc.message, exc.code
            return self.report
        finally:
            self._flush()  # what was fetched before a failure is still written
        self.report.removed_remotely = sorted(set(self.records) - self.seen)
        return self.report

    def _task(self, external_id: str, record: Record | None) -> Task | None:
        if record is not None:
            task = self.repo.by_id.get(record.task_id)
            if task is not None and task.external_id == external_id:
                return task
        return self.by_external.get(external_id)

    def reconcile(self, item: RemoteItem) -> Outcome | None:
        """Decide and apply one item; a failure becomes an ``error`` outcome. A new task is
        queued (``None``): :meth:`_flush` writes the queue in one batch."""
        desired = desired_task(item, self.config.field_map)
        self.report.unmapped.extend(desired.unmapped)
        record = self.records.get(item.external_id)
        try:
            task = self._task(item.external_id, record)
            if task is None and record is None:
                return self._create(desired)
            if task is None:
                assert record is not None
                self._refuse_broken(record.task_id)
                return self._deleted_locally(desired, record)
            if record is None:
                if _matches(task, desired, self.repo.bodies.read):
                    self._remember(task, desired)
                    return self._outcome("unchanged", desired, task, "adopted by external_id")
                return self._conflict(task, desired, None)
            if record.task_id != task.id and not self.dry_run:  # renumbered (deduplicate)
                record = self.records[item.external_id] = Record(
                    task_id=task.id, remote_hash=record.remote_hash, local_hash=record.local_hash
                )
            if record.remote_hash == desired.remote_hash:
                return self._outcome("unchanged", desired, task)
            if file_hash(Path(task.file_path)) == record.local_hash:
                return self._update(task, desired, "updated")
            return self._conflict(task, desired, record)
        except TaskToolError as exc:
            return Outcome(
                external_id=item.external_id, action="error", note=exc.message, code=exc.code
            )
        except OSError as exc:
            message = f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
            return Outcome(
                external_id=item.external_id, action="error", note=message, code="os.error"
            )

    @staticmethod
    def _outcome(action: Action, desired: Desired, task: Task, note: str | None = None) -> Outcome:
        return Outcome(
            external_id=desired.external_id,
            action=action,
            task_id=task.id,
            file=task.file_path,
            note=note,
        )

    def _remember(self, task: Task, desired: Desired, local_hash: str | None = None) -> None:
        if self.dry_run:
            return
        self.records[desired.external_id] = Record(
            task_id=task.id,
            remote_hash=desired.remote_hash,
            local_hash=local_hash if local_hash is not None else file_hash(Path(task.file_path)),
        )

    def _create(
        self, desired: Desired, action: Action = "created", note: str | None = None
    ) -> Outcome | None:
        if self.dry_run:
            return Outcome(external_id=desired.external_id, action=action, note=note)
        self.pending.append((desired, action, note))
        return None

    def _flush(self) -> None:
        """Write the queued new tasks under one lock and one scan of the task directory."""
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        tasks = [
            NewTask(
                fields={
                    **{key: value for key, value in desired.scalars.items() if value is not None},
                    **{key: list(value) for key, value in desired.lists.items() if value},
                    SOURCE_KEY: self.config.name,
                },
                body=desired.body,
                group=self.group,
            )
            for desired, _, _ in batch
        ]
        for (desired, action, note), result in zip(
            batch, create_tasks(self.repo, tasks), strict=True
        ):
            if isinstance(result, TaskToolError):
                self.report.outcomes.append(
                    Outcome(
                        external_id=desired.external_id,
                        action="error",
                        note=result.message,
                        code=result.code,
                    )
                )
                continue
            self._remember(result, desired)
            self.report.outcomes.append(self._outcome(action, desired, result, note))

    def _update(
        self, task: Task, desired: Desired, action: Action, note: str | None = None
    ) -> Outcome:
        if self.dry_run:
            return self._outcome(action, desired, task, note)
        change = TaskChange(
            set=dict(desired.scalars), replace=dict(desired.lists), body=desired.body
        )
        updated = update_task(self.repo, task.id, change)
        self._remember(updated, desired)
        return self._outcome(action, desired, updated, note)

    def _conflict(self, task: Task, desired: Desired, record: Record | None) -> Outcome:
        if self.mode == "remote":
            return self._update(task, desired, "conflict", "edited locally; overwritten by remote")
        if self.mode == "local":
            # The old local hash stays: the file still counts as edited, so the next remote
            # change is a conflict again instead of overwriting the edits.
            kept = record.local_hash if record is not None else ""
            self._remember(task, desired, local_hash=kept)
            return self._outcome("conflict", desired, task, "edited locally; local version kept")
        return self._outcome("conflict", desired, task, "edited locally and remotely; skipped")

    def _refuse_broken(self, task_id: str) -> None:
        """A task whose file no longer parses is not gone: recreating it would duplicate it."""
        for problem in self.repo.broken:
            if problem.task_id == task_id:
                raise TaskToolError(
                    f"task {task_id} is in a file that cannot be read: {problem.message}",
                    code="task.broken",
                )

    def _deleted_locally(self, desired: Desired, record: Record) -> Outcome | None:
        if record.remote_hash == desired.remote_hash:
            return Outcome(
                external_id=desired.external_id,
                action="unchanged",
                task_id=record.task_id,
                note="deleted locally; not recreated",
            )
        if self.mode == "remote":
            return self._create(desired, "conflict", "deleted locally; created again from remote")
        if self.mode == "local" and not self.dry_run:
            self.records[desired.external_id] = Record(
                task_id=record.task_id, remote_hash=desired.remote_hash, local_hash=""
            )
        note = "deleted locally; " + ("kept deleted" if self.mode == "local" else "skipped")
        return Outcome(
            external_id=desired.external_id, action="conflict", task_id=record.task_id, note=note
        )


__all__ = ["SOURCE_KEY", "Progress", "Reconciler", "output_group"]
