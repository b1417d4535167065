"""``add`` and ``set``: creating and editing tasks (checked, locked, atomic)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from tasktool.cli.commands.base import (
    GlobalOptions,
    format_option,
    load_repository,
    output_format,
    split_values,
)
from tasktool.cli.commands.shell import complete_choices, complete_ids
from tasktool.model.task import TASK_TYPES, Priority, Status
from tasktool.model.views import task_view
from tasktool.planning.writing.changes import TaskChange, new_task_fields
from tasktool.planning.writing.writes import create_task, update_task
from tasktool.present.render import emit_data, emit_text

__all__ = [
    "CHOICES",
    "DATES",
    "LISTS",
    "SCALARS",
    "F",
    "add_command",
    "edit_command",
    "set_command",
]

F = TypeVar("F", bound=Callable[..., Any])

#: Scalar fields and their options (value "" clears the field in ``set``).
SCALARS: tuple[tuple[str, str, str], ...] = (
    ("status", "--status", "One of: " + ", ".join(Status)),
    ("priority", "--priority", "One of: " + ", ".join(Priority)),
    ("effort", "--effort", "A value of the effort vocabulary."),
    ("type", "--type", "One of: " + ", ".join(TASK_TYPES)),
    ("owner", "--owner", "Who works on it."),
    ("phase", "--phase", "A phase id."),
    ("parent", "--parent", "The parent task's id."),
    ("external_id", "--external-id", "The id in an external tracker."),
)
DATES = ("created_at", "completed_at", "cancelled_at")
#: List fields: (field, singular option stem).
LISTS: tuple[tuple[str, str], ...] = (
    ("dependencies", "dep"),
    ("tags", "tag"),
    ("touches", "touches"),
    ("context", "context"),
    ("pr", "pr"),
)


#: Values the shell completes for the scalar options that have a fixed vocabulary.
CHOICES: dict[str, tuple[str, ...]] = {
    "status": tuple(Status),
    "priority": tuple(Priority),
    "type": TASK_TYPES,
}


def _scalar_options(function: F) -> F:
    for field, flag, text in reversed(SCALARS):
        complete = complete_choices(CHOICES[field]) if field in CHOICES else None
        function = click.option(flag, field, metavar="VALUE", help=text, shell_complete=complete)(
            function
        )
    return function


def _date_options(function: F) -> F:
    for field, text in reversed(
        (
            ("created_at", "Creation date (default: today)."),
            ("completed_at", "Completion date (normally stamped by the status)."),
            ("cancelled_at", "Cancellation date (normally stamped by the status)."),
        )
    ):
        flag = "--" + field.replace("_", "-")
        function = click.option(flag, field, metavar="YYYY-MM-DD", help=text)(function)
    return function


def _echo_task(options: GlobalOptions, fmt: str | None, view: dict[str, Any], verb: str) -> None:
    chosen = output_format(options, fmt)
    if chosen == "table":
        emit_text(f"{verb} {view['id']}: {view['title']} ({view['file_path']})")
    else:
        emit_data(view, chosen)


@click.command("add")
@click.argument("title")
@_scalar_options
@_date_options
@click.option(
    "--dep",
    "--depends-on",  # taskmd's spelling
    "dependencies",
    multiple=True,
    metavar="ID",
    help="A dependency (repeat or comma-separate).",
)
@click.option("--tag", "--tags", "tags", multiple=True, help="A tag (repeat or comma-separate).")
@click.option("--touches", "touches", multiple=True, metavar="SCOPE", help="A scope it touches.")
@click.option("--context", "context", multiple=True, metavar="PATH", help="A relevant path.")
@click.option("--pr", "pr", multiple=True, metavar="URL", help="A pull request URL.")
@click.option(
    "--group",
    metavar="DIR",
    help="Sub-directory of the task dir to write it in (not hidden, skipped or ignored).",
)
@click.option("--body", default="", help="Markdown body.")
@click.option("--id", "task_id", metavar="ID", help="Use this id instead of generating one.")
@format_option
@click.pass_obj
def add_command(
    options: GlobalOptions,
    /,
    *,
    title: str,
    group: str | None,
    body: str,
    task_id: str | None,
    fmt: str | None,
    **values: Any,
) -> None:
    """Create a task; the id comes from the configured strategy (id.strategy).

    created_at is today unless given; --status completed/cancelled stamps
    completed_at/cancelled_at as set does. Values are checked as set checks them.
    A task directory that does not exist yet (a fresh clone) is created.
    """
    repo = load_repository(options, creating=True)
    fields = new_task_fields(
        title,
        {field: values.get(field) for field in (*(f for f, _, _ in SCALARS), *DATES)},
        {field: split_values(values.get(field) or ()) for field, _stem in LISTS},
    )
    task = create_task(repo, fields, body=body, group=group, task_id=task_id)
    _echo_task(options, fmt, task_view(task), "added")


def _list_options(function: F) -> F:
    # Decorators apply bottom-up: add them in reverse to read add, remove, replace in --help.
    for field, stem in reversed(LISTS):
        plural = stem if stem in {"touches", "context"} else f"{stem}s"
        # The singular adds, as add's --tag/--dep do (and gh's --add-label): set --tag x
        # never drops the other tags; the plural replaces the list.
        adding = (f"--add-{stem}",) if plural == stem else (f"--add-{stem}", f"--{stem}")
        for flags, name, metavar, text in (
            ((f"--{plural}",), f"replace_{field}", "A,B", f"Replace {field} ('' clears)."),
            ((f"--remove-{stem}",), f"remove_{field}", "VALUE", f"Remove from {field}."),
            (adding, f"add_{field}", "VALUE", f"Add to {field} (repeat or A,B)."),
        ):
            replace = name.startswith("replace_")
            function = click.option(
                *flags, name, metavar=metavar, multiple=not replace, default=None, help=text
            )(function)
    return function


@click.command("set")
@click.argument("task_id", metavar="ID", shell_complete=complete_ids)
@click.option("--title", help="New title.")
@_scalar_options
@_date_options
@_list_options
@click.option(
    "--done",
    is_flag=True,
    help="Shortcut for --status completed (in-review with workflow: pr-review).",
)
@click.option("--body", default=None, help="Replace the Markdown body.")
@format_option
@click.pass_obj
def set_command(
    options: GlobalOptions,
    /,
    *,
    task_id: str,
    done: bool,
    body: str | None,
    fmt: str | None,
    **values: Any,
) -> None:
    """Edit a task's fields. An empty value clears a field (--owner '').

    Completing stamps completed_at, cancelling stamps cancelled_at, reopening
    clears both. Effort, status, priority and type are checked.
    """
    repo = load_repository(options)
    if done:
        # With workflow: pr-review, done means "ready for review"; --status completed
        # still completes.
        finished = "in-review" if repo.config.workflow == "pr-review" else "completed"
        if values.get("status") not in (None, finished):
            raise click.UsageError("--done conflicts with --status")
        values["status"] = finished
    scalars = {
        field: value
        for field, value in values.items()
        if field in {"title", *DATES, *(f for f, _, _ in SCALARS)} and value is not None
    }
    change = TaskChange(
        set={field: value or None for field, value in scalars.items()},
        replace={
            field: split_values([values[f"replace_{field}"]])
            for field, _ in LISTS
            if values[f"replace_{field}"] is not None
        },
        add={
            field: split_values(values[f"add_{field}"])
            for field, _ in LISTS
            if values[f"add_{field}"]
        },
        remove={
            field: split_values(values[f"remove_{field}"])
            for field, _ in LISTS
            if values[f"remove_{field}"]
        },
        body=body,
    )
    if change.empty:
        raise click.UsageError("nothing to change; give at least one field option")
    task = update_task(repo, task_id, change)
    _echo_task(options, fmt, task_view(task), "updated")


@click.command("edit")
@click.argument("task_id", metavar="ID", shell_complete=complete_ids)
@format_option
@click.pass_obj
def edit_command(options: GlobalOptions, /, *, task_id: str, fmt: str | None) -> None:
    """Open the task's file in $VISUAL or $EDITOR (else vi), then check what was saved.

    A file that no longer reads as a task, or holds a value set would refuse, is an
    error naming the file (fix it and run edit again).
    """
    import os
    import shlex
    import subprocess

    from tasktool.files.scanning.scan import read_entry
    from tasktool.model.errors import TaskToolError
    from tasktool.model.task import Task
    from tasktool.planning.writing.changes import check_value

    repo = load_repository(options)
    path = repo.get(task_id).file_path
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        status = subprocess.run([*shlex.split(editor), path], check=False).returncode
    except OSError as exc:
        raise TaskToolError(
            f"cannot start the editor {editor!r}: {exc.strerror or exc}", code="task.editor"
        ) from None
    if status != 0:
        raise TaskToolError(
            f"the editor {editor!r} exited with status {status}; {path} is as it left it",
            code="task.editor",
        )
    parsed = read_entry(str(repo.task_dir), path)
    if parsed is None:
        raise TaskToolError(
            f"{path}: no longer a task (no frontmatter with an id and a title)",
            code="task.frontmatter",
        )
    if not isinstance(parsed, Task):
        raise TaskToolError(parsed.message, code=parsed.code)
    for field in ("status", "priority", "effort", "type"):
        value = getattr(parsed, field)
        if value is not None:
            try:
                check_value(field, value, repo.config)
            except TaskToolError as exc:
                raise TaskToolError(f"{path}: {exc.message}", code=exc.code) from None
    if parsed.id != task_id:
        options.warn(f"{path}: the id changed from {task_id} to {parsed.id}")
    _echo_task(options, fmt, task_view(parsed), "edited")
