"""``board``: active tasks in columns by one field, columns in the field's natural order.

Natural order: status by advancement (pending ... completed), priority low to
critical, effort by the configured vocabulary, type as declared, phase by the
config's list; owners, tags and groups naturally sorted. Values outside the
known ones follow, naturally sorted, and ``(none)`` comes last. Known values
always get a column, even an empty one; a task goes in one column per tag.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, get_args

import msgspec

from tasktool.model.errors import TaskToolError
from tasktool.model.settings import Settings
from tasktool.model.task import Task, natural_key
from tasktool.model.views import task_summary
from tasktool.model.vocabulary import field_values

__all__ = ["GROUP_FIELDS", "NONE_COLUMN", "Board", "Column", "GroupField", "build_board"]

GroupField = Literal["status", "priority", "effort", "type", "owner", "phase", "tag", "group"]
GROUP_FIELDS: tuple[str, ...] = get_args(GroupField)
NONE_COLUMN = "(none)"


class Column(msgspec.Struct, frozen=True, kw_only=True):
    """One column: its ``value`` (``None`` for the ``(none)`` column) and tasks."""

    value: str | None
    tasks: tuple[Task, ...]

    @property
    def name(self) -> str:
        return NONE_COLUMN if self.value is None else self.value


class Board(msgspec.Struct, frozen=True, kw_only=True):
    """The result of ``board``."""

    group_by: str
    columns: tuple[Column, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"group_by", "columns": [{"name", "value", "count", "tasks": [...]}]}``."""
        return {
            "group_by": self.group_by,
            "columns": [
                {
                    "name": column.name,
                    "value": column.value,
                    "count": len(column.tasks),
                    "tasks": [task_summary(task, _CARD_KEYS) for task in column.tasks],
                }
                for column in self.columns
            ],
        }


_CARD_KEYS = ("id", "title", "status", "priority", "effort", "owner", "phase", "file_path")


def _values(field: str) -> Callable[[Task], tuple[str, ...]]:
    if field == "tag":
        return lambda task: task.tags
    attribute = field

    def single(task: Task) -> tuple[str, ...]:
        value = getattr(task, attribute)
        return (value,) if value else ()

    return single


def build_board(tasks: Sequence[Task], settings: Settings, group_by: str) -> Board:
    """Group the active tasks into columns by ``group_by`` (one of :data:`GROUP_FIELDS`)."""
    if group_by not in GROUP_FIELDS:
        raise TaskToolError(
            f"cannot group by {group_by!r}; one of: {', '.join(GROUP_FIELDS)}", code="filter.field"
        )
    values_of = _values(group_by)
    known = field_values(group_by, settings) or ()
    buckets: dict[str | None, list[Task]] = {value: [] for value in known}
    active = sorted((task for task in tasks if not task.archived), key=lambda t: natural_key(t.id))
    for task in active:
        values = values_of(task) or (None,)
        for value in dict.fromkeys(values):
            buckets.setdefault(value, []).append(task)
    extra = sorted((v for v in buckets if v is not None and v not in known), key=natural_key)
    order: list[str | None] = [*known, *extra]
    if buckets.get(None):
        order.append(None)
    return Board(
        group_by=group_by,
        columns=tuple(Column(value=value, tasks=tuple(buckets[value])) for value in order),
    )
