"""A repository kept with taskmd, as taskmd's own repository is (checked against
louisthetall/taskmd at b2f7c29aba7716fdd2b8d24efea0eabb844a0ca4: 51 worklogs, one
committed rename conflict), generated here with the same conventions: ``.taskmd.yaml``
and no ``.tasktool.yaml``, ``id: "…"`` and ``created:`` keys, ulid and numeric ids, group
folders with ``.worklogs/``, tasks archived to ``archive/<group>/`` and ``<group>/archive/``
whose worklogs stayed behind, a worklog beside another group's tasks, date-only headings,
task-like templates outside the task folder and a conflict with 8-character markers.
It reads with every worklog found and validates with that one error, and no file is
added to the repository but the ignored ``.tasktool/`` cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result

from tasktool.cli.main import main as cli

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project

TASKMD_YAML = """dir: ./tasks
id:
  strategy: ulid
  length: 9
todos:
  exclude:
    - "parser_test.go"
phases:
  - id: web-ui
    name: "Web UI"
    description: "Enhance the web interface"
web:
  auto_open_browser: false
scopes:
  cli:
    paths:
      - "apps/cli/"
  cli/mcp:
    paths:
      - "apps/cli/internal/mcp/"
"""
#: (file under tasks/, id, status, worklog under tasks/ or None, heading)
LAYOUT = [
    ("108-root.md", "108", "completed", ".worklogs/108.md", "2026-02-14T10:00:00Z"),
    ("164-vscode.md", "164", "completed", ".worklogs/164.md", "2026-02-25"),
    (
        "01kjmk5q3-scope.md",
        "01kjmk5q3",
        "pending",
        ".worklogs/01kjmk5q3.md",
        "2026-03-01T08:00:00Z",
    ),
    ("cli/150-cli.md", "150", "in-progress", "cli/.worklogs/150.md", "2026-02-20T09:00:00Z"),
    ("cli/207-rm.md", "207", "completed", "web/.worklogs/207.md", "2026-02-26T12:00:00Z"),
    ("archive/cli/112-mcp.md", "112", "completed", "cli/.worklogs/112.md", "2026-02-15T12:00:00Z"),
    ("archive/web/119-tags.md", "119", "completed", "web/.worklogs/119.md", "2026-02-16T12:00:00Z"),
    ("cli/archive/017-scanner.md", "017", "completed", "cli/.worklogs/017.md", "2026-01-10"),
    ("web/130-web.md", "130", "pending", "web/.worklogs/130.md", "2026-02-18T10:00:00Z"),
    ("archive/001-spec.md", "001", "completed", None, ""),
    ("web/131-more.md", "131", "pending", None, ""),
]
CONFLICT = """---
<<<<<<<< HEAD:tasks/cli/197-verbose-log.md
id: "197"
========
id: "198"
>>>>>>>> 61fbfc5 (chore: added task 195):tasks/cli/198-verbose-log.md
title: "Log debug message when directories are skipped"
status: pending
created: 2026-02-27
---
"""

# As taskmd's own archive-025: archived, depending on ids its history no longer holds.
ARCHIVED_WITH_GAPS = """---
id: "archive-025"
title: "CLI polish"
status: pending
dependencies: ["archive-021"]
created: 2026-02-08
---
"""


def task(task_id: str, status: str, number: int) -> str:
    created = f'"2026-02-{number:02d}"' if number % 3 == 0 else f"2026-02-{number:02d}"
    return (
        f'---\ntitle: "Task {task_id}"\nid: "{task_id}"\nstatus: {status}\n'
        f"priority: medium\ntags:\n  - cli\ntouches:\n  - cli\ncreated: {created}\n---\n\n"
        f"# Task {task_id}\n"
    )


@pytest.fixture
def taskmd(in_project: Project) -> Project:
    project = in_project
    project.write(".taskmd.yaml", TASKMD_YAML)
    project.write("README.md", "# taskmd\n")
    for name in ("task_bug.md", "task_chore.md"):  # templates, outside the task folder
        project.write(f"apps/cli/templates/{name}", "---\nid: {{id}}\ntitle: {{title}}\n---\n")
    for number, (file, task_id, status, log, heading) in enumerate(LAYOUT, start=1):
        project.write(f"tasks/{file}", task(task_id, status, number))
        if log is not None:
            project.write(
                f"tasks/{log}", f"# Worklog: {task_id}\n\n## {heading}\n\nDid {task_id}.\n"
            )
    project.write("tasks/cli/198-verbose-log.md", CONFLICT)
    project.write("tasks/cli/archive/025-polish.md", ARCHIVED_WITH_GAPS)
    return project


def run(*args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def files(root: Path) -> set[Path]:
    return {path for path in root.rglob("*") if ".tasktool" not in path.relative_to(root).parts}


def test_the_taskmd_repository_reads_and_validates_as_it_is(taskmd: Project) -> None:
    before = files(taskmd.root)
    for file, task_id, _status, log, heading in LAYOUT:
        detail = json.loads(run("get", task_id, "--format", "json").stdout)
        assert detail["file_path"] == str(taskmd.root / "tasks" / file)
        if log is None:
            assert detail["worklog"] is None
            continue
        assert detail["worklog"] == {
            "path": str(taskmd.root / "tasks" / log),
            "entries": 1,
            "last": heading,
        }, task_id
        entries = json.loads(run("worklog", task_id, "--format", "json").stdout)["entries"]
        assert [entry["content"] for entry in entries] == [f"Did {task_id}."]
    report = run("validate", "--format", "json", code=1)
    errors = json.loads(report.stdout)["errors"]
    assert len(errors) == 1, errors
    assert "198-verbose-log.md" in errors[0]["message"]
    assert errors[0]["code"] == "task.merge_conflict"
    warnings = json.loads(report.stdout)["warnings"]
    assert [(w["code"], w["task_id"]) for w in warnings] == [
        ("task.missing_dependency", "archive-025")
    ]
    listed = json.loads(run("list", "--archived", "--format", "json").stdout)
    assert len(listed) == len(LAYOUT) + 1  # and archive-025
    assert files(taskmd.root) == before  # nothing copied, nothing written but the cache
