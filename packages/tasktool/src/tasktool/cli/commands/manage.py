"""``rm``, ``archive``, ``next-id`` and ``deduplicate``."""

from __future__ import annotations

import datetime as dt

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
from tasktool.model.ids import next_id
from tasktool.planning.writing.archive import (
    ArchiveMove,
    archive_plan,
    choose_to_archive,
    refuse_unresolved,
)
from tasktool.planning.writing.deduplicate import deduplicate
from tasktool.planning.writing.writes import archive_task, remove_task, restore_task
from tasktool.present.render import emit_text

__all__ = [
    "archive_command",
    "deduplicate_command",
    "next_id_command",
    "restore_command",
    "rm_command",
]


@click.command("rm")
@click.argument("task_id", metavar="ID", shell_complete=complete_ids)
@click.option("--force", is_flag=True, help="Remove even while other tasks reference it.")
@click.pass_obj
def rm_command(options: GlobalOptions, /, *, task_id: str, force: bool) -> None:
    """Delete a task file and its worklog; refuses while other tasks reference it."""
    repo = load_repository(options)
    for path in remove_task(repo, task_id, force=force):
        options.info(f"removed {path}")
    if not options.silent:
        emit_text(f"removed {task_id}")


def _show_plan(options: GlobalOptions, fmt: str | None, plan: list[ArchiveMove]) -> None:
    """``archive --dry-run``: where each task would go; those a real run refuses (not
    completed or cancelled, no ``--force``) marked ``needs_force``."""
    if data_format(options, fmt):
        output(options, fmt, {"dry_run": True, "archived": [move.to_json() for move in plan]})
        return
    for move in plan:
        task = move.task
        note = f" (status {task.status}: needs --force)" if move.needs_force else ""
        emit_text(f"would archive {task.id}: {task.file_path} -> {move.target}{note}")


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
    repo = load_repository(options)
    chosen = choose_to_archive(
        repo,
        task_ids,
        statuses=split_values(statuses),
        tags=split_values(tags),
        older_than=older_than,
        today=dt.datetime.now(dt.UTC).date(),
    )
    plan = archive_plan(repo, chosen, force=force)
    if dry_run:  # the plan, unresolved tasks included and marked: nothing is refused yet
        _show_plan(options, fmt, plan)
        return
    refuse_unresolved(plan)
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
    repo = load_repository(options)
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
    repo = load_repository(options)
    value = next_id(repo.config, repo.taken_ids)
    data = {"id": value, "strategy": repo.config.id_strategy}
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
    repo = load_repository(options)
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
