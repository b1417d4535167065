"""``board``: active tasks in columns by one field, columns in the field's natural order.

Natural order: status by advancement (pending ... completed), priority low to
critical, effort by the configured vocabulary, type as declared, phase by the
config's list; owners, tags and groups naturally sorted. Values outside the
known ones follow, naturally sorted, and ``(none)`` comes last. Known values
always get a column, even an empty one; a task goes in one column per tag.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from operator import attrgetter
from typing import Any, Literal, get_args

import msgspec

from tasktool.model.config import Config
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task, natural_key
from tasktool.model.views import task_summary
from tasktool.model.vocabulary import field_values

__all__ = [
    "GROUP_FIELDS",
    "NONE_COLUMN",
    "Board",
    "Column",
    "GroupField",
    "build_board",
    "count_columns",
    "count_fields",
]

GroupField = Literal["status", "priority", "effort", "type", "owner", "phase", "tag", "group"]
GROUP_FIELDS: tuple[str, ...] = get_args(GroupField)
NONE_COLUMN = "(none)"


class Column(msgspec.Struct, frozen=True, kw_only=True):
    """One column: its ``value`` (``None`` for the ``(none)`` column) and tasks."""

    value: str | None
    tasks: tuple[Task, ...]
    #: The repository's name for the value (Backlog.md's ``In Progress``), when not the value.
    label: str | None = None

    @property
    def name(self) -> str:
        return NONE_COLUMN if self.value is None else self.label or self.value


class Board(msgspec.Struct, frozen=True, kw_only=True):
    """The result of ``board``."""

    group_by: str
    columns: tuple[Column, ...]

    def to_json(self, cut: Callable[[Column], Sequence[Task]] | None = None) -> dict[str, Any]:
        """``{"group_by", "columns": [{"name", "value", "count", "tasks": [...]}]}``;
        ``cut`` picks the tasks a column lists (a page of it), ``count`` is all of them."""
        return {
            "group_by": self.group_by,
            "columns": [
                {
                    "name": column.name,
                    "value": column.value,
                    "count": len(column.tasks),
                    "tasks": [
                        task_summary(task, _CARD_KEYS)
                        for task in (cut(column) if cut else column.tasks)
                    ],
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


def _known(group_by: str, config: Config) -> tuple[str, ...]:
    """The field's known values (each always a column); ``filter.field`` for another field."""
    if group_by not in GROUP_FIELDS:
        raise TaskToolError(
            f"cannot group by {group_by!r}; one of: {', '.join(GROUP_FIELDS)}", code="filter.field"
        )
    layout = config.layout
    if group_by == "status" and layout.foreign:  # the repository's columns, in its order
        meant = (layout.status_of(name) for name in layout.statuses)
        return tuple(dict.fromkeys(status for status in meant if status is not None))
    return field_values(group_by, config) or ()


def _labeller(group_by: str, config: Config) -> Callable[[str | None], str | None]:
    """The repository's name of a column's value (``None``: the value is its name)."""
    layout = config.layout
    if group_by != "status" or not layout.foreign:
        return lambda value: None
    return lambda value: layout.name_of(value) if value is not None else None


def _column_order(known: tuple[str, ...], present: Collection[str | None]) -> list[str | None]:
    """Known values, then the others naturally sorted, then ``None`` when some task has none."""
    extra = sorted((v for v in present if v is not None and v not in known), key=natural_key)
    return [*known, *extra, *((None,) if None in present else ())]


def build_board(
    tasks: Sequence[Task], config: Config, group_by: str, *, ordered: bool = False
) -> Board:
    """Group the active tasks into columns by ``group_by`` (one of :data:`GROUP_FIELDS`).

    ``ordered``: the tasks already come in natural id order (as a scan returns them).
    """
    known = _known(group_by, config)
    values_of = _values(group_by)
    buckets: dict[str | None, list[Task]] = {value: [] for value in known}
    active = [task for task in tasks if not task.archived]
    if not ordered:
        active.sort(key=lambda t: natural_key(t.id))
    for task in active:
        values = values_of(task) or (None,)
        for value in dict.fromkeys(values) if len(values) > 1 else values:
            if value in buckets:
                buckets[value].append(task)
            else:
                buckets[value] = [task]
    present = [value for value, members in buckets.items() if members]
    label = _labeller(group_by, config)
    return Board(
        group_by=group_by,
        columns=tuple(
            Column(value=value, tasks=tuple(buckets.get(value, ())), label=label(value))
            for value in _column_order(known, present)
        ),
    )


def count_columns(
    tasks: Iterable[Task], config: Config, group_by: str
) -> tuple[tuple[str, int], ...]:
    """``(column name, task count)`` of the board of ``tasks`` (all active), without building it."""
    if group_by != "tag":
        return count_fields(tasks, config, (group_by,))[group_by]
    known = _known(group_by, config)
    counts: Counter[str | None] = Counter()
    for task in tasks:
        tags = task.tags
        for tag in (dict.fromkeys(tags) if len(tags) > 1 else tags) or (None,):
            counts[tag] += 1
    return _counted(known, counts)


def count_fields(
    tasks: Iterable[Task], config: Config, fields: Sequence[str]
) -> dict[str, tuple[tuple[str, int], ...]]:
    """:func:`count_columns` of each single-valued field (not ``tag``), in one pass over
    ``tasks``: the tasks are counted by their combination of values (a few hundred at most),
    then each field's columns from those counts."""
    knowns = [_known(field, config) for field in fields]
    values_of = map(attrgetter(*fields), tasks)  # a tuple per task for several fields
    combinations = Counter(values_of if len(fields) > 1 else zip(values_of))
    counts: list[Counter[str | None]] = [Counter() for _ in fields]
    for values, number in combinations.items():
        for count, value in zip(counts, values, strict=True):
            count[value or None] += number
    return {
        field: _counted(known, count)
        for field, known, count in zip(fields, knowns, counts, strict=True)
    }


def _counted(known: tuple[str, ...], counts: Counter[str | None]) -> tuple[tuple[str, int], ...]:
    return tuple(
        (NONE_COLUMN if value is None else value, counts.get(value, 0))
        for value in _column_order(known, counts)
    )
