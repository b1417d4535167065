"""``rm``, ``archive``, ``next-id`` and ``deduplicate``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from tasktool.cli.commands.base import (
    GlobalOptions,
    data_format,
    format_option,
    load_repository,
    output,
    output_format,
    split_values,
)
from tasktool.cli.commands.shell import complete_ids
from tasktool.model.errors import TaskToolError
from tasktool.model.ids import next_id
from tasktool.model.task import RESOLVED_STATUSES, Task
from tasktool.planning.deduplicate import deduplicate
from tasktool.planning.repository import Repository
from tasktool.planning.writes import archive_target, archive_task, remove_task, restore_task
from tasktool.present.render import emit_text


@click.command("rm")
@click.argument("task_id", metavar="ID", shell_complete=complete_ids)
@click.option("--force", is_flag=True, help="Remove even while other tasks reference it.")
@click.pass_obj
def rm_command(options: GlobalOptions, /, *, task_id: str, force: bool) -> None:
    """Delete a task file and its worklog; refuses while other tasks reference it."""
    repo = load_repository(options, bodies=False)
    for path in remove_task(repo, task_id, force=force):
        options.info(f"removed {path}")
    if not options.silent:
        emit_text(f"removed {task_id}")


def _older_than(task: Task, days: int, today: dt.date) -> bool:
    """Whether the task was resolved (else created) more than ``days`` days ago."""
    stamp = task.completed_at or task.cancelled_at or task.created_at
    try:
        return stamp is not None and (today - dt.date.fromisoformat(stamp[:10])).days > days
    except ValueError:
        return False


def _show_plan(
    options: GlobalOptions,
    fmt: str | None,
    repo: Repository,
    chosen: list[Task],
    refused: set[str],
) -> None:
    """``archive --dry-run``: where each task would go; those a real run refuses (not
    completed or cancelled, no ``--force``) marked ``needs_force``."""
    rows: list[dict[str, object]] = []
    for task in chosen:
        target = archive_target(repo, Path(task.file_path))
        needs_force = task.id in refused
        rows.append({"id": task.id, "from": task.file_path, "to": str(target)})
        rows[-1]["needs_force"] = needs_force
        if not data_format(options, fmt):
            note = f" (status {task.status}: needs --force)" if needs_force else ""
            emit_text(f"would archive {task.id}: {task.file_path} -> {target}{note}")
    if data_format(options, fmt):
        output(options, fmt, {"dry_run": True, "archived": rows})


@click.command("archive")
@click.argument("task_ids", metavar="[ID]...", nargs=-1, shell_complete=complete_ids)
@click.option("--all", "all_resolved", is_flag=True, help="Archive every completed/cancelled task.")
@click.option("--status", "statuses", multiple=True, metavar="S", help="Only tasks in status S.")
@click.option("--tag", "tags", multiple=True, metavar="T", help="Only tasks tagged T.")
@click.option(
    "--older-than",
    type=click.IntRange(min=0),
    metavar="DAYS",
    help="Only tasks completed/cancelled (else created) more than DAYS days ago.",
)
@click.option("--force", is_flag=True, help="Archive unresolved tasks too.")
@click.option("--dry-run", is_flag=True, help="Only show what would move.")
@format_option
@click.pass_obj
def archive_command(
    options: GlobalOptions,
    /,
    *,
    task_ids: tuple[str, ...],
    all_resolved: bool,
    statuses: tuple[str, ...],
    tags: tuple[str, ...],
    older_than: int | None,
    force: bool,
    dry_run: bool,
    fmt: str | None,
) -> None:
    """Move tasks under an archive folder: hidden from lists, still satisfying dependencies.

    Give ids, or select with --all, --status, --tag and --older-than (all must hold;
    a selection without --status takes completed and cancelled tasks).
    """
    selecting = all_resolved or statuses or tags or older_than is not None
    if not task_ids and not selecting:
        raise click.UsageError("give task ids, --all, --status, --tag or --older-than")
    repo = load_repository(options, bodies=False)
    if task_ids:
        chosen = [repo.local(task_id) for task_id in task_ids]
    else:
        wanted = set(split_values(statuses)) or set(RESOLVED_STATUSES)
        tagged = set(split_values(tags))
        today = dt.datetime.now(dt.UTC).date()
        chosen = [
            task
            for task in repo.tasks
            if task.status in wanted
            and (not tagged or tagged & set(task.tags))
            and (older_than is None or _older_than(task, older_than, today))
        ]
    unresolved = [task.id for task in chosen if task.status not in RESOLVED_STATUSES]
    if dry_run:  # the plan, unresolved tasks included and marked: nothing is refused yet
        _show_plan(options, fmt, repo, chosen, set(unresolved) if not force else set())
        return
    if unresolved and not force:
        raise TaskToolError(
            f"not completed or cancelled: {', '.join(unresolved)}; use --force to archive anyway",
            code="task.unresolved",
        )
    rows = []
    for task in chosen:
        target = str(archive_task(repo, task.id))
        rows.append({"id": task.id, "from": task.file_path, "to": target})
        options.info(f"archived {task.id} -> {target}")
    if data_format(options, fmt):
        output(options, fmt, {"dry_run": False, "archived": rows})
        return
    if not options.silent:
        click.echo(f"archived {len(chosen)} task(s)")


@click.command("restore")
@click.argument("task_ids", metavar="ID...", nargs=-1, required=True, shell_complete=complete_ids)
@format_option
@click.pass_obj
def restore_command(
    options: GlobalOptions, /, *, task_ids: tuple[str, ...], fmt: str | None
) -> None:
    """Move archived tasks back among the active ones (the inverse of archive).

    Refuses when an active task has the id or the file it would take exists.
    """
    repo = load_repository(options, bodies=False)
    rows = [{"id": task_id, "to": str(restore_task(repo, task_id))} for task_id in task_ids]
    if data_format(options, fmt):
        output(options, fmt, {"restored": rows})
    elif not options.silent:
        for row in rows:
            emit_text(f"restored {row['id']}: {row['to']}")


@click.command("next-id")
@format_option
@click.pass_obj
def next_id_command(options: GlobalOptions, /, *, fmt: str | None) -> None:
    """Print the id the next ``add`` would use (id.strategy)."""
    repo = load_repository(options, bodies=False)
    value = next_id(repo.settings, repo.taken_ids)
    data = {"id": value, "strategy": repo.settings.id_strategy}
    if output_format(options, fmt) == "table":
        click.echo(value)
    else:
        output(options, fmt, data)


@click.command("deduplicate")
@click.option("--dry-run", is_flag=True, help="Only show the renumbering plan.")
@format_option
@click.pass_obj
def deduplicate_command(options: GlobalOptions, /, *, dry_run: bool, fmt: str | None) -> None:
    """Renumber tasks whose ids collide (after merging branches); the oldest keeps its id.

    Renumbered tasks get new ids from id.strategy and their files are renamed;
    their references to other renumbered ids follow them.
    """
    repo = load_repository(options, bodies=False)
    rows = deduplicate(repo, dry_run=dry_run)
    if not rows and output_format(options, fmt) == "table":
        click.echo("no duplicate ids")
        return
    output(
        options,
        fmt,
        rows,
        columns=("old_id", "new_id", "file_path", "kept_by"),
        title="plan (dry run)" if dry_run else None,
    )
