"""Pages of a long answer: ``offset`` and ``limit`` in the query, the total in the answer.

The JSON API pages every list by default, so no answer grows with the
repository unasked: ``GET /api/tasks`` gives :data:`PAGE_DEFAULT` tasks, at most
:data:`PAGE_MAX` per request, and ``limit=all`` (or ``0``, as the CLI's
``--limit 0``) asks for everything. The body stays the list the CLI prints; the
total is the ``X-Total-Count`` header and the neighbouring pages are ``Link``
headers (``rel="next"``, ``"prev"``), as GitHub's API gives them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import Response

from tasktool.model.errors import TaskToolError

__all__ = ["PAGE_DEFAULT", "PAGE_MAX", "Window", "link_headers", "query_window"]

T = TypeVar("T")
PAGE_DEFAULT = 100
PAGE_MAX = 1000


@dataclass(frozen=True)
class Window:
    """Which items one answer holds: ``limit`` from ``offset`` (``limit`` ``None``: all)."""

    offset: int = 0
    limit: int | None = PAGE_DEFAULT

    def cut(self, items: Sequence[T]) -> list[T]:
        end = None if self.limit is None else self.offset + self.limit
        return list(items[self.offset : end])

    def following(self, total: int) -> int | None:
        """The next page's offset, or ``None`` when this one reaches the end."""
        if self.limit is None or self.offset + self.limit >= total:
            return None
        return self.offset + self.limit

    def preceding(self) -> int | None:
        """The previous page's offset, or ``None`` on the first page."""
        if self.offset == 0 or self.limit is None:
            return None
        return max(0, self.offset - self.limit)


def _bad(name: str, expected: str) -> TaskToolError:
    return TaskToolError(
        f"query parameter {name!r} must be {expected}", code="web.invalid_parameter"
    )


def query_window(request: Request, default: int = PAGE_DEFAULT, most: int = PAGE_MAX) -> Window:
    """``offset`` (0) and ``limit`` (``default``; 1 to ``most``, or ``all``/``0``)."""
    text = request.query_params.get("limit", "").strip().lower()
    limit: int | None = default
    if text in {"all", "0"}:
        limit = None
    elif text:
        if not text.isdigit() or int(text) > most:
            raise _bad("limit", f"a whole number from 1 to {most}, or all")
        limit = int(text)
    offset_text = request.query_params.get("offset", "").strip()
    if offset_text and not offset_text.isdigit():
        raise _bad("offset", "a whole number >= 0")
    return Window(offset=int(offset_text or 0), limit=limit)


def link_headers(response: Response, request: Request, window: Window, total: int) -> Response:
    """``X-Total-Count`` and the ``Link`` header to the next and previous pages."""
    response.headers["X-Total-Count"] = str(total)
    links = []
    for rel, offset in (("next", window.following(total)), ("prev", window.preceding())):
        if offset is not None:
            url = request.url.include_query_params(offset=offset, limit=window.limit)
            links.append(f'<{url}>; rel="{rel}"')
    if links:
        response.headers["Link"] = ", ".join(links)
    return response
