"""The stable JSON shapes of tasks (``list``, ``get``; every front end reuses them)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from operator import attrgetter
from types import GenericAlias
from typing import Any, overload

import msgspec

from tasktool.model.task import KEPT, Task

__all__ = [
    "TASK_KEYS",
    "BodyReader",
    "TaskRows",
    "row_type",
    "task_summary",
    "task_view",
    "task_views",
]

#: Keys of a task object, in output order (``body`` only where asked for).
TASK_KEYS: tuple[str, ...] = tuple(field for field in Task.__struct_fields__ if field != "raw_body")


#: Reads a task's body (``repo.bodies.read``: where the load that decoded it keeps it).
BodyReader = Callable[[Task], str]


def task_views(tasks: Sequence[Task], *, body: BodyReader | None = None) -> list[dict[str, Any]]:
    """Tasks as JSON-ready dicts with every field (lists as lists, unset as ``null``); with
    a ``body`` reader, the body last (read now when the parse cache keeps it)."""
    views: list[dict[str, Any]] = msgspec.to_builtins(tasks)
    for view, task in zip(views, tasks, strict=True):
        del view["body"]  # as the task holds it: perhaps only where it is kept
        if body is not None:
            view["body"] = body(task)
    return views


@functools.cache
def row_type(keys: tuple[str, ...]) -> type[msgspec.Struct]:
    """A struct of just these task fields, in this order, typed as in :class:`Task`: it
    encodes to the same JSON as :func:`task_views`' dicts restricted to ``keys``."""
    types = {field.name: field.type for field in msgspec.structs.fields(Task)}
    return msgspec.defstruct("TaskRow", [(key, types[key]) for key in keys], gc=False)


#: The end of a task without its body in compact JSON, by what the task holds for it: no
#: body, or one the parse cache keeps. ``body`` is the last field, and the bytes ``,"``
#: never occur inside an encoded string (a quote there is ``\"``), so in a JSON array of
#: tasks these mark exactly those bodies' keys and values.
_BODY_ENDS = {raw: b',"body":' + msgspec.json.encode(raw) + b"}" for raw in ("", KEPT)}
_raw_body = attrgetter("raw_body")


class TaskRows(Sequence[msgspec.Struct]):
    """Tasks as structs holding only ``keys``: the fast way to JSON for long listings (no
    dict per task, and columns not asked for are never touched). Converted a slice at a
    time as they are read, so a streamed listing never holds every row at once."""

    def __init__(self, tasks: Sequence[Task], keys: Sequence[str] = TASK_KEYS) -> None:
        self._tasks = tasks
        self._keys = tuple(keys)
        self._row = row_type(self._keys)

    def encode(self, start: int, stop: int) -> bytes:
        """Rows ``start:stop`` as a compact JSON array (``UnicodeEncodeError`` when some
        text is not UTF-8). Every field but the body, of tasks that hold none or whose body
        the parse cache keeps (a listing's, from the cache), is the tasks' own JSON minus
        that body: encoded straight from the tasks, without building rows."""
        tasks = self._tasks[start:stop]
        if self._keys == TASK_KEYS and all(raw in _BODY_ENDS for raw in map(_raw_body, tasks)):
            encoded = msgspec.json.encode(tasks)
            for raw in set(map(_raw_body, tasks)):
                encoded = encoded.replace(_BODY_ENDS[raw], b"}")
            return encoded
        return msgspec.json.encode(self[start:stop])

    def __len__(self) -> int:
        return len(self._tasks)

    @overload
    def __getitem__(self, index: int) -> msgspec.Struct: ...

    @overload
    def __getitem__(self, index: slice) -> list[msgspec.Struct]: ...

    def __getitem__(self, index: int | slice) -> msgspec.Struct | list[msgspec.Struct]:
        if isinstance(index, slice):
            rows: list[msgspec.Struct] = msgspec.convert(
                self._tasks[index], GenericAlias(list, (self._row,)), from_attributes=True
            )
            return rows
        row: msgspec.Struct = msgspec.convert(self._tasks[index], self._row, from_attributes=True)
        return row


def task_summary(task: Task, keys: Sequence[str]) -> dict[str, Any]:
    """Some of a task's fields, in ``keys`` order (lists as lists): the cards of ``board``,
    ``next`` and ``tracks``."""
    return {
        key: list(value) if isinstance(value := getattr(task, key), tuple) else value
        for key in keys
    }


def task_view(task: Task, *, body: BodyReader | None = None) -> dict[str, Any]:
    """One task as a JSON-ready dict."""
    return task_views([task], body=body)[0]
