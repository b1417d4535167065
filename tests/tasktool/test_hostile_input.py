"""What an attacker's input does to the core and the CLI: links out of the task directory,
oversized fields, temporary files a killed writer leaves, control characters on a terminal."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tasktool.config import Overrides
from tasktool.files.storage import STALE_TEMP_S
from tasktool.model.errors import TaskToolError
from tasktool.model.limits import BODY_MAX, LIST_MAX, TITLE_MAX, VALUE_MAX
from tasktool.planning.repository import Repository, load_context
from tasktool.planning.writing.changes import TaskChange
from tasktool.planning.writing.writes import create_task, update_task
from tests.tasktool import test_cli
from tests.tasktool.conftest import Project, TaskWriter
from tests.tasktool.test_cli import Invoke
from tests.tasktool.test_terminal import environment, on_terminal

tasktool = test_cli.tasktool  # the in-process CLI fixture


def repo(project: Project) -> Repository:
    return load_context(Overrides(), cwd=project.root, env=project.env, home=project.home)


def test_a_group_linked_out_of_the_task_directory_is_refused(
    project: Project, write_task: TaskWriter, tmp_path: Path
) -> None:
    write_task("001")
    outside = tmp_path / "outside"
    outside.mkdir()
    (project.root / "lnk").symlink_to(outside)
    (project.root / "hid").symlink_to(project.root / ".hidden")
    for group in ("lnk", "lnk/sub", "hid"):
        with pytest.raises(TaskToolError) as info:
            create_task(repo(project), {"title": "Escaped"}, group=group)
        assert info.value.code == "task.invalid_group"
    assert list(outside.rglob("*")) == []
    # The id was not handed out: the next task takes 002, once.
    (project.root / "inner").mkdir()
    (project.root / "alias").symlink_to(project.root / "inner")
    created = create_task(repo(project), {"title": "Inside"}, group="alias")
    assert created.id == "002"
    assert created.file_path == str(project.root / "inner" / "002-inside.md")
    assert [task.id for task in repo(project).tasks] == ["001", "002"]


def test_cli_add_into_a_linked_group_is_refused(
    tasktool: Invoke, project: Project, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project.root / "tasks" / "lnk").symlink_to(outside)
    failed = tasktool("add", "Out", "--group", "lnk", code=1)
    assert failed.stderr.endswith("[task.invalid_group]\n")
    assert list(outside.iterdir()) == []
    first = json.loads(tasktool("add", "In", "--format", "json").stdout)
    assert first["id"] == "001"


@pytest.mark.parametrize(
    ("fields", "body"),
    [
        ({"title": "x" * (TITLE_MAX + 1)}, ""),
        ({"title": "ok", "owner": "o" * (VALUE_MAX + 1)}, ""),
        ({"title": "ok", "tags": [f"t{i}" for i in range(LIST_MAX + 1)]}, ""),
        ({"title": "ok", "tags": ["t" * (VALUE_MAX + 1)]}, ""),
        ({"title": "ok"}, "b" * (BODY_MAX + 1)),
        ({"title": "ok"}, "é" * (BODY_MAX // 2 + 1)),  # 2 bytes each in UTF-8
    ],
)
def test_oversized_new_tasks_are_refused(
    project: Project, fields: dict[str, object], body: str
) -> None:
    with pytest.raises(TaskToolError) as info:
        create_task(repo(project), dict(fields), body=body)
    assert info.value.code == "task.too_large"
    assert list(project.root.glob("*.md")) == []


def test_limits_are_inclusive_and_edits_are_bounded(
    project: Project, write_task: TaskWriter
) -> None:
    created = create_task(repo(project), {"title": "t" * TITLE_MAX}, body="b" * BODY_MAX)
    path = Path(created.file_path)
    before = path.read_bytes()
    for change in (
        TaskChange(set={"title": "t" * (TITLE_MAX + 1)}),
        TaskChange(body="b" * (BODY_MAX + 1)),
        TaskChange(add={"tags": ("x" * (VALUE_MAX + 1),)}),
    ):
        with pytest.raises(TaskToolError) as info:
            update_task(repo(project), created.id, change)
        assert info.value.code == "task.too_large"
    assert path.read_bytes() == before


def test_cli_refuses_an_oversized_title_and_body(tasktool: Invoke, project: Project) -> None:
    assert tasktool("add", "t" * (TITLE_MAX + 1), code=1).stderr.endswith("[task.too_large]\n")
    tasktool("add", "Fine")
    big = "b" * (BODY_MAX + 1)
    assert tasktool("set", "001", "--body", big, code=1).stderr.endswith("[task.too_large]\n")
    assert "bbbb" not in (project.root / "tasks" / "001-fine.md").read_text()


def _leftover(folder: Path, name: str, age: float, rand: str = "abc12_yz") -> Path:
    path = folder / f".{name}.{rand}.tmp"
    path.write_text("half a task")
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def test_stale_temp_files_are_reported_then_removed_by_the_next_write(
    tasktool: Invoke, project: Project
) -> None:
    tasks = project.root / "tasks"
    tasktool("add", "One")
    tasktool("add", "Two", "--group", "api")
    stale = _leftover(tasks, "001-one.md", STALE_TEMP_S + 60)
    stale_api = _leftover(tasks / "api", "002-two.md", STALE_TEMP_S + 60)
    fresh = _leftover(tasks, "001-one.md", 5, "fresh_01")  # a writer still at work: never touched
    other = _leftover(tasks, "notes.txt", STALE_TEMP_S + 60)  # not a task file's
    report = json.loads(tasktool("validate", "--format", "json").stdout)
    found = [w["file"] for w in report["warnings"] if w["code"] == "task.stale_temp"]
    assert found == [str(stale), str(stale_api)]
    tasktool("validate", "--strict", code=2)
    tasktool("set", "001", "--owner", "ann")
    assert not stale.exists()
    assert stale_api.exists()  # another folder: its own next write
    assert fresh.exists()
    assert other.exists()
    tasktool("add", "Three", "--group", "api")
    assert not stale_api.exists()
    report = json.loads(tasktool("validate", "--format", "json").stdout)
    assert not [w for w in report["warnings"] if w["code"] == "task.stale_temp"]


def test_get_and_list_escape_control_characters_on_a_terminal(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".tasktool.yaml").write_text("dir: tasks\n")
    (root / "tasks").mkdir()
    (root / "tasks" / "001-\x1b[2Jx.md").write_text(
        '---\nid: "001"\ntitle: "Evil\\e]0;pwned\\a title"\nowner: "\\0\\e[31m"\n'
        'tags: ["a\\u202eb"]\n---\nBody \\x1b[2J and \x1b[31mred\n',
        encoding="utf-8",
    )
    env = environment(tmp_path, NO_COLOR="1")
    for args in (["get", "001"], ["list"], ["board"], ["list", "--group-by", "owner"]):
        shown = on_terminal(args, root, env, columns=200)
        assert not {"\x1b", "\x00", "\u202e"} & set(shown), args
        assert "\\x1b" in shown, (args, shown)
    detail = on_terminal(["get", "001"], root, env, columns=200)
    assert "owner:" in detail
    assert "\\x00\\x1b[31m" in detail
    assert "Evil\\x1b]0;pwned\\x07 title" in detail
    assert "Body \\x1b[2J and \\x1b[31mred" in detail
    # JSON is data, escaped by JSON itself; piped text is left as it is.
    raw = on_terminal(["get", "001", "--format", "json"], root, env)
    assert "\x1b" not in raw
    assert "\\u001b" in raw


def test_warnings_and_messages_escape_control_characters_on_a_terminal(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".tasktool.yaml").write_text("dir: tasks\n")
    (root / "tasks").mkdir()
    (root / "tasks" / "\x1b[31mbroken.md").write_text("---\nid: '7'\ntitle: [unclosed\n---\n")
    (root / "tasks" / "001-\x1b[2Jx.md").write_text(
        '---\nid: "001"\ntitle: "Done\\e[2J"\nstatus: completed\n---\n'
    )
    env = environment(tmp_path, NO_COLOR="1")
    listed = on_terminal(["list"], root, env, columns=200)
    assert "warning:" in listed
    assert "\\x1b[31mbroken.md" in listed
    planned = on_terminal(["archive", "--all", "--dry-run"], root, env, columns=200)
    assert "would archive 001" in planned
    assert "001-\\x1b[2Jx.md" in planned
    for shown in (listed, planned):
        assert "\x1b" not in shown
