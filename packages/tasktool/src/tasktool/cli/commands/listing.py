"""``list`` and ``get``: the read commands over tasks."""

from __future__ import annotations

from typing import Any

import click

from tasktool.cli.commands.base import (
    GlobalOptions,
    format_option,
    load_repository,
    output,
    output_format,
    split_values,
    usage_errors,
)
from tasktool.cli.commands.shell import complete_ids
from tasktool.model.task import Task
from tasktool.model.views import TASK_KEYS, task_views
from tasktool.planning.filters import check_field, group_tasks, sort_tasks
from tasktool.present.documents import list_tasks, task_detail
from tasktool.present.render import emit_data, emit_fields, emit_table, emit_text

DEFAULT_COLUMNS = ("id", "status", "priority", "effort", "phase", "title")


def _columns(spec: str | None) -> tuple[str, ...]:
    if not spec:
        return DEFAULT_COLUMNS
    names = split_values([spec])
    for name in names:
        if name not in TASK_KEYS:
            raise click.BadParameter(
                f"unknown column {name!r}; known: {', '.join(TASK_KEYS)}", param_hint="--columns"
            )
    return names


@click.command("list")
@click.option(
    "--filter",
    "-f",
    "filters",
    multiple=True,
    metavar="EXPR",
    help="field=value, field!=value, field~text, priority>=high ... (repeatable, AND).",
)
@click.option("--sort", "sort", metavar="FIELDS", help="Sort by fields (-field: descending).")
@click.option("--group-by", "group_by", metavar="FIELD", help="Group by a field's values.")
@click.option("--limit", type=click.IntRange(min=0), default=0, help="At most N tasks (0: all).")
@click.option("--columns", metavar="FIELDS", help="Comma-separated fields to show.")
@click.option("--archived", is_flag=True, help="Include archived tasks.")
@format_option
@click.pass_obj
def list_command(
    options: GlobalOptions,
    /,
    *,
    filters: tuple[str, ...],
    sort: str | None,
    group_by: str | None,
    limit: int,
    columns: str | None,
    archived: bool,
    fmt: str | None,
) -> None:
    """List tasks, filtered, sorted and grouped.

    Filters combine with AND; a value list (status=pending,in-progress) matches
    any. priority, effort and status compare by their order (effort>=medium).
    """
    shown = _columns(columns)
    if group_by:
        with usage_errors("--group-by"):
            check_field(group_by, "group-by field")
    repo = load_repository(options)
    settings = repo.settings
    if sort:
        with usage_errors("--sort"):
            sort_tasks((), sort, settings)  # checks the spec: its errors name --sort
    with usage_errors("--filter"):
        tasks = list_tasks(repo, filters=filters, sort=sort, limit=limit, archived=archived)
    chosen = output_format(options, fmt)

    def view(selection: list[Task]) -> list[dict[str, Any]]:
        views = task_views(selection)
        if columns:
            views = [{key: item[key] for key in shown} for item in views]
        return views

    if not group_by:
        output(options, chosen, view(tasks), columns=shown)
        return
    groups = group_tasks(tasks, group_by, settings)
    if chosen != "table":
        emit_data([{"group": value, "tasks": view(members)} for value, members in groups], chosen)
        return
    for value, members in groups:
        emit_table(
            view(members),
            shown,
            title=f"{group_by}: {value or '(none)'}",
            no_color=options.no_color,
        )


@click.command("get")
@click.argument("task_id", metavar="ID", shell_complete=complete_ids)
@format_option
@click.pass_obj
def get_command(options: GlobalOptions, /, *, task_id: str, fmt: str | None) -> None:
    """Show one task: fields, body, dependencies both ways, children and worklog summary."""
    repo = load_repository(options)
    detail = task_detail(repo, repo.get(task_id))
    chosen = output_format(options, fmt)
    if chosen != "table":
        emit_data(detail, chosen)
        return
    hidden = {"body", "children", "worklog", "resolved"}
    pairs = [
        (key, value)
        for key, value in detail.items()
        if key not in hidden and value not in (None, [], ())
    ]
    worklog = detail["worklog"]
    if worklog:
        pairs.append(("worklog", f"{worklog['entries']} entries, last {worklog['last']}"))
    pairs += [("child", f"{c['id']} [{c['status']}] {c['title']}") for c in detail["children"]]
    emit_fields(pairs, no_color=options.no_color)
    if detail["body"].strip():
        emit_text("\n" + detail["body"].strip("\n"))
