"""The style a repository's task files are written in, learned from a few of them, so that
a new file looks like its neighbours: ``created:`` or ``created_at:``, and how each key's
value is quoted (``id: "007"`` as taskmd writes it, ``id: '007'``, ``title: "Fix it"``).

Only a bounded sample is read (:data:`SAMPLE` files spread over the repository, the head
of each), so ``add`` costs the same at 100 tasks and at 100,000. A style counts when most
of the sampled files that have the key agree; a tie, or no file with the key, leaves this
tool's default. A quote style never changes what a value reads as: a value the style
cannot carry is quoted as it must be (:func:`~tasktool.files.parsing.yamltext.render_scalar`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import msgspec

__all__ = ["SAMPLE", "HouseStyle", "learn_style"]

#: How many files are read to learn the style.
SAMPLE = 15
#: How much of each file is read: the frontmatter of a task file fits in it.
_HEAD = 4096
#: A top-level key and the first characters of its value (after a ``[`` for a flow list).
_KEY = re.compile(r"""^([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(\[[ \t]*)?(['"]?)(\S?)""", re.MULTILINE)
#: The keys that name a task's creation date (taskmd writes ``created``).
_DATE_KEYS = ("created_at", "created")


class HouseStyle(msgspec.Struct, frozen=True, kw_only=True):
    """``date_key``: the key new files get their creation date under; ``quotes``: per key,
    the quote its values (or its flow list's items) open with, ``""`` for plain."""

    date_key: str = "created_at"
    quotes: dict[str, str] = msgspec.field(default_factory=dict)


def _spread(paths: Sequence[str], count: int) -> list[str]:
    """At most ``count`` of ``paths``, evenly spaced (the oldest ids and the newest)."""
    if len(paths) <= count:
        return list(paths)
    step = (len(paths) - 1) / (count - 1)
    return [paths[round(index * step)] for index in range(count)]


def _frontmatter(path: str) -> str:
    """The frontmatter at the head of the file (empty when unreadable or none)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD).decode("utf-8", errors="replace")
    except OSError:
        return ""
    head = head.lstrip("\ufeff").replace("\r\n", "\n")
    if not head.startswith("---\n"):
        return ""
    end = head.find("\n---", 3)
    return head[4 : end + 1] if end >= 0 else ""


def _majority(counter: Counter[str]) -> str | None:
    """The value more files use than any other, or ``None`` on a tie."""
    ranked = counter.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def learn_style(paths: Sequence[str]) -> HouseStyle:
    """The style most of a sample of the task files at ``paths`` share."""
    dates: Counter[str] = Counter()
    quotes: dict[str, Counter[str]] = {}
    for path in _spread(paths, SAMPLE):
        for match in _KEY.finditer(_frontmatter(path)):
            key, quote, first = match[1], match[3], match[4]
            if key in _DATE_KEYS:
                dates[key] += 1
            if quote or (first and first not in "[]{}|>#&*!"):
                quotes.setdefault(key, Counter())[quote] += 1
    learned = {
        key: style for key, votes in quotes.items() if (style := _majority(votes)) is not None
    }
    return HouseStyle(date_key=_majority(dates) or "created_at", quotes=learned)
