"""The ``tasktool_repo`` fixture writes what ``tasktool add`` writes and honours the config."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import tasktool
from tasktool.testing import TaskRepo


def test_config_groups_and_bodies_are_written(tasktool_repo: Callable[..., TaskRepo]) -> None:
    repo = tasktool_repo(
        config={"dir": "work"},
        tasks=[
            {"id": "001", "title": "Plan the release", "body": "Steps.\n", "group": "release"},
            {"id": "002", "title": "Tag", "dependencies": ["001"], "priority": "high"},
        ],
    )
    assert repo.task_dir == repo.root / "work"
    loaded = repo.load()
    assert [task.id for task in loaded.tasks] == ["001", "002"]
    first = loaded.get("001")
    assert Path(first.file_path) == repo.root / "work" / "release" / "001-plan-the-release.md"
    assert loaded.bodies.read(first).strip() == "Steps."
    assert loaded.get("002").dependencies == ("001",)
    assert tasktool.validation_report(repo.load).valid


def test_the_cli_sees_the_same_repository(tasktool_repo: Callable[..., TaskRepo]) -> None:
    repo = tasktool_repo(tasks=[{"id": "001", "title": "Only task"}])
    result = subprocess.run(
        [sys.executable, "-m", "tasktool", "next", "--format", "json"],
        cwd=repo.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(repo.root)},
    )
    assert '"001"' in result.stdout


def test_a_bad_task_is_the_cli_error(tasktool_repo: Callable[..., TaskRepo]) -> None:
    with pytest.raises(tasktool.TaskToolError) as caught:
        tasktool_repo(tasks=[{"id": "002", "title": "Tag", "dependencies": ["001"]}])
    assert caught.value.code == "task.unknown_reference"


def test_each_call_is_a_new_repository(tasktool_repo: Callable[..., TaskRepo]) -> None:
    first = tasktool_repo(tasks=[{"title": "A"}])
    second = tasktool_repo()
    assert first.root != second.root
    assert len(first.load().tasks) == 1
    assert second.load().tasks == ()
