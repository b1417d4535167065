"""``graph``: the dependency graph drawn as ascii, mermaid, dot or json."""

from __future__ import annotations

import click

from tasktool.cli.commands.base import (
    GlobalOptions,
    kept_when_piped,
    load_repository,
    split_values,
)
from tasktool.cli.facts import facts
from tasktool.model.task import STATUS_ORDER
from tasktool.present.graph_render import GRAPH_FORMATS, render_graph, select_graph
from tasktool.present.render import emit_text

__all__ = ["graph_command"]


@facts(paged=True)
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
@kept_when_piped()
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
        repo.graph,
        root=root,
        upstream=upstream,
        downstream=downstream,
        exclude_status=excluded,
    )
    emit_text(render_graph(view, chosen))
    for cycle in view.cycles:
        options.warn(f"dependency cycle: {' -> '.join(cycle)}")
