"""Upkeep: ``validate`` (config and task checks), ``todos`` (markers in source
comments) and ``worklog`` (dated notes per task).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from tasktool.cli.commands.base import (
    GlobalOptions,
    data_format,
    format_option,
    load_repository,
    output,
    output_format,
)
from tasktool.cli.commands.shell import complete_ids
from tasktool.cli.facts import facts
from tasktool.config import CONFIG_NAME, load_config
from tasktool.planning.repository import Repository, loader
from tasktool.present.documents import validation_report
from tasktool.present.render import emit_data, emit_text

__all__ = ["todos_command", "validate_command", "worklog_command"]


def _project_root(config_file: str | None) -> Path:
    """The project config's directory; the current directory without one (or with the home file)."""
    if config_file is not None:
        path = Path(config_file)
        home = Path(os.environ.get("HOME") or Path.home())
        if path != home / CONFIG_NAME:
            return path.parent
    return Path.cwd()


def _inside(folder: Path, root: Path) -> tuple[str, ...]:
    """``folder`` relative to ``root`` when strictly inside it (the task directory, which
    ``todos`` does not read), else nothing."""
    try:
        relative = folder.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return ()
    return (relative.as_posix(),) if relative.parts else ()


@facts(paged=True)
@click.command("todos")
@click.argument("path", required=False, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--exclude",
    "excludes",
    multiple=True,
    metavar="GLOB",
    help="Skip matching files or directories (repeatable; adds to todos.exclude).",
)
@format_option
@click.pass_obj
def todos_command(
    options: GlobalOptions, /, *, path: str | None, excludes: tuple[str, ...], fmt: str | None
) -> None:
    """List TODO, FIXME, HACK, XXX and BUG markers found in source comments.

    Scans PATH (default: the project root). Skips git-ignored and binary
    files, the built-in skip list, ignore, todos.exclude and --exclude.
    """
    # Imported here, as scan_files below: they load subprocess, which validate does not need.
    from tasktool.files.source_files import discover_files, read_source

    loaded = load_config(options.overrides())
    loaded.require_valid()
    options.silent = loaded.config.quiet
    options.note_config(loaded.file)
    config = loaded.config
    root = Path(path) if path else _project_root(loaded.file)
    files = discover_files(
        root,
        ignore=config.ignore,
        excludes=(*config.todos_exclude, *excludes),
        skip_dirs=_inside(Path(config.task_dir), root),
    )
    # Imported here: it compiles its comment patterns on import, which the other
    # commands of this module (validate) need not pay.
    from tasktool.planning.todos import scan_files

    found = scan_files(files, lambda relative: read_source(root, relative))
    if not found and output_format(options, fmt) == "table":
        emit_text(f"no TODO, FIXME, HACK, XXX or BUG markers under {root}")
        return
    rows = [
        {"id": t.id, "marker": t.marker, "where": f"{t.file}:{t.line}", "text": t.text}
        for t in found
    ]
    output(
        options,
        fmt,
        [todo.to_json() for todo in found],
        rows=rows,
        columns=("id", "marker", "where", "text"),
    )


@facts(paged=True, reads=True)
@click.command("validate")
@click.option("--strict", is_flag=True, help="Exit 2 when there are warnings (and no errors).")
@format_option
@click.pass_obj
@click.pass_context
def validate_command(
    ctx: click.Context, options: GlobalOptions, /, *, strict: bool, fmt: str | None
) -> None:
    """Check the config and every task; exit 1 on errors (2 on warnings with --strict).

    Task checks: required fields, status/priority/type values, effort
    vocabulary, dates, duplicate ids (all paths), missing dependencies and
    parents, dependency and parent cycles (the cycle printed), unknown phases
    and scopes; plus broken task-like files and every config rule.
    """
    plain = loader(options.overrides())

    def load(*, tolerant: bool = False) -> Repository:
        repo = options.process.load(lambda: plain(tolerant=tolerant))
        options.silent = repo.config.quiet
        options.note_config(repo.loaded.file)
        note = repo.absent_note()  # valid, with no tasks: said once, as every read says it
        if note is not None:
            options.warn(f"{note.message} [{note.code}]")
        return repo

    report = validation_report(load)
    rows = [
        {"level": d.severity, "code": d.code, "task": d.task_id, "message": d.message}
        for d in (*report.errors, *report.warnings)
    ]
    table = output_format(options, fmt) == "table"
    if rows or not table:
        columns = ("level", "code", "task", "message")
        output(options, fmt, report.to_json(), rows=rows, columns=columns)
    if table:
        verdict = "invalid" if report.errors else "valid"
        emit_text(f"{verdict}: {len(report.errors)} errors, {len(report.warnings)} warnings")
    if report.errors:
        ctx.exit(1)
    if strict and report.warnings:
        ctx.exit(2)


@facts(paged=True)
@click.command("worklog")
@click.argument("task_id", metavar="ID", shell_complete=complete_ids)
@click.option("--add", "text", metavar="TEXT", help="Append an entry (needs worklogs: true).")
@format_option
@click.pass_obj
def worklog_command(
    options: GlobalOptions, /, *, task_id: str, text: str | None, fmt: str | None
) -> None:
    """Show a task's worklog, or append to it with --add.

    Entries live in <task dir>/.worklogs/<id>.md under "## <UTC timestamp>"
    headings. Reading always works; --add writes only when the config says
    worklogs: true, and otherwise refuses and says why.
    """
    from tasktool.planning.writing.worklog import (  # not validate's
        add_entry,
        format_entry,
        read_worklog,
    )

    repo = load_repository(options)
    # Appending writes here: a task only a sibling worktree holds is refused.
    task = repo.get(task_id) if text is None else repo.local(task_id)
    if text is not None:
        add_entry(repo, task.id, text)
    log = read_worklog(repo, task.id)
    structured = data_format(options, fmt)
    if structured:
        emit_data(log.to_json(), structured)
        return
    if not log.entries:
        emit_text(f"no worklog entries for task {task.id}")
    for entry in log.entries:
        emit_text(format_entry(entry))
