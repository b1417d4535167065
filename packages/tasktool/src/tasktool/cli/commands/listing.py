"""``list`` and ``get``: the read commands over tasks."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click
import msgspec

from tasktool.cli.commands.base import (
    GlobalOptions,
    format_option,
    kept_when_piped,
    load_repository,
    output,
    output_format,
    repositories,
    split_values,
    tagged,
    usage_errors,
)
from tasktool.cli.commands.shell import complete_choices, complete_ids
from tasktool.cli.facts import facts
from tasktool.model.config import Config
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Priority, Status, Task
from tasktool.model.views import TASK_KEYS, TaskRows
from tasktool.planning.filters import check_field, group_tasks, sort_tasks
from tasktool.planning.repository import Repository
from tasktool.present.documents import get_document, list_tasks
from tasktool.present.output_memo import recording, replay
from tasktool.present.render import (
    attribute_cells,
    emit_data,
    emit_fields,
    emit_table,
    emit_text,
    is_terminal,
    plain_columns,
    write_json_array,
)

__all__ = ["DEFAULT_COLUMNS", "FC", "get_command", "list_command"]

FC = TypeVar("FC", bound=Callable[..., Any])

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


def _shortcut(
    flag: str, name: str, field: str, choices: tuple[str, ...] = ()
) -> Callable[[FC], FC]:
    """A list option that stands for ``--filter field=V`` (values as taskmd spells it)."""
    return click.option(
        flag,
        name,
        multiple=True,
        metavar=field[0].upper(),
        shell_complete=complete_choices(choices) if choices else None,
        help=f"Shortcut for --filter {field}=VALUE (repeat or comma-separate: any of them).",
    )


def _keeps_own(options: GlobalOptions, arguments: dict[str, Any]) -> bool:
    """Whether ``list`` keeps its output itself (``--format json`` of one repository,
    ungrouped: :func:`_json_list`)."""
    return not arguments["group_by"] and output_format(options, arguments["fmt"]) == "json"


@facts(paged=True, all_projects=True, reads=True)
@click.command("list")
@click.option(
    "--filter",
    "-f",
    "filters",
    multiple=True,
    metavar="EXPR",
    help="field=value, field!=value, field~text, priority>=high ... (repeatable, AND).",
)
@_shortcut("--status", "statuses", "status", tuple(Status))
@_shortcut("--priority", "priorities", "priority", tuple(Priority))
@_shortcut("--tag", "tags", "tags")
@click.option("--sort", "sort", metavar="FIELDS", help="Sort by fields (-field: descending).")
@click.option("--group-by", "group_by", metavar="FIELD", help="Group by a field's values.")
@click.option("--limit", type=click.IntRange(min=0), default=0, help="At most N tasks (0: all).")
@click.option("--columns", metavar="FIELDS", help="Comma-separated fields to show.")
@click.option("--archived", is_flag=True, help="Include archived tasks.")
@format_option
@click.pass_obj
@kept_when_piped(unless=_keeps_own)
def list_command(
    options: GlobalOptions,
    /,
    *,
    filters: tuple[str, ...],
    statuses: tuple[str, ...],
    priorities: tuple[str, ...],
    tags: tuple[str, ...],
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
    --status, --priority and --tag are shortcuts for the filters of those fields.
    """
    shortcuts = (("status", statuses), ("priority", priorities), ("tags", tags))
    filters += tuple(
        f"{field}={','.join(split_values(values))}" for field, values in shortcuts if values
    )
    shown = _columns(columns)
    if group_by:
        with usage_errors("--group-by"):
            check_field(group_by, "group-by field")
    chosen = output_format(options, fmt)
    query = _Query(filters, sort, limit, archived, shown if columns else TASK_KEYS)
    everywhere = options.all_projects
    if not group_by and chosen == "json" and not everywhere:
        _json_list(load_repository(options), query)
        return
    found = [
        (project, repo.config, _select(repo, query)) for project, repo in repositories(options)
    ]
    keys = ("project", *shown) if everywhere else shown

    # Only the fields shown: a table (or --columns) needs no dict of every field per task.
    fields = shown if columns or chosen == "table" else TASK_KEYS

    def view(project: str | None, config: Config, selection: list[Task]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = msgspec.to_builtins(TaskRows(selection, fields)[:])
        views = [tagged(project, item) for item in rows]
        if chosen == "table":
            for item, task in zip(views, selection, strict=True):
                if "status" in item:
                    item["status"] = _table_status(task, config)
                if project is not None:
                    item["project"] = f"project:{project}"
        return views

    if not group_by and chosen == "table" and not everywhere and not is_terminal(sys.stdout):
        ((_, config, tasks),) = found
        # No status to annotate or rename: a sibling's provenance, another tool's names.
        if not config.layout.foreign and all(task.worktree is None for task in tasks):
            # Each column straight from the tasks: no dict per task (100,000 of them).
            emit_text(plain_columns(keys, [attribute_cells(tasks, key) for key in keys]))
            return
    if not group_by:
        rows = [row for project, config, tasks in found for row in view(project, config, tasks)]
        output(options, chosen, rows, columns=keys)
        return
    sections = [
        (project, config, value, members)
        for project, config, tasks in found
        for value, members in group_tasks(tasks, group_by, config)
    ]
    if chosen != "table":
        emit_data(
            [
                tagged(project, {"group": value, "tasks": view(project, config, members)})
                for project, config, value, members in sections
            ],
            chosen,
        )
        return
    for project, config, value, members in sections:
        where = f"project:{project} " if project is not None else ""
        named = config.layout.shown(value) if group_by == "status" and value else value
        emit_table(
            view(project, config, members),
            keys,
            title=f"{where}{group_by}: {named or '(none)'}",
            no_color=options.no_color,
        )


class _Query(msgspec.Struct, frozen=True, array_like=True):
    """What ``list`` shows (its JSON output is kept under these values)."""

    filters: tuple[str, ...]
    sort: str | None
    limit: int
    archived: bool
    keys: tuple[str, ...]  # the JSON objects' keys


def _select(repo: Repository, query: _Query) -> list[Task]:
    """The tasks ``list`` shows of ``repo`` (a bad ``--sort`` or ``--filter`` named)."""
    if query.sort:
        with usage_errors("--sort"):
            sort_tasks((), query.sort, repo.config)  # checks the spec: its errors name --sort
    with usage_errors("--filter"):
        return list_tasks(
            repo,
            filters=query.filters,
            sort=query.sort,
            limit=query.limit,
            archived=query.archived,
        )


def _json_list(repo: Repository, query: _Query) -> None:
    """``list --format json`` of one repository: the output kept for the same tasks,
    config and query when there is one (copied, not made again: the output of a large
    repository is tens of megabytes), else made and kept."""
    if replay(repo, "list-json", query):
        return
    tasks = _select(repo, query)
    with recording(repo, "list-json", query) as write:
        write_json_array(TaskRows(tasks, query.keys), write)


def _table_status(task: Task, config: Config) -> str:
    """A task's status in a table: the repository's name for it (``In Progress`` in a
    Backlog.md repository), and for a sibling worktree's task where it comes from."""
    shown = config.layout.shown(task.status)
    return f"{shown} @{_provenance(task)}" if task.worktree is not None else shown


def _provenance(task: Task) -> str:
    """Where a sibling worktree's status comes from, for tables: its branch, else its path."""
    only = " only" if task.sibling_only else ""
    return f"{task.branch or task.worktree}{only}"


@facts(paged=True, reads=True)
@click.command("get")
@click.argument("task_id", metavar="ID", shell_complete=complete_ids)
@format_option
@click.pass_obj
def get_command(options: GlobalOptions, /, *, task_id: str, fmt: str | None) -> None:
    """Show one task: fields, body, dependencies both ways, children and worklog summary.

    A number finds the task whose id it is but for leading zeros (1 finds 001) when
    exactly one is.
    """
    repo = load_repository(options)
    try:
        detail = get_document(repo, task_id)
    except TaskToolError as exc:
        padded = repo.same_number(task_id) if exc.code == "task.not_found" else None
        if padded is None:
            raise
        detail = get_document(repo, padded)
    chosen = output_format(options, fmt)
    if chosen != "table":
        emit_data(detail, chosen)
        return
    shown = repo.config.layout.shown
    if detail.get("status"):
        detail = {**detail, "status": shown(detail["status"])}
    hidden = {"body", "children", "worklog", "resolved", "acceptance"}
    pairs = [
        (key, value)
        for key, value in detail.items()
        if key not in hidden and value not in (None, [], ())
    ]
    worklog = detail["worklog"]
    if worklog:
        pairs.append(("worklog", f"{worklog['entries']} entries, last {worklog['last']}"))
    criteria = detail["acceptance"]
    if criteria:
        pairs.append(("acceptance", f"{criteria['done']}/{criteria['total']} done"))
        pairs += [
            (f"  #{at}", f"[{'x' if item['checked'] else ' '}] {item['text']}")
            for at, item in enumerate(criteria["items"], start=1)
        ]
    pairs += [
        ("child", f"{c['id']} [{shown(c['status'])}] {c['title']}") for c in detail["children"]
    ]
    emit_fields(pairs, no_color=options.no_color)
    if detail["body"].strip():
        emit_text("\n" + detail["body"].strip("\n"))
