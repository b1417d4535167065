"""Writing tasks: update, create, remove, archive and renumber, each atomic and locked.

Every function re-reads the file it changes while holding the task's lock
(``.tasktool/locks/``), so concurrent writers (CLI processes, any long-running
front end) serialize instead of losing each other's updates.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from tasktool.files.caches import signature
from tasktool.files.parsing.backlogmd import backlog_task, backlog_updates
from tasktool.files.parsing.house_style import HouseStyle, learn_style
from tasktool.files.parsing.roundtrip import apply_frontmatter, new_task_text
from tasktool.files.parsing.taskfile import is_safe_id, task_filename
from tasktool.files.scanning.scan import (
    ARCHIVE_DIR,
    is_scanned_folder,
    parse_entry,
    read_entry,
    scan_tasks,
)
from tasktool.files.storage import (
    atomic_write_text,
    remove_stale_temps,
    repository_lock,
    task_lock,
)
from tasktool.model.config import Config
from tasktool.model.errors import TaskToolError
from tasktool.model.ids import next_id
from tasktool.model.limits import check_fields_size
from tasktool.model.task import Task
from tasktool.planning.repository import WORKLOG_DIR, Repository, active_place
from tasktool.planning.writing.changes import (
    REMOVE,
    TaskChange,
    check_references,
    check_text,
    check_value,
    plan_create,
    plan_update,
)
from tasktool.planning.writing.foreign import create_foreign, incoming, incoming_fields


def today() -> str:
    """Today's date (UTC) as ``YYYY-MM-DD``."""
    return dt.datetime.now(dt.UTC).date().isoformat()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _signature(path: Path) -> bytes:
    return signature.of(os.stat(path))


def _read(path: Path, task_id: str) -> tuple[str, bytes]:
    """The file's text and the signature it had before being read."""
    try:
        seen = _signature(path)
        # Bytes, then decode: text mode would turn CRLF into LF and rewrite the whole body.
        return path.read_bytes().decode("utf-8"), seen
    except UnicodeDecodeError as exc:
        raise TaskToolError(
            f"task {task_id}: {path} is not UTF-8 ({exc})", code="task.unreadable"
        ) from None
    except OSError as exc:
        raise TaskToolError(
            f"task {task_id}: cannot read {path}: {exc.strerror or exc}", code="task.unreadable"
        ) from None


def _conflict(task_id: str) -> TaskToolError:
    return TaskToolError(
        f"task {task_id} changed on disk while being edited; nothing written, try again",
        code="task.conflict",
    )


def _parsed(repo: Repository, path: Path, task_id: str, text: str | None = None) -> Task:
    """The task in ``path`` (read now, or parsed from ``text``), which must still be it."""
    if text is None:
        parsed = read_entry(str(repo.task_dir), str(path))
    else:
        parsed = parse_entry(str(repo.task_dir), str(path), text)
    layout = repo.config.layout
    if isinstance(parsed, Task) and layout.foreign:
        parsed = backlog_task(parsed, layout)
    if not isinstance(parsed, Task) or parsed.id != task_id:
        raise _conflict(task_id)
    return parsed


def _replace(path: Path, text: str, seen: bytes, task_id: str) -> None:
    """Write ``text`` unless the file changed since it was read (an editor that does not
    take our lock saved it meanwhile: overwriting would lose that save)."""
    try:
        unchanged = _signature(path) == seen
    except OSError:
        unchanged = False
    if not unchanged:
        raise _conflict(task_id)
    atomic_write_text(path, text)


def update_task(repo: Repository, task_id: str, change: TaskChange) -> Task:
    """Apply ``change`` to the task's file (see
    :func:`tasktool.planning.writing.changes.plan_update`); in another tool's layout, in its
    terms (:mod:`tasktool.planning.writing.foreign`)."""
    task = repo.local(task_id)
    path, task_id, layout = Path(task.file_path), task.id, repo.config.layout
    change = incoming(change, layout, repo.resolve)
    with task_lock(repo.task_dir, task_id):
        text, seen = _read(path, task_id)
        current = _parsed(repo, path, task_id, text)
        updates = plan_update(current, change, repo.config, repo.ids, today())
        if layout.foreign:
            updates = backlog_updates(updates, layout, _now(), remove=REMOVE)
        edited = apply_frontmatter(text, updates, source=str(path), body=change.body)
        _replace(path, edited, seen, task_id)
        remove_stale_temps(path.parent)  # a killed writer's leftovers (see stale_temps)
        return _parsed(repo, path, task_id)


def _group_folder(repo: Repository, group: str) -> Path:
    """``<task dir>/<group>``, refused when a task written there would not be listed: a
    path outside the task directory, or a hidden, skipped or ignored folder (its id would
    then be handed out again). Symlinks are resolved first, since the scan does not follow
    them: a linked folder leading out of the task directory (or into a hidden one) is
    refused, and one leading to another folder of it gives that folder."""
    relative = group.rstrip("/")
    parts = relative.split("/")
    resolved = _resolved_group(repo, relative)
    if (
        os.path.isabs(group)
        or any(part in {"", ".", ".."} for part in parts)
        or not is_scanned_folder(relative, repo.config.ignore)
        or resolved is None
        or not is_scanned_folder(resolved, repo.config.ignore)
    ):
        raise TaskToolError(
            f"invalid group {group!r}: name a folder below the task directory that is not "
            "hidden, skipped or ignored (no '..', no absolute path, no link leading out)",
            code="task.invalid_group",
        )
    return repo.task_dir / resolved


def _resolved_group(repo: Repository, relative: str) -> str | None:
    """``relative`` with links resolved, relative to the (resolved) task directory;
    ``None`` when it leads out of it."""
    root = Path(os.path.realpath(repo.task_dir))
    target = Path(os.path.realpath(repo.task_dir / relative))
    if target == root or not target.is_relative_to(root):
        return None
    return target.relative_to(root).as_posix()


class NewTask(msgspec.Struct, frozen=True, kw_only=True):
    """One task for :func:`create_tasks`."""

    fields: dict[str, Any]
    body: str = ""
    group: str | None = None


def _check_fields(fields: dict[str, Any], body: str, config: Config) -> None:
    check_fields_size(fields, body)
    for field, value in fields.items():
        if isinstance(value, str):
            check_value(field, value, config)
        else:
            for item in value or ():
                check_text(field, str(item))


def _write_new(
    repo: Repository,
    existing: set[str],
    task: NewTask,
    task_id: str | None,
    *,
    style: HouseStyle,
    swept: set[Path],
) -> Task:
    """Write one new task file in the repository's ``style``; the caller holds the
    repository lock and ``existing`` holds every id taken (this one is added). The
    folder's stale temporary files are removed once per batch (``swept`` holds the folders
    done)."""
    fields = task.fields
    if task_id is None:
        task_id = next_id(repo.config, existing)
    elif not is_safe_id(task_id):
        raise TaskToolError(
            f"invalid id {task_id!r}: use letters, digits, '.', '_' and '-'",
            code="task.invalid_id",
        )
    elif task_id in existing:
        raise TaskToolError(f"a task with id {task_id!r} already exists", code="task.exists")
    for field in ("dependencies", "parent"):
        value = fields.get(field)
        refs = [value] if isinstance(value, str) else list(value or ())
        check_references(task_id, field, refs, existing)
    folder = _group_folder(repo, task.group) if task.group else repo.task_dir
    path = folder / task_filename(task_id, str(fields["title"]))
    folder.mkdir(parents=True, exist_ok=True)
    data = {"id": task_id, **plan_create(fields, today())}
    try:
        atomic_write_text(path, new_task_text(data, task.body, style), exclusive=True)
    except FileExistsError:
        raise TaskToolError(f"{path} already exists", code="task.exists") from None
    existing.add(task_id)
    if folder not in swept:
        swept.add(folder)
        remove_stale_temps(folder)
    return _parsed(repo, path, task_id)


def _taken(repo: Repository) -> tuple[set[str], HouseStyle]:
    """Every id taken now: this worktree's files re-scanned (call inside the lock: another
    process may have taken an id meanwhile), and the sibling worktrees' ids; and the
    style of those files, which new ones follow."""
    found = scan_tasks(repo.task_dir, repo.config.ignore)
    style = learn_style([task.file_path for task in found.tasks + found.archived])
    return set(found.taken_ids) | repo.sibling_ids, style


def create_task(
    repo: Repository,
    fields: dict[str, Any],
    *,
    body: str = "",
    group: str | None = None,
    task_id: str | None = None,
) -> Task:
    """Write a new task file ``<task dir>/[<group>/]<id>-<slug>.md``; the id comes from the
    configured strategy unless given. Fields are checked like ``set`` checks them. In
    another tool's layout, written its way
    (:func:`~tasktool.planning.writing.foreign.create_foreign`)."""
    layout = repo.config.layout
    fields = incoming_fields(fields, layout, repo.resolve)
    _check_fields(fields, body, repo.config)
    if layout.foreign:
        return create_foreign(repo, fields, body, _now())
    with repository_lock(repo.task_dir):
        existing, style = _taken(repo)
        new = NewTask(fields=fields, body=body, group=group)
        return _write_new(repo, existing, new, task_id, style=style, swept=set())


def create_tasks(repo: Repository, batch: Sequence[NewTask]) -> list[Task | TaskToolError]:
    """:func:`create_task` for many tasks under one lock and one scan (a scan per task makes
    an import of hundreds quadratic). Ids come from the configured strategy; a task that
    cannot be written has its error in its place, and the others are still written."""
    if repo.config.layout.foreign:
        return [_create_one(repo, task) for task in batch]
    results: list[Task | TaskToolError] = []
    swept: set[Path] = set()
    with repository_lock(repo.task_dir):
        existing, style = _taken(repo)
        for task in batch:
            try:
                fields = incoming_fields(task.fields, repo.config.layout, repo.resolve)
                task = msgspec.structs.replace(task, fields=fields)  # noqa: PLW2901
                _check_fields(task.fields, task.body, repo.config)
                results.append(_write_new(repo, existing, task, None, style=style, swept=swept))
            except TaskToolError as exc:
                results.append(exc)
            except OSError as exc:
                where = f" {exc.filename}" if exc.filename else ""
                results.append(TaskToolError(f"{exc.strerror or exc}:{where}", code="os.error"))
    return results


def _create_one(repo: Repository, task: NewTask) -> Task | TaskToolError:
    try:
        return create_task(repo, task.fields, body=task.body)
    except TaskToolError as exc:
        return exc


def remove_task(repo: Repository, task_id: str, *, force: bool = False) -> list[Path]:
    """Delete the task file and its worklog; refuses while other tasks reference it."""
    task = repo.local(task_id)
    task_id = task.id
    referencing = repo.graph.references(task_id)
    if referencing and not force:
        raise TaskToolError(
            f"task {task_id} is referenced by {', '.join(referencing)}; use --force to remove it",
            code="task.referenced",
        )
    removed: list[Path] = []
    with task_lock(repo.task_dir, task_id):
        paths = [Path(task.file_path)]
        if is_safe_id(task_id):  # an id like "../x" must not reach outside .worklogs/
            paths.append(repo.worklog_path(task_id))
        for path in paths:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path)
    return removed


def archive_target(repo: Repository, source: Path) -> Path:
    """Where archiving puts a file: the ``archive/`` folder of its own group folder when
    that exists (taskmd's layout, ``tasks/cli/archive/``), else ``<task dir>/archive/``
    keeping its group folder."""
    folder = source.parent
    if folder != repo.task_dir and (folder / ARCHIVE_DIR).is_dir():
        return folder / ARCHIVE_DIR / source.name
    return repo.task_dir / ARCHIVE_DIR / source.relative_to(repo.task_dir)


def _move_worklog(old: Path, new: Path) -> None:
    """Move a worklog kept next to its task file (taskmd's per-folder ``.worklogs/``)."""
    new.parent.mkdir(parents=True, exist_ok=True)
    if new.exists():
        raise TaskToolError(f"{new} already exists", code="task.exists")
    os.replace(old, new)


def _move_task(repo: Repository, task_id: str, source: Path, target: Path) -> None:
    """Move a task file (never over another) and a worklog kept next to it."""
    with task_lock(repo.task_dir, task_id):
        if target.exists():
            raise TaskToolError(f"{target} already exists", code="task.exists")
        target.parent.mkdir(parents=True, exist_ok=True)
        log = repo.worklog_path(task_id) if is_safe_id(task_id) else None
        os.replace(source, target)
        if log is not None and log.parent.parent == source.parent and log.exists():
            _move_worklog(log, target.parent / WORKLOG_DIR / log.name)


def archive_task(repo: Repository, task_id: str) -> Path:
    """Move the task file to its archive folder (see :func:`archive_target`), and a
    worklog kept next to it along with it."""
    task = repo.local(task_id)
    task_id = task.id
    if task.archived:
        raise TaskToolError(f"task {task_id} is already archived", code="task.archived")
    source = Path(task.file_path)
    target = archive_target(repo, source)
    _move_task(repo, task_id, source, target)
    return target


def restore_task(repo: Repository, task_id: str) -> Path:
    """Move an archived task back among the active ones (the inverse of
    :func:`archive_task`), and a worklog kept next to it; refuses when an active task
    has the id or the target file exists."""
    task_id = repo.resolve(task_id)
    copies = [task for task in repo.all_tasks if task.id == task_id]
    if not copies:
        repo.get(task_id)  # task.not_found, or task.broken naming the file
    active = [task.file_path for task in copies if not task.archived]
    if active:
        raise TaskToolError(
            f"task {task_id} is not archived, or an active task has its id: {', '.join(active)}",
            code="task.exists",
        )
    task = repo.local(task_id)  # several archived copies: task.ambiguous_id
    source = Path(task.file_path)
    target = active_place(repo.task_dir, source)
    _move_task(repo, task_id, source, target)
    return target


def renumber_task(repo: Repository, task: Task, updates: dict[str, Any]) -> Path:
    """Rewrite a task's id (and references) and rename ``<old id>-slug.md`` to the new id."""
    path = Path(task.file_path)
    new_id = str(updates["id"])
    with task_lock(repo.task_dir, task.id), task_lock(repo.task_dir, new_id):
        text, seen = _read(path, task.id)
        _replace(path, apply_frontmatter(text, updates, source=str(path)), seen, task.id)
        if path.name.startswith(f"{task.id}-"):
            target = path.with_name(new_id + path.name[len(task.id) :])
            if not target.exists():
                os.replace(path, target)
                return target
    return path


__all__ = [
    "NewTask",
    "archive_target",
    "archive_task",
    "create_task",
    "create_tasks",
    "remove_task",
    "renumber_task",
    "restore_task",
    "today",
    "update_task",
]
