"""Acceptance criteria in a task's body, found and counted as Backlog.md finds them.

Backlog.md keeps them as a checklist between ``<!-- AC:BEGIN -->`` and
``<!-- AC:END -->`` (``- [x] #1 text``); a body without those markers may still hold
the older form, the checklist under a ``## Acceptance Criteria`` heading. Progress is
the checked items over all of them (Backlog.md's ``ac: 1/3``).
"""

from __future__ import annotations

import re

import msgspec

__all__ = ["Criteria", "Criterion", "acceptance_criteria"]

_MARKED = re.compile(r"<!-- AC:BEGIN -->(.*?)<!-- AC:END -->", re.DOTALL)
_MARKED_ITEM = re.compile(r"^- \[([ x])\] (?:#\d+ )?(.+)$", re.MULTILINE)
_HEADING = re.compile(r"^##[\t ]+Acceptance Criteria[\t ]*$", re.MULTILINE | re.IGNORECASE)
_NEXT_HEADING = re.compile(r"^##[\t ]", re.MULTILINE)
_ITEM = re.compile(r"^- \[([ x])\] (.+)$", re.MULTILINE)


class Criterion(msgspec.Struct, frozen=True):
    """One acceptance criterion: whether it is checked, and its text."""

    checked: bool
    text: str


class Criteria(msgspec.Struct, frozen=True):
    """A task's acceptance criteria, in order."""

    items: tuple[Criterion, ...]

    @property
    def done(self) -> int:
        return sum(item.checked for item in self.items)

    def to_json(self) -> dict[str, object]:
        """``{"done", "total", "items": [{"checked", "text"}]}``."""
        return {
            "done": self.done,
            "total": len(self.items),
            "items": [{"checked": item.checked, "text": item.text} for item in self.items],
        }


def acceptance_criteria(body: str) -> Criteria | None:
    """The body's acceptance criteria, or ``None`` when it has none."""
    text = body.replace("\r\n", "\n")
    found = [
        Criterion(match.group(1) == "x", match.group(2).strip())
        for section in _MARKED.findall(text)
        for match in _MARKED_ITEM.finditer(section)
    ]
    if not found:
        heading = _HEADING.search(text)
        if heading is not None:
            rest = text[heading.end() :]
            following = _NEXT_HEADING.search(rest)
            section = rest[: following.start()] if following else rest
            found = [
                Criterion(m.group(1) == "x", m.group(2).strip()) for m in _ITEM.finditer(section)
            ]
    return Criteria(tuple(found)) if found else None
