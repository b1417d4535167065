"""pytest fixture for testing automation around task files (a ``pytest11`` plugin).

Installing tasktool gives every test suite ``tasktool_repo``, a factory that
builds a task repository in the test's temporary directory::

    def test_my_report(tasktool_repo):
        repo = tasktool_repo(
            config={"id_strategy": "sequential"},
            tasks=[
                {"id": "001", "title": "Design", "status": "completed"},
                {"id": "002", "title": "Build", "dependencies": ["001"]},
            ],
        )
        assert [item.task.id for item in tasktool.rank(repo.load(), limit=5)] == ["002"]

The config is written as ``.tasktool.yaml`` and each task through
:func:`tasktool.create_task`, so the files are exactly what ``tasktool add``
writes (ids, slugs, ``created_at``, status dates, checks). Tasks are created in
order: a task may depend only on tasks listed before it.

This module is imported whenever pytest starts, so it imports only pytest at
the top; tasktool is loaded when a test asks for the fixture.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tasktool.planning.repository import Repository

__all__ = ["TaskRepo", "make_task_repo", "tasktool_repo"]


@dataclass(frozen=True, slots=True)
class TaskRepo:
    """A task repository made by ``tasktool_repo``: ``root`` holds ``.tasktool.yaml``."""

    root: Path
    env: Mapping[str, str] = field(default_factory=dict)
    """The environment :meth:`load` reads ``TASKTOOL_*`` variables from (empty: none)."""

    @property
    def task_dir(self) -> Path:
        """The task directory the config names (``tasks`` by default)."""
        from tasktool.config import load_config

        return Path(load_config(cwd=self.root, env=self.env, home=self.root).config.task_dir)

    def load(self, *, tolerant: bool = False) -> Repository:
        """The repository as the CLI run in ``root`` sees it (:func:`tasktool.load_context`);
        ``repo.load`` is a :class:`tasktool.Loader` (what ``validation_report`` takes)."""
        from tasktool.planning.repository import load_context

        return load_context(cwd=self.root, env=self.env, home=self.root, tolerant=tolerant)


def make_task_repo(
    root: Path,
    *,
    config: Mapping[str, Any] | None = None,
    tasks: Sequence[Mapping[str, Any]] = (),
) -> TaskRepo:
    """Create ``root`` with ``config`` as ``.tasktool.yaml``, the task directory and ``tasks``
    (field dicts with ``title``; optional ``id``, ``body``, ``group`` and any task field)."""
    import yaml

    from tasktool.config import CONFIG_NAME
    from tasktool.files.storage import atomic_write_text
    from tasktool.planning.writing.writes import create_task

    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(root / CONFIG_NAME, yaml.safe_dump(dict(config or {}), sort_keys=False))
    repo = TaskRepo(root)
    repo.task_dir.mkdir(parents=True, exist_ok=True)
    loaded = repo.load()
    for spec in tasks:
        fields = {k: v for k, v in spec.items() if k not in ("id", "body", "group")}
        fields.setdefault("status", "pending")
        create_task(
            loaded,
            fields,
            body=str(spec.get("body", "")),
            group=spec.get("group"),
            task_id=spec.get("id"),
        )
    return repo


@pytest.fixture
def tasktool_repo(tmp_path: Path) -> Callable[..., TaskRepo]:
    """A factory: ``tasktool_repo(config={...}, tasks=[{...}, ...])`` gives a :class:`TaskRepo`
    in a fresh directory under ``tmp_path`` (call it more than once for several)."""
    numbers = itertools.count(1)

    def make(
        *, config: Mapping[str, Any] | None = None, tasks: Sequence[Mapping[str, Any]] = ()
    ) -> TaskRepo:
        return make_task_repo(tmp_path / f"repo-{next(numbers)}", config=config, tasks=tasks)

    return make
