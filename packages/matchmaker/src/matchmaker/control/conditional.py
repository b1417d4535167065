"""Conditional writes: the ``If-Match`` header of ``PATCH`` and ``DELETE``.

A client reads a Project (its ``ETag``), changes it and writes it back with
``If-Match: <that ETag>``; the store refuses the write with 412
``project.conflict`` if another write came in between, so two read-modify-write
clients never silently undo each other. A write without ``If-Match`` (or with
``If-Match: *``) is unconditional, as before ETags existed.
"""

from __future__ import annotations

from starlette.requests import Request

from matchmaker.errors import MatchmakerError
from matchmaker.store import Revisions

__all__ = ["if_match"]


def if_match(request: Request) -> Revisions:
    """The revisions ``If-Match`` accepts: ``None`` when absent or ``*``.

    Entity tags compare strongly (RFC 9110), so a weak tag (``W/"…"``) matches
    nothing; text that is not an entity tag is ``request.invalid``.
    """
    headers = request.headers.getlist("if-match")
    if not headers:
        return None
    revisions: set[str] = set()
    for tag in (part.strip() for header in headers for part in header.split(",")):
        if tag == "*":
            return None
        weak = tag.startswith("W/")
        quoted = tag.removeprefix("W/")
        if len(quoted) < 2 or quoted[0] != '"' or quoted[-1] != '"' or '"' in quoted[1:-1]:
            raise MatchmakerError(
                'If-Match must be "*" or entity tags as ETag gives them (such as "9c1e4b0a")',
                code="request.invalid",
                details={"header": "If-Match"},
            )
        if not weak:
            revisions.add(quoted[1:-1])
    return frozenset(revisions)
