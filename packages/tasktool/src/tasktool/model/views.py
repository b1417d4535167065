"""The stable JSON shapes of tasks (``list``, ``get``; every front end reuses them)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from types import GenericAlias
from typing import Any

import msgspec

from tasktool.model.task import Task

#: Keys of a task object, in output order (``body`` only where asked for).
TASK_KEYS: tuple[str, ...] = tuple(field for field in Task.__struct_fields__ if field != "body")


def task_views(tasks: Sequence[Task], *, body: bool = False) -> list[dict[str, Any]]:
    """Tasks as JSON-ready dicts with every field (lists as lists, unset as ``null``)."""
    views: list[dict[str, Any]] = msgspec.to_builtins(tasks)
    if not body:
        for view in views:
            del view["body"]
    return views


@functools.cache
def row_type(keys: tuple[str, ...]) -> type[msgspec.Struct]:
    """A struct of just these task fields, in this order, typed as in :class:`Task`: it
    encodes to the same JSON as :func:`task_views`' dicts restricted to ``keys``."""
    types = {field.name: field.type for field in msgspec.structs.fields(Task)}
    return msgspec.defstruct("TaskRow", [(key, types[key]) for key in keys], gc=False)


def task_rows(tasks: Sequence[Task], keys: Sequence[str] = TASK_KEYS) -> list[msgspec.Struct]:
    """Tasks as structs holding only ``keys``: the fast way to JSON for long listings (no
    dict per task, and columns not asked for are never touched)."""
    rows: list[msgspec.Struct] = msgspec.convert(
        tasks, GenericAlias(list, (row_type(tuple(keys)),)), from_attributes=True
    )
    return rows


def task_summary(task: Task, keys: Sequence[str]) -> dict[str, Any]:
    """Some of a task's fields, in ``keys`` order (lists as lists): the cards of ``board``,
    ``next`` and ``tracks``."""
    return {
        key: list(value) if isinstance(value := getattr(task, key), tuple) else value
        for key in keys
    }


def task_view(task: Task, *, body: bool = False) -> dict[str, Any]:
    """One task as a JSON-ready dict."""
    return task_views([task], body=body)[0]
