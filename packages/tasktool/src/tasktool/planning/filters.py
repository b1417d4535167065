"""``--filter``, ``--sort`` and ``--group-by`` over tasks (pure; ``next`` and ``board`` reuse it).

Filters: ``field=value`` (``a,b`` means either), ``field!=value``,
``field~text`` (case-insensitive substring), and ``<``, ``<=``, ``>``, ``>=``
for ordered fields: ``priority`` and ``effort`` by vocabulary order,
``status`` by advancement order, dates as text. An empty value matches an
unset field (``owner=``). List fields (``tags``, ``dependencies``...) match
when any item matches. Several filters must all match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec

from tasktool.files.parsing.taskfile import LIST_FIELDS, SCALAR_FIELDS
from tasktool.model.config import Config
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task, natural_key
from tasktool.model.vocabulary import DATE_FIELDS, field_values

__all__ = [
    "ALIASES",
    "FIELDS",
    "ORDERED_FIELDS",
    "Filter",
    "apply_filters",
    "check_field",
    "group_tasks",
    "parse_filter",
    "rank_of",
    "sort_tasks",
    "values_of",
]

#: Every field a filter, sort or grouping can name.
FIELDS: tuple[str, ...] = ("id", *SCALAR_FIELDS, "group", *LIST_FIELDS)
ORDERED_FIELDS = frozenset(
    {"priority", "effort", "status", "created_at", "completed_at", "cancelled_at"}
)
#: Singular spellings people coming from taskmd and Backlog.md type (``tag=X``).
ALIASES = {"tag": "tags", "dependency": "dependencies", "dep": "dependencies"}
_EXPRESSION = re.compile(r"^\s*([a-z_]+)\s*(<=|>=|!=|=|<|>|~)(.*)$")


class Filter(msgspec.Struct, frozen=True):
    """One parsed ``--filter`` expression."""

    field: str
    op: str
    values: tuple[str, ...]


def check_field(field: str, what: str = "field") -> str:
    """``field`` itself, or ``TaskToolError`` naming the known fields."""
    if field not in FIELDS:
        raise TaskToolError(
            f"unknown {what} {field!r}; known fields: {', '.join(FIELDS)}", code="filter.field"
        )
    return field


def parse_filter(expression: str) -> Filter:
    """Parse ``field<op>value``; unknown fields and unsupported comparisons are errors."""
    match = _EXPRESSION.match(expression)
    if match is None:
        raise TaskToolError(
            f"cannot read filter {expression!r}; expected field=value, field!=value, "
            "field~text or field<op>value with <, <=, >, >=",
            code="filter.syntax",
        )
    field = check_field(ALIASES.get(match.group(1), match.group(1)))
    op, raw = match.group(2), match.group(3).strip()
    if op in {"<", "<=", ">", ">="} and field not in ORDERED_FIELDS:
        raise TaskToolError(
            f"{field} cannot be compared with {op}; ordered fields: "
            + ", ".join(sorted(ORDERED_FIELDS)),
            code="filter.comparison",
        )
    values = tuple(item.strip() for item in raw.split(",")) if op in {"=", "!="} else (raw,)
    return Filter(field, op, values)


def rank_of(field: str, config: Config) -> Callable[[str], int | str] | None:
    """The ordering of a field's values (vocabulary position), or ``None`` if textual."""
    known = field_values(field, config)
    if known is None:
        return None
    order = {value: rank for rank, value in enumerate(known)}
    unknown = len(order)
    return lambda value: order.get(value, unknown)


def values_of(task: Task, field: str) -> tuple[str, ...]:
    """A field's values as a tuple (empty when unset)."""
    value = getattr(task, field)
    if isinstance(value, tuple):
        return value
    return () if value is None else (value,)


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def _predicate(flt: Filter, config: Config) -> Callable[[Task], bool]:
    field, op, values = flt.field, flt.op, flt.values
    if op in {"=", "!="}:
        wanted = {value for value in values if value}
        want_unset = "" in values

        def equal(task: Task) -> bool:
            have = values_of(task, field)
            hit = bool(wanted.intersection(have)) or (want_unset and not have)
            return hit if op == "=" else not hit

        return equal
    if op == "~":
        needle = values[0].lower()
        return lambda task: any(needle in value.lower() for value in values_of(task, field))
    # Dates compare as text; the other ordered fields only within their vocabulary.
    vocabulary = None if field in DATE_FIELDS else field_values(field, config)
    if vocabulary is not None and values[0] not in vocabulary:
        raise TaskToolError(
            f"unknown {field} {values[0]!r} in filter; expected one of: " + ", ".join(vocabulary),
            code="filter.value",
        )
    rank = rank_of(field, config) or (lambda value: value)
    bound = rank(values[0])

    def compare(task: Task) -> bool:
        return any(
            _compare(op, rank(value), bound)
            for value in values_of(task, field)
            if vocabulary is None or value in vocabulary
        )

    return compare


def apply_filters(tasks: Iterable[Task], expressions: Sequence[str], config: Config) -> list[Task]:
    """Tasks matching every expression."""
    if not expressions:
        return list(tasks)
    predicates = [_predicate(parse_filter(expression), config) for expression in expressions]
    return [task for task in tasks if all(predicate(task) for predicate in predicates)]


def sort_tasks(tasks: Iterable[Task], spec: str, config: Config) -> list[Task]:
    """Sort by comma-separated fields (``-field`` descending); unset values last, ties by id."""
    result = sorted(tasks, key=lambda task: natural_key(task.id))
    for item in reversed([part.strip() for part in spec.split(",") if part.strip()]):
        descending = item.startswith("-")
        field = check_field(item.lstrip("-"), "sort field")
        rank = rank_of(field, config)

        # One read of the field per task; unset values are kept aside, not keyed.
        present: list[tuple[Any, Task]] = []
        missing: list[Task] = []
        for task in result:
            values = values_of(task, field)
            if not values:
                missing.append(task)
            elif field in {"id", "parent"}:
                present.append((natural_key(values[0]), task))
            else:
                present.append((rank(values[0]) if rank else ", ".join(values).lower(), task))
        present.sort(key=lambda pair: pair[0], reverse=descending)
        result = [task for _, task in present] + missing
    return result


def group_tasks(
    tasks: Iterable[Task], field: str, config: Config
) -> list[tuple[str | None, list[Task]]]:
    """Tasks per value of ``field`` in the field's natural order, unset last.

    A task with several values (``tags``) appears under each.
    """
    check_field(field, "group-by field")
    groups: dict[str | None, list[Task]] = {}
    for task in tasks:
        for value in values_of(task, field) or (None,):
            groups.setdefault(value, []).append(task)
    rank = rank_of(field, config)

    def order(value: str | None) -> Any:
        if value is None:
            return (2,)
        if rank is not None:
            return (0, rank(value), value)
        return (1, *natural_key(value)) if field in {"id", "parent"} else (1, value.lower())

    return [(value, groups[value]) for value in sorted(groups, key=order)]
