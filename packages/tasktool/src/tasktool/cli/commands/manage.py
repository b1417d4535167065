"""``rm``, ``archive``, ``next-id`` and ``deduplicate``."""

from __future__ import annotations

import click

from tasktool.cli.commands.base import (
    GlobalOptions,
    format_option,
    load_repository,
    output,
    output_format,
)
from tasktool.cli.commands.shell import complete_ids
from tasktool.model.errors import TaskToolError
from tasktool.model.ids import next_id
from tasktool.model.task import RESOLVED_STATUSES
from tasktool.planning.deduplicate import deduplicate
from tasktool.planning.writes import archive_task, remove_task


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
        click.echo(f"removed {task_id}")


@click.command("archive")
@click.argument("task_ids", metavar="[ID]...", nargs=-1, shell_complete=complete_ids)
@click.option("--all", "all_resolved", is_flag=True, help="Archive every completed/cancelled task.")
@click.option("--force", is_flag=True, help="Archive unresolved tasks too.")
@click.option("--dry-run", is_flag=True, help="Only show what would move.")
@click.pass_obj
def archive_command(
    options: GlobalOptions,
    /,
    *,
    task_ids: tuple[str, ...],
    all_resolved: bool,
    force: bool,
    dry_run: bool,
) -> None:
    """Move tasks under <task dir>/archive/: hidden from lists, still satisfying dependencies."""
    if not task_ids and not all_resolved:
        raise click.UsageError("give task ids or --all")
    repo = load_repository(options)
    if all_resolved:
        chosen = [task for task in repo.tasks if task.status in RESOLVED_STATUSES]
    else:
        chosen = [repo.get(task_id) for task_id in task_ids]
    unresolved = [task.id for task in chosen if task.status not in RESOLVED_STATUSES]
    if unresolved and not force:
        raise TaskToolError(
            f"not completed or cancelled: {', '.join(unresolved)}; use --force to archive anyway",
            code="task.unresolved",
        )
    for task in chosen:
        if dry_run:
            click.echo(f"would archive {task.id}: {task.file_path}")
        else:
            target = archive_task(repo, task.id)
            options.info(f"archived {task.id} -> {target}")
    if not dry_run and not options.silent:
        click.echo(f"archived {len(chosen)} task(s)")


@click.command("next-id")
@format_option
@click.pass_obj
def next_id_command(options: GlobalOptions, /, *, fmt: str | None) -> None:
    """Print the id the next ``add`` would use (id.strategy)."""
    repo = load_repository(options)
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
