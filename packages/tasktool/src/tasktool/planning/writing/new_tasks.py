"""A new task as JSON (the dashboard's ``POST /api/tasks``), checked field by field.

The result goes to :func:`tasktool.planning.writing.writes.create_task`, the function ``add``
and the MCP ``add`` tool call, so a task created on the dashboard gets the same id, file
name, checks and bookkeeping. Here each field is checked on its own first, as ``add``
would check it, so one ``task.invalid_fields`` error lists every bad field. Pure.
"""

from __future__ import annotations

from typing import Any

import msgspec

from tasktool.files.parsing.taskfile import LIST_FIELDS
from tasktool.model.config import Config
from tasktool.model.errors import TaskToolError
from tasktool.model.limits import check_body_size, check_list_size, check_value_size
from tasktool.planning.writing.changes import (
    EDITABLE_SCALARS,
    check_value,
    field_error,
    invalid_fields,
    json_type_error,
    new_task_fields,
)

__all__ = ["NEW_LISTS", "NEW_SCALARS", "PLACEMENT", "NewTaskRequest", "new_task_from_json"]

#: Fields a new task may carry: the values ``add`` takes, its lists, and its placement.
NEW_SCALARS: tuple[str, ...] = (*EDITABLE_SCALARS, "parent", "external_id", "created_at")
NEW_LISTS: tuple[str, ...] = LIST_FIELDS
PLACEMENT: tuple[str, ...] = ("body", "group", "id")


class NewTaskRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What ``create_task`` takes: fields, body, group folder and an explicit id."""

    fields: dict[str, Any]
    body: str = ""
    group: str | None = None
    task_id: str | None = None


def _check(field: str, value: Any, config: Config) -> None:
    if field == "body":
        check_body_size(value)
    elif isinstance(value, list):
        check_list_size(field, value)
    else:
        check_value_size(field, value)
        check_value(field, value, config)


def new_task_from_json(payload: object, config: Config) -> NewTaskRequest:
    """``{"title": "...", "priority": "high", "tags": ["a"], "body": "...", "group": "api"}``
    as a checked :class:`NewTaskRequest`; ``null`` or ``""`` leaves a field unset."""
    if not isinstance(payload, dict):
        raise TaskToolError("a new task must be a JSON object", code="task.invalid_edit")
    errors: dict[str, dict[str, str]] = {}
    given: dict[str, Any] = {}
    for field, value in payload.items():
        if field not in (*NEW_SCALARS, *NEW_LISTS, *PLACEMENT):
            known = ", ".join((*NEW_SCALARS, *NEW_LISTS, *PLACEMENT))
            errors[field] = field_error("task.unknown_field", f"{field!r} is not one of: {known}")
            continue
        wrong = json_type_error(field, value, is_list=field in NEW_LISTS)
        if wrong is not None:
            errors[field] = wrong
        elif field in NEW_LISTS:
            given[field] = [item.strip() for item in value if item.strip()]
        elif value is not None and (value.strip() or field == "body"):
            given[field] = value if field == "body" else value.strip()
    if not given.get("title") and "title" not in errors:
        errors["title"] = field_error("task.invalid_title", "the title cannot be empty")
    for field, value in given.items():
        if field not in errors and field not in {"group", "id"}:
            try:
                _check(field, value, config)
            except TaskToolError as exc:
                errors[field] = field_error(exc.code, exc.message)
    if errors:
        raise invalid_fields(errors)
    fields = new_task_fields(
        given["title"],
        {field: given.get(field) for field in NEW_SCALARS if field != "title"},
        {field: given.get(field, ()) for field in NEW_LISTS},
    )
    return NewTaskRequest(
        fields=fields, body=given.get("body", ""), group=given.get("group"), task_id=given.get("id")
    )
