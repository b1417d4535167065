"""The ordered value sets of task fields and the date rule: one place for every order and check.

``status`` (advancement order), ``priority`` (low to critical), ``type`` (as
declared) and ``effort`` (the configured vocabulary) are closed: ``add``/``set``
reject other values and ``validate`` reports them. ``phase`` is ordered by the
config's list but open (an unknown phase only warns). ``list --sort``,
``--filter`` comparisons, ``board`` columns and ``stats`` counts all take their
order from :func:`field_values`.
"""

from __future__ import annotations

import functools
import re
from datetime import date

from tasktool.model.config import Config
from tasktool.model.task import PRIORITY_ORDER, STATUS_ORDER, TASK_TYPES

__all__ = ["CLOSED_FIELDS", "DATE_FIELDS", "INVALID_CODE", "field_values", "is_date"]

#: Fields whose values must come from their vocabulary.
CLOSED_FIELDS: tuple[str, ...] = ("status", "priority", "type", "effort")
DATE_FIELDS: tuple[str, ...] = ("created_at", "completed_at", "cancelled_at")
#: The error code of a value outside a field's vocabulary (or a cleared required field).
INVALID_CODE: dict[str, str] = {
    "status": "task.invalid_status",
    "priority": "task.invalid_priority",
    "type": "task.invalid_type",
    "effort": "task.invalid_effort",
    "title": "task.invalid_title",
}
# A time after the date is tolerated: other tools write timestamps there.
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ][0-9:.+\-Z]*)?")


def field_values(field: str, config: Config) -> tuple[str, ...] | None:
    """The known values of ``field`` in their natural order, or ``None`` for a free field."""
    if field == "status":
        return tuple(STATUS_ORDER)
    if field == "priority":
        return tuple(PRIORITY_ORDER)
    if field == "type":
        return TASK_TYPES
    if field == "effort":
        return config.effort
    if field == "phase":
        return tuple(phase.id for phase in config.phases)
    return None


@functools.lru_cache(maxsize=4096)
def is_date(text: str) -> bool:
    """A real calendar date written ``YYYY-MM-DD`` (a time may follow)."""
    match = _DATE.fullmatch(text)
    if match is None:
        return False
    try:
        date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return False
    return True
