"""Shared fixtures of the tasktool core tests: a terse task factory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tasktool.model.task import Task

TaskFactory = Callable[..., Task]


def _make(task_id: str | None = None, /, **fields: Any) -> Task:
    if task_id is None:
        task_id = fields.pop("id")
    fields.setdefault("title", f"Task {task_id}")
    fields.setdefault("file_path", f"tasks/{task_id}.md")
    for name in ("dependencies", "tags", "touches"):
        if name in fields:
            fields[name] = tuple(fields[name])
    return Task(id=task_id, **fields)


@pytest.fixture
def make() -> TaskFactory:
    """``make("3", status="completed", dependencies=["1"])`` builds a ``Task``."""
    return _make
