"""``graph``: the dependency graph drawn as ascii, mermaid, dot or json.

Past :data:`WHOLE_UP_TO` tasks, and without ``--root`` or ``--all``, it draws the
actionable subgraph (:mod:`tasktool.planning.graph_part`, the dashboard's rule) and
says on stderr how much it left out: a 100,000-node drawing is itself the cost.
"""

from __future__ import annotations

import click

from tasktool.cli.commands.base import (
    GlobalOptions,
    kept_when_piped,
    load_repository,
    split_values,
)
from tasktool.cli.facts import facts
from tasktool.model.task import STATUS_ORDER, natural_key
from tasktool.planning.graph_part import actionable_part
from tasktool.planning.repository import Repository
from tasktool.present.graph_render import (
    GRAPH_FORMATS,
    GraphView,
    render_graph,
    select_graph,
    view_of,
)
from tasktool.present.render import emit_text

__all__ = ["WHOLE_UP_TO", "graph_command"]

#: The most tasks drawn whole by default; a larger graph opens on its actionable part,
#: of at most this many tasks (the actionable ones and what each unblocks, one step).
WHOLE_UP_TO = 1000


@facts(paged=True, reads=True)
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
@click.option(
    "--all",
    "draw_all",
    is_flag=True,
    help=f"Every selected task, even past {WHOLE_UP_TO:,} (default: the actionable part).",
)
@click.pass_obj
@kept_when_piped(notes=True)  # --quiet is a setting: part of the key
def graph_command(
    options: GlobalOptions,
    /,
    *,
    graph_format: str | None,
    root: str | None,
    upstream: bool,
    downstream: bool,
    exclude_status: tuple[str, ...],
    draw_all: bool,
) -> None:
    """Draw the dependency graph as ascii, mermaid, dot or json; cycles are reported.

    Edges go from a dependency to the task that waits on it. With --root, the
    root plus its upstream and/or downstream tasks (both when neither flag).
    Past 1,000 tasks without --root: the actionable tasks, highest priority first,
    and what each unblocks, 1,000 at most (a note on stderr); --all draws them all.
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
    part = None if root is not None or draw_all else _actionable_view(repo, excluded, options)
    view = part or select_graph(
        repo.graph,
        root=root,
        upstream=upstream,
        downstream=downstream,
        exclude_status=excluded,
    )
    emit_text(render_graph(view, chosen))
    for cycle in view.cycles:
        options.warn(f"dependency cycle: {' -> '.join(cycle)}")


def _actionable_view(
    repo: Repository, excluded: tuple[str, ...], options: GlobalOptions
) -> GraphView | None:
    """The actionable part of a selection past :data:`WHOLE_UP_TO` tasks, said on stderr;
    ``None`` for a selection drawn whole."""
    graph = repo.graph
    allowed = {task.id for task in graph.unique if task.status not in excluded}
    if len(allowed) <= WHOLE_UP_TO:
        return None
    chosen = actionable_part(graph, repo.config, allowed, depth=1, limit=WHOLE_UP_TO)
    if not options.silent:
        click.echo(
            f"note: {len(allowed):,} tasks in the graph, drawing {len(chosen):,}: the "
            "actionable ones, highest priority first, and what each unblocks; "
            f"{len(allowed) - len(chosen):,} left out (--all draws every task, "
            "--root ID one task's part)",
            err=True,
        )
    return view_of(graph, {node: graph.by_id[node] for node in sorted(chosen, key=natural_key)})
