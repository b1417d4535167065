"""Planning: ``next`` (what to work on) and ``tracks`` (what can be worked at once).

Each command loads the repository, calls one pure function of the core and
prints its result; the JSON documents are the core's ``to_json`` shapes.
``board`` and ``stats`` live in :mod:`~tasktool.cli.commands.overview`, ``graph`` in
:mod:`~tasktool.cli.commands.graph`: each command module imports only what its own
commands need, so ``next`` does not load the board or the graph drawing.
"""

from __future__ import annotations

from typing import Any

import click

from tasktool.cli.commands.base import (
    GlobalOptions,
    data_format,
    format_option,
    kept_when_piped,
    load_repository,
    output,
    output_format,
    repositories,
    tagged,
    usage_errors,
)
from tasktool.cli.facts import facts
from tasktool.planning.ranking import DEFAULT_LIMIT, Ranked
from tasktool.present.documents import rank
from tasktool.present.render import emit_data, emit_table, emit_text

__all__ = ["next_command", "strict_phases_option", "tracks_command"]

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


@facts(paged=True, all_projects=True, reads=True)
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
@kept_when_piped()
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
    for project, repo in repositories(options):
        repo.loaded.require_next_config()  # a config error, before --filter's usage errors
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


@facts(paged=True, reads=True)
@click.command("tracks")
@strict_phases_option
@format_option
@click.pass_obj
@kept_when_piped()
def tracks_command(options: GlobalOptions, /, *, strict_phases: bool, fmt: str | None) -> None:
    """Split actionable work into tracks that can be worked at the same time.

    Tasks are placed in next's rank order into the first track where none of
    their touches (scopes) is taken, so tasks sharing a scope land in separate
    tracks; track 1 is what a team can start now. Tasks without touches are
    flexible. Unknown scopes are warnings when scopes are configured.
    """
    from tasktool.planning.tracks import plan_tracks  # tracks only: next does not need it

    repo = load_repository(options)
    result = plan_tracks(repo.graph, repo.config, strict_phases=strict_phases)
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
