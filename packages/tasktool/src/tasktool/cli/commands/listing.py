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
from tasktool.files.taskfile import is_safe_id
from tasktool.model.task import Task, natural_key
from tasktool.model.views import TASK_KEYS, task_view, task_views
from tasktool.planning.filters import apply_filters, check_field, group_tasks, sort_tasks
from tasktool.planning.repository import Repository
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
    pool = sorted(repo.all_tasks, key=lambda t: natural_key(t.id)) if archived else repo.tasks
    with usage_errors("--filter"):
        tasks = apply_filters(pool, filters, settings)
    if sort:
        with usage_errors("--sort"):
            tasks = sort_tasks(tasks, sort, settings)
    if limit:
        tasks = tasks[:limit]
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


def _worklog(repo: Repository, task_id: str) -> dict[str, Any] | None:
    """``{path, entries, last}`` of the task's worklog, or ``None`` when it has none."""
    from tasktool.planning.worklog import read_worklog  # only get needs it, not list

    if not is_safe_id(task_id) or not repo.worklog_path(task_id).exists():
        return None
    entries = read_worklog(repo, task_id).entries
    return {
        "path": str(repo.worklog_path(task_id)),
        "entries": len(entries),
        "last": entries[-1].timestamp if entries else None,
    }


def task_detail(repo: Repository, task: Task) -> dict[str, Any]:
    """``get``'s JSON: the task with its body, both directions of dependency, children,
    unmet dependencies and a worklog summary."""
    graph = repo.graph
    unmet = graph.unmet_dependencies(task)
    by_id = graph.by_id
    detail = task_view(task, body=True)
    detail.update(
        dependents=list(graph.dependents.get(task.id, ())),
        children=[
            {"id": by_id[child].id, "title": by_id[child].title, "status": by_id[child].status}
            for child in graph.children.get(task.id, ())
        ],
        unmet_dependencies=unmet,
        blocked=bool(unmet),
        resolved=task.resolved,
        worklog=_worklog(repo, task.id),
    )
    return detail


@click.command("get")
@click.argument("task_id", metavar="ID")
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
