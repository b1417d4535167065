"""A repository kept with Backlog.md, as Backlog.md's own ``backlog/`` folder is (checked
against MrLesk/Backlog.md at 6286bf97: 158 tasks listed, To Do 37 and Done 121, 455
completed and 45 archived), generated here with the same conventions: ``backlog/config.yml``
with ``task_prefix`` and ``statuses``, ``back-N - Title.md`` files whose ids are
``BACK-N``, subtasks ``BACK-3.1`` (one zero-padded), dependencies on the older prefix
(``task-2``), ``completed/``, ``archive/tasks/`` (one id taken again by a live task,
``Won't Do``, ``To do``), ``drafts/``, ``docs/``, ``decisions/``, ``milestones/``, readme
files, an unquoted ``assignee: @name``, and acceptance criteria between AC markers.
It is read, validated and written as Backlog.md would, no file converted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.tasktool.cli_run import as_json, run

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project

CONFIG = """project_name: "Demo"
default_status: "To Do"
statuses: ["To Do", "In Progress", "Done"]
labels: []
date_format: yyyy-mm-dd hh:mm
task_prefix: "back"
"""
AC = """
## Description

Make it work.

## Acceptance Criteria
<!-- AC:BEGIN -->
- [x] #1 It builds
- [ ] #2 It is tested
- [x] #3 It is documented
<!-- AC:END -->
"""


def task(task_id: str, title: str, status: str, *extra: str, body: str = "") -> str:
    lines = [
        "---",
        f"id: {task_id}",
        f"title: {title}",
        f"status: {status}",
        "assignee: []",
        "created_date: '2025-07-23 10:00'",
        "labels: []",
        "dependencies: []",
        *extra,
        "---",
    ]
    return "\n".join(lines) + "\n" + body


#: (folder, file stem, id, status, extra frontmatter lines)
FILES: list[tuple[str, str, str, str, tuple[str, ...]]] = [
    ("tasks", "back-1 - Setup", "BACK-1", "Done", ("priority: high",)),
    ("tasks", "back-2 - Core", "BACK-2", "To Do", ()),
    ("tasks", "back-3 - Board", "BACK-3", '"Done"', ()),
    ("tasks", "back-3.1 - Board-columns", "BACK-3.1", "To Do", ("parent_task_id: BACK-3",)),
    ("tasks", "back-4.01 - Padded", "BACK-4.01", "To Do", ("parent_task_id: back-4",)),
    ("tasks", "back-4 - Parent", "BACK-4", "To Do", ()),
    ("completed", "back-5 - Shipped", "BACK-5", "Done", ()),
    ("completed", "back-6 - Also-shipped", "BACK-6", "Done", ()),
    ("archive/tasks", "back-2 - Old-core", "BACK-2", "To Do", ()),
    ("archive/tasks", "back-9 - Dropped", "BACK-9", "Won't Do", ()),
    ("archive/tasks", "back-8 - Lower", "BACK-8", "To do", ()),
    ("drafts", "draft-1 - Idea", "DRAFT-1", "To Do", ("priority: high",)),
]


@pytest.fixture
def backlog(in_project: Project) -> Project:
    project = in_project
    project.write("backlog/config.yml", CONFIG)
    for folder, stem, task_id, status, extra in FILES:
        project.write(f"backlog/{folder}/{stem}.md", task(task_id, stem, status, *extra))
    project.write(
        "backlog/tasks/back-7 - Labelled.md",
        task(
            "BACK-7",
            "Labelled",
            "In Progress",
            "milestone: m-1",
            "priority: medium",
            body=AC,
        )
        .replace("labels: []", "labels:\n  - cli\n  - web")
        .replace("dependencies: []", "dependencies:\n  - task-2\n  - BACK-1")
        .replace("assignee: []", "assignee:\n  - '@alice'"),
    )
    project.write(
        "backlog/completed/back-10 - Lenient.md",
        task("BACK-10", "Lenient", "Done").replace("assignee: []", "assignee: @MrLesk"),
    )
    readme = "# Tasks\n\nExample:\n\n```markdown\n---\nid: task-1\ntitle: Example\n---\n```\n"
    project.write("backlog/tasks/readme.md", readme)
    project.write("backlog/archive/tasks/readme.md", readme)
    for name in ("docs/doc-1 - Guide.md", "decisions/decision-1 - Use-bun.md"):
        project.write(f"backlog/{name}", "---\nid: doc-1\ntitle: Guide\nstatus: To Do\n---\n")
    project.write("backlog/milestones/m-1 - First.md", "---\nid: m-1\ntitle: First\n---\n")
    return project


def snapshot(root: Path) -> dict[Path, bytes]:
    return {
        path: path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and ".tasktool" not in path.relative_to(root).parts
    }


def test_list_shows_what_backlog_md_lists(backlog: Project) -> None:
    before = snapshot(backlog.root)
    listed = run("list", "--format", "json")
    tasks = {task["id"]: task["status"] for task in json.loads(listed.stdout)}
    assert tasks == {
        "BACK-1": "completed",
        "BACK-2": "pending",
        "BACK-3": "completed",
        "BACK-3.1": "pending",
        "BACK-4": "pending",
        "BACK-4.01": "pending",  # as the file spells it, as Backlog.md lists it
        "BACK-7": "in-progress",
    }
    # Said once on stderr: the config read, and the file read leniently.
    assert listed.stderr.count("reading Backlog.md's config") == 1
    assert str(backlog.root / "backlog" / "config.yml") in listed.stderr
    assert listed.stderr.count("[task.lenient]") == 1
    assert "back-10 - Lenient.md" in listed.stderr
    listing = as_json("list", "--archived")
    archived = sorted(task["id"] for task in listing if task["archived"])
    # The archived BACK-2 is listed too: an id a live task took again.
    assert archived == ["BACK-10", "BACK-2", "BACK-5", "BACK-6", "BACK-8", "BACK-9"]
    assert len(listing) == len(tasks) + len(archived)
    every = {task["id"]: task for task in listing if task["archived"]}
    assert (every["BACK-9"]["status"], every["BACK-8"]["status"]) == ("cancelled", "pending")
    # Drafts are shown by get with a flag, never listed nor recommended; docs, decisions
    # and milestones are no tasks at all.
    draft = as_json("get", "draft-1")
    assert (draft["id"], draft["draft"], draft["priority"]) == ("DRAFT-1", True, "high")
    assert "draft:" in run("get", "DRAFT-1").stdout
    assert "draft" not in as_json("get", "BACK-2")
    assert "[task.not_found]" in run("get", "doc-1", code=1).stderr
    assert not any(key.startswith(("DRAFT", "doc", "m-")) for key in every)
    recommended = [item["id"] for item in as_json("next", "--limit", "0")]
    assert recommended == ["BACK-2", "BACK-3.1", "BACK-4.01"]  # BACK-4 waits on its subtask
    assert snapshot(backlog.root) == before  # nothing written, nothing converted


def test_fields_are_read_under_backlog_md_names(backlog: Project) -> None:
    got = as_json("get", "BACK-7")
    assert got["tags"] == ["cli", "web"]
    assert got["owner"] == "@alice"
    assert got["dependencies"] == ["BACK-2", "BACK-1"]  # task-2 is BACK-2
    assert (got["priority"], got["phase"], got["created_at"]) == (
        "medium",
        "m-1",
        "2025-07-23 10:00",
    )
    assert got["acceptance"] == {
        "done": 2,
        "total": 3,
        "items": [
            {"checked": True, "text": "It builds"},
            {"checked": False, "text": "It is tested"},
            {"checked": True, "text": "It is documented"},
        ],
    }
    table = run("get", "BACK-7").stdout
    assert "2/3 done" in table
    assert "[ ] It is tested" in table
    assert as_json("get", "BACK-4.1")["parent"] == "BACK-4"
    assert as_json("get", "back-4.001")["id"] == "BACK-4.01"
    assert as_json("get", "10")["owner"] == "@MrLesk"


@pytest.mark.parametrize("spelling", ["back-3.1", "BACK-3.1", "3.1", "task-3.1", "Back-03.1"])
def test_get_finds_a_task_by_any_spelling(backlog: Project, spelling: str) -> None:
    assert as_json("get", spelling)["id"] == "BACK-3.1"


def test_an_archived_copy_does_not_make_a_live_id_ambiguous(backlog: Project) -> None:
    got = as_json("get", "2")
    assert (got["id"], got["archived"]) == ("BACK-2", False)
    assert got["file_path"].endswith("tasks/back-2 - Core.md")
    report = as_json("validate")
    assert report["valid"] is True
    assert report["errors"] == []
    # Two live copies are a duplicate, as Backlog.md's doctor says.
    backlog.write("backlog/completed/back-1 - Again.md", task("BACK-1", "Again", "Done"))
    report = json.loads(run("validate", "--format", "json", code=1).stdout)
    assert [item["code"] for item in report["errors"]] == ["task.duplicate_id"]


def test_board_has_the_repository_columns_in_its_order(backlog: Project) -> None:
    board = as_json("board")
    assert [(c["name"], c["value"], c["count"]) for c in board["columns"]] == [
        ("To Do", "pending", 4),
        ("In Progress", "in-progress", 1),
        ("Done", "completed", 2),
    ]


def test_list_and_get_tables_name_statuses_as_the_repository_does(backlog: Project) -> None:
    """A Backlog.md user reads `In Progress` in tables, as Backlog.md and `board` show it;
    JSON keeps tasktool's status, whatever the repository calls it."""
    run("set", "back-2", "--status", "In Progress")
    lines = run("list", "--columns", "id,status").stdout.splitlines()
    rows = dict(line.rstrip().split(maxsplit=1) for line in lines[1:])
    assert (rows["BACK-1"], rows["BACK-2"], rows["BACK-3.1"]) == ("Done", "In Progress", "To Do")
    grouped = run("list", "--group-by", "status").stdout
    assert "status: In Progress\n" in grouped
    assert "status: in-progress" not in grouped
    table = run("get", "BACK-3").stdout
    fields = [line.split(maxsplit=1) for line in table.splitlines()]
    assert ["status:", "Done"] in fields
    assert ["child:", "BACK-3.1 [To Do] back-3.1 - Board-columns"] in fields
    assert "In Progress" in run("search", "Core").stdout
    assert as_json("get", "back-2")["status"] == "in-progress"
    assert as_json("search", "Core")[0]["status"] == "in-progress"
    assert {task["status"] for task in as_json("list")} <= {"pending", "in-progress", "completed"}


def test_add_writes_the_next_number_as_backlog_md_names_it(backlog: Project) -> None:
    added = as_json("add", "Fix the (big) bug!", "--tag", "cli", "--dep", "3.1")
    assert added["id"] == "BACK-11"  # after BACK-10 in completed/
    path = backlog.root / "backlog" / "tasks" / "back-11 - Fix-the-big-bug.md"
    assert added["file_path"] == str(path)
    text = path.read_text()
    assert text.startswith(
        "---\nid: BACK-11\ntitle: Fix the (big) bug!\nstatus: To Do\nassignee: []\ncreated_date: '"
    )
    assert "labels:\n  - cli\ndependencies:\n  - BACK-3.1\n---\n" in text
    assert as_json("get", "back-11")["status"] == "pending"
    backlog.write("backlog/archive/tasks/back-40 - Far.md", task("BACK-40", "Far", "Done"))
    assert as_json("add", "Next")["id"] == "BACK-41"  # archive/tasks counts too


def test_set_changes_only_the_status_line_and_updated_date(backlog: Project) -> None:
    path = backlog.root / "backlog" / "tasks" / "back-2 - Core.md"
    before = path.read_text().splitlines()
    run("set", "back-2", "--status", "In Progress")
    after = path.read_text().splitlines()
    changed = [(old, new) for old, new in zip(before, after, strict=False) if old != new]
    assert changed[0] == ("status: To Do", "status: In Progress")
    added = [line for line in after if line not in before]
    assert added[0] == "status: In Progress"
    assert len(added) == 2
    assert added[1].startswith("updated_date: ")
    assert len(after) == len(before) + 1
    run("set", "2", "--status", "done")
    assert "status: Done\n" in path.read_text()
    assert "completed_at" not in path.read_text()  # tasktool's stamp is not Backlog.md's
    refused = run("set", "2", "--status", "Shipped", code=1)
    assert "[task.invalid_status]" in refused.stderr
    assert "To Do, In Progress, Done" in refused.stderr


def test_a_file_that_does_not_parse_is_reported_and_never_written(backlog: Project) -> None:
    path = backlog.root / "backlog" / "tasks" / "back-12 - Broken.md"
    broken = "---\nid: BACK-12\ntitle: Broken\nstatus: [To Do\n---\n"
    path.write_text(broken)
    listed = run("list")
    assert f"{path}:" in listed.stderr
    assert "[task.yaml]" in listed.stderr
    refused = run("set", "back-12", "--status", "Done", code=1)
    assert "BACK-12" in refused.stderr
    assert path.read_text() == broken
