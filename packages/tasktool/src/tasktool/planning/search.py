"""``search``: tasks whose title or body hold the words of a query, best first; and
``tags``: every tag with its task count.

Matching is case-insensitive. Every word of the query must appear in the title or the
body. Score: 10 when the title holds the whole query, 3 per word in the title, 1 per
occurrence of a word in the body (at most 5 per word); ties keep natural id order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import msgspec

from tasktool.files.caches.bodies import Bodies
from tasktool.model.task import Task, natural_key

__all__ = ["Hit", "search_tasks", "tag_counts"]

_BODY_CAP = 5


class Hit(msgspec.Struct, frozen=True):
    """One task found, with its score."""

    task: Task
    score: int


def search_tasks(tasks: Sequence[Task], query: str, bodies: Bodies) -> list[Hit]:
    """Tasks matching ``query`` (see the module), best first (ties in ``tasks`` order).
    The bodies are read as the search goes, a few at a time, from ``bodies`` (those of the
    load that gave ``tasks``: ``repo.bodies``)."""
    words = query.casefold().split()
    if not words:
        return []
    phrase = " ".join(words)
    found: list[tuple[int, Hit]] = []
    for position, text in bodies.each(tasks):
        task = tasks[position]
        title = task.title.casefold()
        body = text.casefold()
        score = 10 if phrase in title else 0
        for word in words:
            in_title = word in title
            in_body = min(body.count(word), _BODY_CAP)
            if not in_title and not in_body:
                break
            score += 3 * in_title + in_body
        else:
            found.append((position, Hit(task, score)))
    found.sort(key=lambda item: (-item[1].score, natural_key(item[1].task.id), item[0]))
    return [hit for _, hit in found]


def tag_counts(tasks: Iterable[Task]) -> list[tuple[str, int]]:
    """Every tag with the number of tasks carrying it, most used first, then by name."""
    counts = Counter(tag for task in tasks for tag in dict.fromkeys(task.tags))
    return sorted(counts.items(), key=lambda item: (-item[1], natural_key(item[0])))
