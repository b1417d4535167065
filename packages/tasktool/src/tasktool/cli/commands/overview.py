"""Overviews: ``board`` (active tasks in columns) and ``stats`` (counts and rates).

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
    kept_when_piped,
    repositories,
    tagged,
)
from tasktool.cli.facts import facts
from tasktool.planning.board import GROUP_FIELDS, build_board
from tasktool.present.documents import repository_stats
from tasktool.present.render import (
    attribute_cells,
    emit_data,
    emit_fields,
    emit_table,
    emit_text,
    is_terminal,
    plain_columns,
)

__all__ = ["board_command", "stats_command"]


@facts(paged=True, all_projects=True, reads=True)
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
@kept_when_piped()
def board_command(options: GlobalOptions, /, *, group_by: str, fmt: str | None) -> None:
    """Show active tasks in columns, in the field's natural order.

    Status by advancement, priority low to critical, effort by the configured
    vocabulary, phases in config order; other values follow sorted, (none) last.
    """
    boards = [
        (project, build_board(repo.tasks, repo.config, group_by, ordered=True))
        for project, repo in repositories(options)
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
            from tasktool.present.terminal import (
                colour_off,
                printable,
                side_by_side,
                terminal_width,
            )

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
                empty_line = f"\nempty: {printable(', '.join(empty))}\n" if empty else ""
                emit_text(text + empty_line, escaped=True)  # side_by_side escapes its cards
                continue
        keys = ("id", "priority", "status", "title")
        for column in board.columns:
            title = f"{where}{column.name} ({len(column.tasks)})"
            if not is_terminal(sys.stdout):  # each column of cells straight from the tasks
                cells = [attribute_cells(column.tasks, key) for key in keys]
                emit_text(f"{title}\n{plain_columns(keys, cells)}")
                continue
            rows = [{key: getattr(t, key) for key in keys} for t in column.tasks]
            emit_table(rows, keys, title=title, no_color=options.no_color)


@facts(paged=True, all_projects=True, reads=True)
@click.command("stats")
@format_option
@click.pass_obj
@kept_when_piped()
def stats_command(options: GlobalOptions, /, *, fmt: str | None) -> None:
    """Counts by status, priority, effort and phase; completion rate; blocked; longest chain.

    The completion rate is completed tasks over tasks that are not cancelled.
    """
    every = [(project, repository_stats(repo)) for project, repo in repositories(options)]
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
