"""Planning and reporting: ``next``, ``tracks``, ``board``, ``stats`` and ``graph``.

Each command loads the repository, calls one pure function of the core and
prints its result; the JSON documents are the core's ``to_json`` shapes.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from tasktool.cli.commands.base import (
    GlobalOptions,
    data_format,
    format_option,
    load_repository,
    output,
    output_format,
    repositories,
    split_values,
    tagged,
    usage_errors,
)
from tasktool.model.task import STATUS_ORDER
from tasktool.planning.board import GROUP_FIELDS, build_board
from tasktool.planning.ranking import DEFAULT_LIMIT, Ranked
from tasktool.planning.tracks import plan_tracks
from tasktool.present.documents import rank, repository_stats
from tasktool.present.graph_render import GRAPH_FORMATS, render_graph, select_graph
from tasktool.present.render import emit_data, emit_fields, emit_table, emit_text, is_terminal

strict_phases_option = click.option(
    "--strict-phases",
    type=click.BOOL,
    default=True,
    show_default=True,
    metavar="BOOL",
    help="Phase order before score (false: an earlier phase is only a score bonus).",
)


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
    completed (active or archived), no unfinished child). Score: priority, critical
    path, tasks unblocked, effort; each result lists its reasons. With phases
    configured, no task of a later phase outranks an actionable task of an
    earlier one (--strict-phases=false makes phase a score bonus instead).
    Ties go in natural id order. Refuses to run when the config's next
    section is malformed.
    """
    ranked: list[tuple[str | None, Ranked]] = []
    for project, repo in repositories(options, bodies=False):
        repo.config.require_next_config()  # a config error, before --filter's usage errors
        with usage_errors("--filter"):
            ranked += [
                (project, item)
                for item in rank(
                    repo,
                    limit=limit,
                    quick_wins=quick_wins,
                    strict_phases=strict_phases,
                    filters=filters,
                )
            ]
    rows = [
        tagged(
            project and f"project:{project}",
            {
                "rank": item.rank,
                "id": item.task.id,
                "score": item.score,
                "priority": item.task.priority,
                "effort": item.task.effort,
                "phase": item.task.phase,
                "title": item.task.title,
                "why": _why(item),
            },
        )
        for project, item in ranked
    ]
    if not ranked and output_format(options, fmt) == "table":
        emit_text("no actionable tasks")
        return
    columns: tuple[str, ...] = ("rank", "id", "score", "priority", "effort", "phase", "title")
    columns = (*(("project",) if options.all_projects else ()), *columns, "why")
    data = [tagged(project, item.to_json()) for project, item in ranked]
    output(options, fmt, data, rows=rows, columns=columns)


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
    repo = load_repository(options, bodies=False)
    result = plan_tracks(repo.graph, repo.settings, strict_phases=strict_phases)
    structured = data_format(options, fmt)
    if structured:
        emit_data(result.to_json(), structured)
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
    boards = [
        (project, build_board(repo.tasks, repo.settings, group_by, ordered=True))
        for project, repo in repositories(options, bodies=False)
    ]
    structured = data_format(options, fmt)
    if structured:
        if options.all_projects:
            emit_data([tagged(p, board.to_json()) for p, board in boards], structured)
        else:
            emit_data(boards[0][1].to_json(), structured)
        return
    for project, board in boards:
        where = f"project:{project} " if project is not None else ""
        if is_terminal(sys.stdout):
            from tasktool.present.terminal import colour_off, side_by_side, terminal_width

            filled = [column for column in board.columns if column.tasks]
            text = side_by_side(
                [
                    (
                        f"{where}{column.name} ({len(column.tasks)})",
                        [f"{t.id} {t.title}" for t in column.tasks],
                    )
                    for column in filled
                ],
                width=terminal_width(),
                bold=not colour_off(options.no_color),
            )
            if text is not None:
                empty = [column.name for column in board.columns if not column.tasks]
                emit_text(text + (f"\nempty: {', '.join(empty)}\n" if empty else ""))
                continue
        for column in board.columns:
            rows = [
                {"id": t.id, "priority": t.priority, "status": t.status, "title": t.title}
                for t in column.tasks
            ]
            emit_table(
                rows,
                ("id", "priority", "status", "title"),
                title=f"{where}{column.name} ({len(column.tasks)})",
                no_color=options.no_color,
            )


@click.command("stats")
@format_option
@click.pass_obj
def stats_command(options: GlobalOptions, /, *, fmt: str | None) -> None:
    """Counts by status, priority, effort and phase; completion rate; blocked; longest chain.

    The completion rate is completed tasks over tasks that are not cancelled.
    """
    every = [
        (project, repository_stats(repo)) for project, repo in repositories(options, bodies=False)
    ]
    structured = data_format(options, fmt)
    if structured:
        if options.all_projects:
            emit_data([tagged(p, stats.to_json()) for p, stats in every], structured)
        else:
            emit_data(every[0][1].to_json(), structured)
        return
    for project, stats in every:
        chain = stats.longest_chain
        pairs: list[tuple[str, Any]] = [("project", f"project:{project}")] if project else []
        pairs += [
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
    repo = load_repository(options, bodies=False)
    chosen = graph_format or ("json" if options.format in {"json", "yaml"} else "ascii")
    view = select_graph(
        repo.graph,
        root=root,
        upstream=upstream,
        downstream=downstream,
        exclude_status=excluded,
    )
    emit_text(render_graph(view, chosen))
    for cycle in view.cycles:
        options.warn(f"dependency cycle: {' -> '.join(cycle)}")
