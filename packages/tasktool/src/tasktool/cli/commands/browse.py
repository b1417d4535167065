"""``search`` and ``tags``: finding tasks by their words and their labels."""

from __future__ import annotations

import click

from tasktool.cli.commands.base import (
    GlobalOptions,
    format_option,
    kept_when_piped,
    load_repository,
    output,
    usage_errors,
)
from tasktool.cli.facts import facts
from tasktool.planning.search import tag_counts
from tasktool.present.documents import search_document

__all__ = ["search_command", "tags_command"]


@facts(paged=True, reads=True)
@click.command("search")
@click.argument("text")
@click.option(
    "--filter", "-f", "filters", multiple=True, metavar="EXPR", help="As list's --filter."
)
@click.option("--limit", type=click.IntRange(min=0), default=0, help="At most N tasks (0: all).")
@click.option("--archived", is_flag=True, help="Search archived tasks too.")
@format_option
@click.pass_obj
@kept_when_piped()
def search_command(
    options: GlobalOptions,
    /,
    *,
    text: str,
    filters: tuple[str, ...],
    limit: int,
    archived: bool,
    fmt: str | None,
) -> None:
    """Find tasks whose title or body hold every word of TEXT (any case), best first.

    The title counts more than the body; --filter narrows as in list.
    """
    repo = load_repository(options)
    with usage_errors("--filter"):
        rows = search_document(repo, text, filters=filters, limit=limit, archived=archived)
    shown = repo.config.layout.shown  # the repository's status names in the table
    table = [{**row, "status": shown(row["status"])} for row in rows]
    output(options, fmt, rows, rows=table, columns=("id", "score", "status", "title"))


@facts(paged=True, reads=True)
@click.command("tags")
@click.option("--archived", is_flag=True, help="Count archived tasks too.")
@format_option
@click.pass_obj
@kept_when_piped()
def tags_command(options: GlobalOptions, /, *, archived: bool, fmt: str | None) -> None:
    """Every tag with the number of tasks carrying it, most used first."""
    repo = load_repository(options)
    tasks = repo.all_tasks if archived else repo.tasks
    rows = [{"tag": tag, "count": count} for tag, count in tag_counts(tasks)]
    output(options, fmt, rows, columns=("tag", "count"))
