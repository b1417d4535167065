"""Errors tasktool raises.

::

    mtcommon.CodedError
     └── TaskToolError             code chosen per raise: config.*, task.*, ...

The CLI renders any ``TaskToolError`` as one line on stderr and exits 1.
"""

from __future__ import annotations

from mtcommon import CodedError


class TaskToolError(CodedError):
    """An error with a stable code that a tasktool front end reports to its user."""

    code = "tasktool.error"


def task_not_found(task_id: str) -> TaskToolError:
    """The one ``task.not_found`` error every front end raises."""
    return TaskToolError(f"no task with id {task_id!r}", code="task.not_found")
