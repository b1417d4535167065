"""The ``sync`` Click command: import GitHub issues and Jira tickets as task files.

The CLI group loads this command by name (:data:`tasktool.cli.commands.COMMANDS`);
it does not import the CLI either: the group's global options arrive as
``ctx.obj``, used through the small :class:`CliOptions` protocol.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Protocol

import click

from tasktool.config.sync import SourceConfig
from tasktool.model.errors import TaskToolError
from tasktool.model.extras import require
from tasktool.planning.repository import Repository
from tasktool.present.render import FORMATS, emit_data, emit_text, for_terminal
from tasktool.sync import CONFLICT_MODES, SyncReport, configured_sources, run_sync
from tasktool.sync.engine import Progress

__all__ = ["CliOptions", "sync_command"]


class CliOptions(Protocol):
    """What the command uses of the CLI's global options."""

    format: str | None
    loud: bool
    silent: bool

    def repository(self) -> Repository: ...

    def warn(self, message: str) -> None: ...


@contextlib.contextmanager
def _progress(enabled: bool) -> Iterator[Progress | None]:
    """A live count of items per source on a terminal's stderr; nothing otherwise."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress as Bar
    from rich.progress import SpinnerColumn, TaskID, TextColumn

    with Bar(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def advance(source: str, done: int) -> None:
            if source not in tasks:
                tasks[source] = bar.add_task(source)
            bar.update(tasks[source], description=f"{source}: {done} items")

        yield advance


def _print_report(options: CliOptions, report: SyncReport) -> None:
    for source in report.sources:
        counted: dict[tuple[str, str], int] = {}
        for missing in source.unmapped:
            key = (missing.field, missing.value)
            counted[key] = counted.get(key, 0) + 1
        for (field, value), count in counted.items():
            options.warn(
                f"{source.name}: {field} {value!r} is not in field_map.{field} "
                f"({count} item{'s' if count > 1 else ''}); the field is left as it is"
            )
        for outcome in source.outcomes:
            if outcome.action in {"conflict", "error"} or (
                options.loud and outcome.action != "unchanged"
            ):
                task = f" (task {outcome.task_id})" if outcome.task_id else ""
                code = f" [{outcome.code}]" if outcome.code else ""
                note = f": {outcome.note}" if outcome.note else ""
                emit_text(
                    f"{source.name}: {outcome.action} {outcome.external_id}{task}{note}{code}"
                )
        for external_id in source.removed_remotely:
            emit_text(
                f"{source.name}: {external_id} is no longer returned by the source "
                "(deleted, moved or filtered out); its task is kept"
            )
        if source.error:
            line = f"error: {source.error} [{source.error_code}]"
            click.echo(for_terminal(line, sys.stderr), err=True)
    prefix = "dry run (nothing written): " if report.dry_run else ""
    click.echo(prefix + report.summary())


def _sources(
    options: CliOptions, repo: Repository, only: str | None, *, dry_run: bool
) -> tuple[SourceConfig, ...]:
    """The sources to sync. A dry run without any configured answers that nothing would
    change (with a note on stderr), so a first look on a fresh repository does not fail;
    a real run refuses (``sync.no_sources``)."""
    try:
        return configured_sources(repo, only)
    except TaskToolError as exc:
        if not dry_run or exc.code != "sync.no_sources":
            raise
        options.warn(f"{exc.message}: nothing to sync [{exc.code}]")
        return ()


@click.command("sync")
@click.option("--source", "source_name", metavar="NAME", help="Sync only this source.")
@click.option("--dry-run", is_flag=True, help="Report what would change; write nothing.")
@click.option(
    "--conflict",
    type=click.Choice(CONFLICT_MODES),
    default="skip",
    show_default=True,
    help="A task edited locally whose item also changed remotely: skip it, take the remote "
    "version, or keep the local one.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="Output format (default: the global --format, else table).",
)
@click.pass_obj
def sync_command(
    options: CliOptions,
    /,
    *,
    source_name: str | None,
    dry_run: bool,
    conflict: str,
    fmt: str | None,
) -> None:
    """Import issues from the configured sync sources (GitHub, Jira) as task files.

    New items become tasks in the source's output_dir; changed items are updated in
    place; items edited locally and remotely are conflicts (see --conflict). Prints
    'created N, updated N, unchanged N, conflicts N, errors N'; exits 1 when there
    were errors.
    """
    require("sync")  # httpx, imported only once a source is fetched
    repo = options.repository()
    sources = _sources(options, repo, source_name, dry_run=dry_run)
    chosen = fmt or options.format or "table"
    with _progress(chosen == "table" and sys.stderr.isatty() and not options.silent) as progress:
        report = run_sync(
            repo,
            sources,
            env=os.environ,
            mode=conflict,  # type: ignore[arg-type]  # click.Choice(CONFLICT_MODES)
            dry_run=dry_run,
            progress=progress,
        )
    if chosen == "table":
        _print_report(options, report)
    else:
        emit_data(report.as_data(), chosen)
    if report.totals()["errors"]:
        raise click.exceptions.Exit(1)
