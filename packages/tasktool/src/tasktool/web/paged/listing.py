"""One page of ``list`` or ``search`` with the total it was cut from.

``GET /api/tasks`` and the task table answer a page of a list that may hold
100,000 tasks: the whole list is filtered and sorted (cheap, on the loaded
tasks), then only the page is turned into JSON views (the costly part).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tasktool.model.views import task_views
from tasktool.planning.repository import Repository
from tasktool.present.documents import list_tasks
from tasktool.web.paged.paging import Window
from tasktool.web.snapshot import Remember

__all__ = ["Listing", "list_page"]


@dataclass(frozen=True)
class Listing:
    """The page's task views and how many tasks the whole list holds."""

    views: list[dict[str, Any]]
    total: int


def list_page(
    repo: Repository,
    window: Window,
    remember: Remember,
    *,
    text: str = "",
    filters: Sequence[str] = (),
    sort: str | None = None,
    archived: bool = False,
) -> Listing:
    """``list`` (or, with ``text``, ``search``: each view with its ``score``, best first,
    ``sort`` ignored) cut to ``window``; the whole list is remembered for the next page."""
    key = ("list", text.strip(), tuple(filters), sort, archived)
    if not text.strip():
        tasks = remember(
            key, lambda: list_tasks(repo, filters=filters, sort=sort, archived=archived)
        )
        return Listing(task_views(window.cut(tasks)), len(tasks))
    from tasktool.planning.search import search_tasks

    hits = remember(
        key,
        lambda: search_tasks(
            list_tasks(repo, filters=filters, archived=archived), text, repo.bodies
        ),
    )
    page = window.cut(hits)
    views = task_views([hit.task for hit in page])
    scored = [{"score": hit.score, **view} for hit, view in zip(page, views, strict=True)]
    return Listing(scored, len(hits))
