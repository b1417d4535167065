"""How large a task may be: bounds every writer (CLI, web, MCP) checks before writing.

A task file is read whole by every command and sent whole by the dashboard, so one
oversized title or body (a paste gone wrong, an agent looping) makes every later read
slow and the dashboard's pages huge. The bounds are far above any real task:

=================  ==========================================
``title``          500 characters
other values       500 characters each (``owner``, ``phase``, a tag, a dependency...)
lists              1,000 items each
body               1 MiB of UTF-8
web request body   4 MiB (a 1 MiB body with JSON escapes), refused past it while read
=================  ==========================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasktool.model.errors import TaskToolError

__all__ = [
    "BODY_MAX",
    "LIST_MAX",
    "REQUEST_MAX",
    "TITLE_MAX",
    "VALUE_MAX",
    "check_body_size",
    "check_fields_size",
    "check_list_size",
    "check_value_size",
]

TITLE_MAX = 500
VALUE_MAX = 500
LIST_MAX = 1_000
BODY_MAX = 1 << 20
REQUEST_MAX = 4 << 20


def _too_large(what: str, limit: str) -> TaskToolError:
    return TaskToolError(f"{what} is too large (at most {limit})", code="task.too_large")


def check_value_size(field: str, value: str) -> None:
    """Refuse a scalar value (or one list item) past :data:`TITLE_MAX`/:data:`VALUE_MAX`."""
    limit = TITLE_MAX if field == "title" else VALUE_MAX
    if len(value) > limit:
        raise _too_large(f"{field} ({len(value):,} characters)", f"{limit} characters")


def check_list_size(field: str, items: list[str] | tuple[str, ...]) -> None:
    """Refuse a list past :data:`LIST_MAX` items or with an item past :data:`VALUE_MAX`."""
    if len(items) > LIST_MAX:
        raise _too_large(f"{field} ({len(items):,} items)", f"{LIST_MAX:,} items")
    for item in items:
        check_value_size(field, item)


def check_body_size(body: str) -> None:
    """Refuse a body past :data:`BODY_MAX` bytes of UTF-8."""
    size = len(body) if body.isascii() else len(body.encode("utf-8", "surrogatepass"))
    if size > BODY_MAX:
        raise _too_large(f"the body ({size:,} bytes)", "1 MiB")


def check_fields_size(fields: Mapping[str, Any], body: str | None = None) -> None:
    """:func:`check_value_size`, :func:`check_list_size` and :func:`check_body_size` over a
    new task's fields (strings and lists of strings) and body."""
    for field, value in fields.items():
        if isinstance(value, str):
            check_value_size(field, value)
        elif isinstance(value, list | tuple):
            check_list_size(field, [str(item) for item in value])
    if body is not None:
        check_body_size(body)
