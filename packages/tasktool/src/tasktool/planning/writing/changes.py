"""Edits to a task as values: what ``set`` (or any front end) may change, checked.

:func:`plan_update` turns a :class:`TaskChange` into the frontmatter keys to
write, applying the bookkeeping every writer shares: status, priority, type
and effort are checked against their vocabularies, and moving to
``completed``/``cancelled`` stamps ``completed_at``/``cancelled_at`` (clearing
the other); leaving them clears both. Pure: no files, no clock (``today`` is
passed in).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

import msgspec

from tasktool.files.parsing.taskfile import LIST_FIELDS, SCALAR_FIELDS
from tasktool.model.config import Config
from tasktool.model.errors import TaskToolError
from tasktool.model.limits import check_body_size, check_list_size, check_value_size
from tasktool.model.task import Task
from tasktool.model.vocabulary import (
    CLOSED_FIELDS,
    DATE_FIELDS,
    INVALID_CODE,
    field_values,
    is_date,
)

__all__ = [
    "EDITABLE_LISTS",
    "EDITABLE_SCALARS",
    "REMOVE",
    "TaskChange",
    "change_from_json",
    "check_references",
    "check_text",
    "check_value",
    "field_error",
    "invalid_fields",
    "json_type_error",
    "new_task_fields",
    "plan_create",
    "plan_update",
    "status_dates",
]

REMOVE: Final = None  # a frontmatter key mapped to ``REMOVE`` is deleted


class TaskChange(msgspec.Struct, frozen=True, kw_only=True):
    """Field edits: ``set`` scalars (``None`` clears), ``replace``/``add``/``remove`` list items."""

    set: dict[str, str | None] = msgspec.field(default_factory=dict)
    replace: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    add: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    remove: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    body: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.set or self.replace or self.add or self.remove) and self.body is None


def _invalid(field: str, value: str, allowed: Collection[str]) -> TaskToolError:
    return TaskToolError(
        f"invalid {field} {value!r}; expected one of: {', '.join(allowed)}",
        code=INVALID_CODE[field],
    )


#: C0 and C1 control characters and DEL: never in a field (a body may hold tabs and newlines).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def check_text(field: str, value: str) -> None:
    """Reject a control character in a field's text (a title, an owner, a tag...): as ids
    refuse them. A terminal would obey them and YAML would have to escape them."""
    found = _CONTROL.search(value)
    if found is not None:
        raise TaskToolError(
            f"{field} holds the control character {found.group()!r}; use plain text",
            code="task.invalid_text",
        )


def check_value(field: str, value: str, config: Config) -> None:
    """Reject a status, priority, type, effort or date outside its vocabulary, and control
    characters in any field."""
    check_text(field, value)
    if field == "status" and config.layout.status_of(value) is not None:
        return  # a name the writers read as a status (done, "In Progress": planning.foreign)
    if field in CLOSED_FIELDS:
        allowed = field_values(field, config) or ()
        if value not in allowed:
            raise _invalid(field, value, allowed)
    if field in DATE_FIELDS and not is_date(value):
        raise TaskToolError(
            f"{field} must be a YYYY-MM-DD date, got {value!r}", code="task.invalid_date"
        )
    if field == "title" and not value.strip():
        raise TaskToolError("the title cannot be empty", code="task.invalid_title")


def check_references(
    task_id: str, field: str, ids: Collection[str], known: Collection[str]
) -> None:
    """Dependencies and parents must name other, existing tasks."""
    for other in ids:
        if other == task_id:
            raise TaskToolError(
                f"task {task_id} cannot reference itself in {field}", code="task.self_reference"
            )
        if other not in known:
            raise TaskToolError(f"{field}: no task has id {other!r}", code="task.unknown_reference")


def status_dates(old: str | None, new: str, today: str) -> dict[str, Any]:
    """The ``completed_at``/``cancelled_at`` keys to write when the status changes."""
    if old == new:
        return {}
    if new == "completed":
        return {"completed_at": today, "cancelled_at": REMOVE}
    if new == "cancelled":
        return {"cancelled_at": today, "completed_at": REMOVE}
    return {"completed_at": REMOVE, "cancelled_at": REMOVE}


def plan_create(fields: Mapping[str, Any], today: str) -> dict[str, Any]:
    """A new task's keys: ``created_at`` today and the date its status stamps (``add
    --status completed`` stamps ``completed_at`` as ``set`` would), unless ``fields`` give
    them."""
    dates = status_dates(None, str(fields.get("status") or "pending"), today)
    return {
        "created_at": today,
        **{key: value for key, value in dates.items() if value is not REMOVE},
        **fields,
    }


def plan_update(
    task: Task, change: TaskChange, config: Config, known_ids: Collection[str], today: str
) -> dict[str, Any]:
    """The frontmatter keys to write (``REMOVE`` deletes), or ``TaskToolError`` if invalid."""
    updates: dict[str, Any] = {}
    for field, value in change.set.items():
        if field not in SCALAR_FIELDS:
            raise TaskToolError(f"unknown task field {field!r}", code="task.unknown_field")
        if value is None or not value.strip():
            if field in {"title", "status"}:
                raise TaskToolError(f"{field} cannot be cleared", code=INVALID_CODE[field])
            updates[field] = REMOVE
            continue
        check_value_size(field, value)
        check_value(field, value, config)
        updates[field] = value
    if change.body is not None:
        check_body_size(change.body)
    if updates.get("parent"):
        check_references(task.id, "parent", [updates["parent"]], known_ids)
    for field, values in _list_updates(task, change).items():
        check_list_size(field, values)
        updates[field] = values
    if "dependencies" in updates:
        added = set(updates["dependencies"]) - set(task.dependencies)
        check_references(task.id, "dependencies", sorted(added), known_ids)
    if "status" in updates:
        dates = status_dates(task.status, updates["status"], today)
        updates.update({key: value for key, value in dates.items() if key not in change.set})
    return updates


def _list_updates(task: Task, change: TaskChange) -> Mapping[str, list[str]]:
    fields = set(change.replace) | set(change.add) | set(change.remove)
    unknown = fields - set(LIST_FIELDS)
    if unknown:
        raise TaskToolError(f"unknown list field {sorted(unknown)[0]!r}", code="task.unknown_field")
    result: dict[str, list[str]] = {}
    for field in sorted(fields):
        for item in (*change.replace.get(field, ()), *change.add.get(field, ())):
            check_text(field, item)
        items = list(change.replace.get(field, getattr(task, field)))
        items += [item for item in change.add.get(field, ()) if item not in items]
        dropped = set(change.remove.get(field, ()))
        result[field] = [item for item in dict.fromkeys(items) if item not in dropped]
    return result


#: Fields a JSON edit (web ``PUT /api/tasks/{id}``) may carry: scalars, lists (replaced
#: whole) and the body.
EDITABLE_SCALARS: tuple[str, ...] = (
    "title",
    "status",
    "priority",
    "effort",
    "type",
    "owner",
    "phase",
)
EDITABLE_LISTS: tuple[str, ...] = ("tags", "dependencies")


def field_error(code: str, message: str) -> dict[str, str]:
    """One entry of ``task.invalid_fields``' ``details["fields"]``."""
    return {"code": code, "message": message}


def json_type_error(field: str, value: object, *, is_list: bool) -> dict[str, str] | None:
    """The ``task.invalid_value`` of a JSON field of the wrong type (a scalar: a string or
    ``null``; a list: strings), or ``None``."""
    if is_list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return field_error("task.invalid_value", f"{field} must be a list of strings")
    elif value is not None and not isinstance(value, str):
        return field_error("task.invalid_value", f"{field} must be a string")
    return None


def invalid_fields(errors: Mapping[str, dict[str, str]]) -> TaskToolError:
    """One error naming every bad field, each with its own code in ``details["fields"]``."""
    return TaskToolError(
        f"invalid fields: {', '.join(errors)}",
        code="task.invalid_fields",
        details={"fields": dict(errors)},
    )


def change_from_json(
    payload: object,
    task: Task,
    config: Config,
    known_ids: Collection[str],
    today: str,
) -> TaskChange:
    """A partial edit as JSON (``{"status": "completed", "tags": ["a"], "body": "..."}``;
    ``null`` or ``""`` clears a scalar) as a checked :class:`TaskChange`.

    Every field is checked on its own, as ``set`` would check it, so one
    ``task.invalid_fields`` error lists each bad field with its own code in
    ``details["fields"]``.
    """
    if not isinstance(payload, dict):
        raise TaskToolError("the edit must be a JSON object", code="task.invalid_edit")
    errors: dict[str, dict[str, str]] = {}
    single: dict[str, TaskChange] = {}
    for field, value in payload.items():
        if field not in (*EDITABLE_SCALARS, *EDITABLE_LISTS, "body"):
            known = ", ".join((*EDITABLE_SCALARS, *EDITABLE_LISTS, "body"))
            errors[field] = field_error(
                "task.unknown_field", f"{field!r} cannot be edited; editable: {known}"
            )
            continue
        wrong = json_type_error(field, value, is_list=field in EDITABLE_LISTS)
        if field == "body" and value is None:
            wrong = field_error("task.invalid_value", "body must be a string")
        if wrong is not None:
            errors[field] = wrong
        elif field in EDITABLE_SCALARS:
            single[field] = TaskChange(set={field: value})
        elif field in EDITABLE_LISTS:
            items = tuple(item.strip() for item in value if item.strip())
            single[field] = TaskChange(replace={field: items})
        else:
            single[field] = TaskChange(body=value)
    for field, change in single.items():
        try:
            plan_update(task, change, config, known_ids, today)
        except TaskToolError as exc:
            errors[field] = field_error(exc.code, exc.message)
    if errors:
        raise invalid_fields(errors)
    return TaskChange(
        set={f: c.set[f] for f, c in single.items() if f in EDITABLE_SCALARS},
        replace={f: c.replace[f] for f, c in single.items() if f in EDITABLE_LISTS},
        body=single["body"].body if "body" in single else None,
    )


def new_task_fields(
    title: str, scalars: Mapping[str, str | None], lists: Mapping[str, Sequence[str]]
) -> dict[str, Any]:
    """The fields of a task to create (``add``): title, status (``pending`` unless given),
    the scalars and lists that have a value."""
    fields: dict[str, Any] = {"title": title, "status": scalars.get("status") or "pending"}
    fields.update({key: value for key, value in scalars.items() if value and key != "status"})
    fields.update({key: list(values) for key, values in lists.items() if values})
    return fields
