"""Planning and reporting: ``next``, ``tracks``, ``board``, ``stats``, ``graph``,
``todos``, ``validate`` and ``worklog``.

Each command loads the repository, calls one pure function of the core and
prints its result; the JSON documents are the core's ``to_json`` shapes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from mtcommon import CodedError
from tasktool.board import GROUP_FIELDS, build_board
from tasktool.checks import ValidationReport, build_report, check_tasks
from tasktool.commands.base import (
    GlobalOptions,
    format_option,
    load_repository,
    output,
    output_format,
    split_values,
)
from tasktool.config import CONFIG_NAME, load_config
from tasktool.diagnostics import Diagnostic
from tasktool.errors import TaskToolError
from tasktool.filters import apply_filters
from tasktool.graph import build_graph
from tasktool.graph_render import GRAPH_FORMATS, render_graph, select_graph
from tasktool.model import STATUS_ORDER, Task
from tasktool.ranking import DEFAULT_LIMIT, Ranked, rank_next
from tasktool.render import emit_data, emit_fields, emit_table, emit_text
from tasktool.repository import Repository, load_context
from tasktool.source_files import discover_files, read_source
from tasktool.stats import compute_stats
from tasktool.todos import scan_files
from tasktool.tracks import plan_tracks
from tasktool.worklog import add_entry, read_worklog

strict_phases_option = click.option(
    "--strict-phases",
    type=click.BOOL,
    default=True,
    show_default=True,
    metavar="BOOL",
    help="Phase order before score (false: an earlier phase is only a score bonus).",
)


def _filter_predicate(repo: Repository, expressions: Sequence[str]) -> Callable[[Task], bool]:
    """One pass of the ``list`` filters over the tasks, then a set lookup per candidate."""
    try:
        kept = apply_filters(repo.tasks, expressions, repo.settings)
    except TaskToolError as exc:
        raise click.BadParameter(exc.message, param_hint="--filter") from None
    allowed = {id(task) for task in kept}
    return lambda task: id(task) in allowed


def _why(item: Ranked) -> str:
    return ", ".join(f"{r.detail} +{r.points}" for r in item.reasons if r.points)


@click.command("next")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=DEFAULT_LIMIT,
    show_default=True,
    help="At most N tasks (0: all).",
)
@click.option("--quick-wins", is_flag=True, help="Only tasks of the lowest effort value.")
@strict_phases_option
@click.option(
    "--filter", "-f", "filters", multiple=True, metavar="EXPR", help="As for list (repeatable)."
)
@format_option
@click.pass_obj
def next_command(
    options: GlobalOptions,
    /,
    *,
    limit: int,
    quick_wins: bool,
    strict_phases: bool,
    filters: tuple[str, ...],
    fmt: str | None,
) -> None:
    """Rank what to work on next.

    Candidates are actionable tasks (pending or in progress, every dependency
    completed or archived, no unfinished child). Score: priority, critical
    path, tasks unblocked, effort; each result lists its reasons. With phases
    configured, no task of a later phase outranks an actionable task of an
    earlier one (--strict-phases=false makes phase a score bonus instead).
    Ties go in natural id order. Refuses to run when the config's next
    section is malformed.
    """
    repo = load_repository(options)
    repo.config.require_next_config()
    predicate = _filter_predicate(repo, filters) if filters else None
    ranked = rank_next(
        repo.all_tasks,
        repo.settings,
        strict_phases=strict_phases,
        quick_wins=quick_wins,
        limit=limit,
        predicate=predicate,
    )
    rows = [
        {
            "rank": item.rank,
            "id": item.task.id,
            "score": item.score,
            "priority": item.task.priority,
            "effort": item.task.effort,
            "phase": item.task.phase,
            "title": item.task.title,
            "why": _why(item),
        }
        for item in ranked
    ]
    if not ranked and output_format(options, fmt) == "table":
        emit_text("no actionable tasks")
        return
    columns = ("rank", "id", "score", "priority", "effort", "phase", "title", "why")
    output(options, fmt, [item.to_json() for item in ranked], rows=rows, columns=columns)


@click.command("tracks")
@strict_phases_option
@format_option
@click.pass_obj
def tracks_command(options: GlobalOptions, /, *, strict_phases: bool, fmt: str | None) -> None:
    """Split actionable work into tracks that can be worked at the same time.

    Tasks are placed in next's rank order into the first track where none of
    their touches (scopes) is taken, so tasks sharing a scope land in separate
    tracks; track 1 is what a team can start now. Tasks without touches are
    flexible. Unknown scopes are warnings when scopes are configured.
    """
    repo = load_repository(options)
    result = plan_tracks(repo.all_tasks, repo.settings, strict_phases=strict_phases)
    if output_format(options, fmt) != "table":
        emit_data(result.to_json(), output_format(options, fmt))
        return
    rows: list[dict[str, Any]] = []
    for track in result.tracks:
        rows.extend(
            {"track": track.id, "id": i.task.id, "touches": i.task.touches, "title": i.task.title}
            for i in track.tasks
        )
    rows.extend(
        {"track": "flexible", "id": i.task.id, "touches": (), "title": i.task.title}
        for i in result.flexible
    )
    emit_table(rows, ("track", "id", "touches", "title"), no_color=options.no_color)
    for warning in result.warnings:
        options.warn(warning)


@click.command("board")
@click.option(
    "--group-by",
    "group_by",
    type=click.Choice(GROUP_FIELDS),
    default="status",
    show_default=True,
    help="The field whose values are the columns.",
)
@format_option
@click.pass_obj
def board_command(options: GlobalOptions, /, *, group_by: str, fmt: str | None) -> None:
    """Show active tasks in columns, in the field's natural order.

    Status by advancement, priority low to critical, effort by the configured
    vocabulary, phases in config order; other values follow sorted, (none) last.
    """
    repo = load_repository(options)
    board = build_board(repo.tasks, repo.settings, group_by)
    if output_format(options, fmt) != "table":
        emit_data(board.to_json(), output_format(options, fmt))
        return
    for column in board.columns:
        rows = [
            {"id": t.id, "priority": t.priority, "status": t.status, "title": t.title}
            for t in column.tasks
        ]
        emit_table(
            rows,
            ("id", "priority", "status", "title"),
            title=f"{column.name} ({len(column.tasks)})",
            no_color=options.no_color,
        )


@click.command("stats")
@format_option
@click.pass_obj
def stats_command(options: GlobalOptions, /, *, fmt: str | None) -> None:
    """Counts by status, priority, effort and phase; completion rate; blocked; longest chain.

    The completion rate is completed tasks over tasks that are not cancelled.
    """
    repo = load_repository(options)
    stats = compute_stats(repo.all_tasks, repo.settings)
    if output_format(options, fmt) != "table":
        emit_data(stats.to_json(), output_format(options, fmt))
        return
    chain = stats.longest_chain
    pairs: list[tuple[str, Any]] = [
        ("total", stats.total),
        ("archived", stats.archived),
        ("completion rate", f"{stats.completion_rate:.1%}"),
        ("actionable", stats.actionable),
        ("blocked", stats.blocked),
        ("longest chain", f"{len(chain)}" + (f" ({' -> '.join(chain)})" if chain else "")),
    ]
    pairs += [
        (f"by {field}", ", ".join(f"{value} {count}" for value, count in counts))
        for field, counts in stats.counts.items()
    ]
    emit_fields(pairs, no_color=options.no_color)


@click.command("graph")
@click.option(
    "--format",
    "graph_format",
    type=click.Choice(GRAPH_FORMATS),
    default=None,
    help="Drawing format (default ascii; json when the global --format is json or yaml).",
)
@click.option("--root", metavar="ID", help="Only this task and what it is connected to.")
@click.option("--upstream", is_flag=True, help="With --root: the tasks it depends on.")
@click.option("--downstream", is_flag=True, help="With --root: the tasks that depend on it.")
@click.option(
    "--exclude-status",
    "exclude_status",
    multiple=True,
    metavar="STATUS",
    help="Leave out tasks with this status (repeatable or comma separated).",
)
@click.pass_obj
def graph_command(
    options: GlobalOptions,
    /,
    *,
    graph_format: str | None,
    root: str | None,
    upstream: bool,
    downstream: bool,
    exclude_status: tuple[str, ...],
) -> None:
    """Draw the dependency graph as ascii, mermaid, dot or json; cycles are reported.

    Edges go from a dependency to the task that waits on it. With --root, the
    root plus its upstream and/or downstream tasks (both when neither flag).
    """
    if (upstream or downstream) and root is None:
        raise click.UsageError("--upstream and --downstream need --root")
    excluded = split_values(exclude_status)
    unknown = [status for status in excluded if status not in STATUS_ORDER]
    if unknown:
        raise click.BadParameter(
            f"unknown status {unknown[0]!r}; known: {', '.join(STATUS_ORDER)}",
            param_hint="--exclude-status",
        )
    repo = load_repository(options)
    chosen = graph_format or ("json" if options.format in {"json", "yaml"} else "ascii")
    view = select_graph(
        build_graph(repo.all_tasks),
        root=root,
        upstream=upstream,
        downstream=downstream,
        exclude_status=excluded,
    )
    emit_text(render_graph(view, chosen))
    for cycle in view.cycles:
        options.warn(f"dependency cycle: {' -> '.join(cycle)}")


def _project_root(config_file: str | None) -> Path:
    """The project config's directory; the current directory without one (or with the home file)."""
    if config_file is not None:
        path = Path(config_file)
        home = Path(os.environ.get("HOME") or Path.home())
        if path != home / CONFIG_NAME:
            return path.parent
    return Path.cwd()


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
    config = load_config(options.overrides())
    config.require_valid()
    settings = config.settings
    root = Path(path) if path else _project_root(config.file)
    files = discover_files(
        root, ignore=settings.ignore, excludes=(*settings.todos_exclude, *excludes)
    )
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


def _validation(options: GlobalOptions) -> ValidationReport:
    try:
        repo = load_context(options.overrides(), tolerant=True)
    except CodedError as exc:  # An unreadable config or a missing task dir: one error.
        file = (exc.details or {}).get("file")
        problem = Diagnostic(
            severity="error", code=exc.code, message=exc.message, file=str(file) if file else None
        )
        return build_report([problem])
    checks = check_tasks(repo.all_tasks, repo.settings)
    return build_report(repo.config_diagnostics, repo.broken, checks)


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
    report = _validation(options)
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


@click.command("worklog")
@click.argument("task_id", metavar="ID")
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
    repo = load_repository(options)
    task = repo.get(task_id)
    if text is not None:
        add_entry(repo, task.id, text)
    log = read_worklog(repo, task.id)
    if output_format(options, fmt) != "table":
        emit_data(log.to_json(), output_format(options, fmt))
        return
    if not log.entries:
        emit_text(f"no worklog entries for task {task.id}")
    for entry in log.entries:
        emit_text(f"## {entry.timestamp}\n\n{entry.content}\n")
