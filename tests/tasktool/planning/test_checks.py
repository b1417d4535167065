"""``validate``: each task check, its code, its level and its message."""

from __future__ import annotations

from typing import Any

import pytest

from tasktool.model.config import Config, Phase, Scope
from tasktool.model.diagnostics import Diagnostic
from tasktool.planning.checks import build_report, check_tasks

from .conftest import TaskFactory

SETTINGS = Config(
    phases=(Phase(id="p1", name="One"),),
    scopes={"api": Scope(description="HTTP API"), "ui": Scope()},
)


@pytest.mark.parametrize(
    ("specs", "code", "severity", "message"),
    [
        ([{"id": "1", "title": " "}], "task.missing_title", "error", "required field title"),
        ([{"id": " "}], "task.missing_id", "error", "required field id"),
        ([{"id": "1", "status": "done"}], "task.invalid_status", "error", "status 'done'"),
        ([{"id": "1", "priority": "urgent"}], "task.invalid_priority", "error", "'urgent'"),
        ([{"id": "1", "type": "epic"}], "task.invalid_type", "error", "type 'epic'"),
        ([{"id": "1", "effort": "huge"}], "task.invalid_effort", "error", "effort list"),
        ([{"id": "1", "created_at": "2024-02-30"}], "task.invalid_date", "warning", "created_at"),
        ([{"id": "1", "dependencies": ["9"]}], "task.missing_dependency", "error", "depends on 9"),
        ([{"id": "1", "parent": "9"}], "task.missing_parent", "error", "parent 9"),
        # an archived task's dangling references are reported too, as warnings
        (
            [{"id": "1", "dependencies": ["9"], "archived": True}],
            "task.missing_dependency",
            "warning",
            "depends on 9",
        ),
        ([{"id": "1", "parent": "9", "archived": True}], "task.missing_parent", "warning", "9"),
        # an id that cannot name a file loads, but nothing could reach it
        ([{"id": "a/b"}], "task.invalid_id", "error", "id 'a/b' cannot name a file"),
        ([{"id": "a b"}], "task.invalid_id", "error", "'a b'"),
        ([{"id": "1", "phase": "p9"}], "task.unknown_phase", "warning", "'p9'"),
        (
            [{"id": "1", "touches": ["db"]}],
            "task.unknown_scope",
            "warning",
            "(api (HTTP API), ui)",
        ),
        (
            [{"id": "7", "file_path": "a/7.md"}, {"id": "7", "file_path": "b/7.md"}],
            "task.duplicate_id",
            "error",
            "duplicate id 7 in 2 files: a/7.md, b/7.md",
        ),
        (
            [
                {"id": "1", "dependencies": ["3"]},
                {"id": "3", "dependencies": ["2"]},
                {"id": "2", "dependencies": ["1"]},
            ],
            "task.dependency_cycle",
            "error",
            "dependency cycle: 1 -> 3 -> 2 -> 1",
        ),
        ([{"id": "1", "dependencies": ["1"]}], "task.dependency_cycle", "error", "1 -> 1"),
        (
            [{"id": "1", "parent": "2"}, {"id": "2", "parent": "1"}],
            "task.parent_cycle",
            "error",
            "parent cycle: 1 -> 2 -> 1",
        ),
    ],
)
def test_each_check(
    make: TaskFactory, specs: list[dict[str, Any]], code: str, severity: str, message: str
) -> None:
    diagnostics = check_tasks([make(**spec) for spec in specs], SETTINGS)
    assert [d.code for d in diagnostics] == [code]
    (diagnostic,) = diagnostics
    assert diagnostic.severity == severity
    assert message in diagnostic.message
    assert diagnostic.task_id == specs[0]["id"]


def test_clean_tasks_pass(make: TaskFactory) -> None:
    tasks = [
        make("1", status="completed", created_at="2024-01-02", completed_at="2024-01-03T10:00"),
        make("2", dependencies=["1", "0"], parent="1", phase="p1", touches=["api"]),
        make("0", archived=True),
    ]
    assert check_tasks(tasks, SETTINGS) == []


def test_unconfigured_phases_and_scopes_accept_anything(make: TaskFactory) -> None:
    assert check_tasks([make("1", phase="x", touches=["y"])], Config()) == []


def test_report_splits_errors_and_warnings() -> None:
    config = Diagnostic(severity="error", code="config.next.unphased", message="bad", file="c")
    warning = Diagnostic(severity="warning", code="task.unknown_phase", message="w", task_id="1")
    report = build_report([config], [warning])
    assert not report.valid
    assert report.to_json() == {
        "valid": False,
        "errors": [{"code": "config.next.unphased", "message": "bad", "file": "c"}],
        "warnings": [{"code": "task.unknown_phase", "message": "w", "task_id": "1"}],
    }
    assert build_report([warning]).valid
