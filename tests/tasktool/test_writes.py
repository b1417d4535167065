"""Writes: set bookkeeping and checks, create, remove, archive (on real files)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tasktool.config import Overrides
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task
from tasktool.planning.repository import Repository, load_context
from tasktool.planning.writing import changes, writes
from tasktool.planning.writing.changes import TaskChange
from tasktool.planning.writing.writes import (
    NewTask,
    archive_task,
    create_task,
    create_tasks,
    remove_task,
    today,
    update_task,
)

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project, TaskWriter


def repo(project: Project) -> Repository:
    return load_context(Overrides(), cwd=project.root, env=project.env, home=project.home)


def test_completing_stamps_and_reopening_clears(project: Project, write_task: TaskWriter) -> None:
    path = write_task("1", extra="keep me", cancelled_at="2020-01-01", status="cancelled")
    done = update_task(repo(project), "1", TaskChange(set={"status": "completed"}))
    assert (done.completed_at, done.cancelled_at) == (today(), None)
    assert "extra: keep me" in path.read_text()
    reopened = update_task(repo(project), "1", TaskChange(set={"status": "pending"}))
    assert (reopened.completed_at, reopened.cancelled_at) == (None, None)


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (TaskChange(set={"status": "finished"}), "task.invalid_status"),
        (TaskChange(set={"priority": "urgent"}), "task.invalid_priority"),
        (TaskChange(set={"effort": "huge"}), "task.invalid_effort"),
        (TaskChange(set={"type": "epic"}), "task.invalid_type"),
        (TaskChange(set={"title": ""}), "task.invalid_title"),
        (TaskChange(set={"created_at": "yesterday"}), "task.invalid_date"),
        (TaskChange(add={"dependencies": ("99",)}), "task.unknown_reference"),
        (TaskChange(add={"dependencies": ("1",)}), "task.self_reference"),
        (TaskChange(set={"parent": "1"}), "task.self_reference"),
        (TaskChange(set={"colour": "red"}), "task.unknown_field"),
        # control characters are refused in every field, as in ids
        (TaskChange(set={"title": "x\x1b[2Jy"}), "task.invalid_text"),
        (TaskChange(set={"owner": "\x00\x1b[31m"}), "task.invalid_text"),
        (TaskChange(set={"phase": "a\nb"}), "task.invalid_text"),
        (TaskChange(add={"tags": ("ok", "b\x07")}), "task.invalid_text"),
        (TaskChange(replace={"touches": ("\x9b",)}), "task.invalid_text"),
    ],
)
def test_invalid_changes_are_refused(
    project: Project, write_task: TaskWriter, change: TaskChange, code: str
) -> None:
    path = write_task("1")
    before = path.read_text()
    with pytest.raises(TaskToolError) as info:
        update_task(repo(project), "1", change)
    assert info.value.code == code
    assert path.read_text() == before


def test_configured_effort_vocabulary(project: Project, write_task: TaskWriter) -> None:
    project.config("effort: [xs, xl]\n")
    write_task("1")
    assert update_task(repo(project), "1", TaskChange(set={"effort": "xl"})).effort == "xl"
    with pytest.raises(TaskToolError, match="xs, xl"):
        update_task(repo(project), "1", TaskChange(set={"effort": "small"}))


def test_list_edits(project: Project, write_task: TaskWriter) -> None:
    write_task("1", tags=["a", "b"])
    write_task("2")
    task = update_task(
        repo(project),
        "1",
        TaskChange(add={"tags": ("c", "a"), "dependencies": ("2",)}, remove={"tags": ("b",)}),
    )
    assert task.tags == ("a", "c")
    assert task.dependencies == ("2",)


@pytest.mark.parametrize(
    ("fields", "dates"),
    [
        ({"status": "pending"}, ("today", None, None)),
        ({"status": "completed"}, ("today", "today", None)),
        ({"status": "cancelled"}, ("today", None, "today")),
        (
            {"status": "completed", "created_at": "2020-01-01", "completed_at": "2020-01-05"},
            ("2020-01-01", "2020-01-05", None),
        ),
    ],
)
def test_create_applies_the_status_bookkeeping_of_set(
    project: Project, fields: dict[str, str], dates: tuple[str | None, ...]
) -> None:
    created = create_task(repo(project), {"title": "T", **fields})
    expected = tuple(today() if value == "today" else value for value in dates)
    assert (created.created_at, created.completed_at, created.cancelled_at) == expected


def test_create_many_under_one_lock(project: Project, write_task: TaskWriter) -> None:
    write_task("009")
    results = create_tasks(
        repo(project),
        [
            NewTask(fields={"title": "A", "tags": ["x"]}, body="Body A\n", group="imported"),
            NewTask(fields={"title": "B", "status": "finished"}),  # refused; takes no id
            NewTask(fields={"title": "C", "status": "completed"}),
            NewTask(fields={"title": "D", "status": "in_progress"}),  # written in-progress
        ],
    )
    first, refused, third, named = results
    assert isinstance(first, Task)
    assert (first.id, first.tags, first.raw_body) == ("010", ("x",), "Body A\n")
    assert first.file_path == str(project.root / "imported" / "010-a.md")
    assert isinstance(refused, TaskToolError)
    assert refused.code == "task.invalid_status"
    assert isinstance(third, Task)
    assert (third.id, third.completed_at) == ("011", today())
    assert isinstance(named, Task)
    assert named.status == "in-progress"
    assert "status: in-progress\n" in Path(named.file_path).read_text()
    assert sorted(repo(project).ids) == ["009", "010", "011", "012"]


def test_create_uses_the_strategy_and_checks(project: Project, write_task: TaskWriter) -> None:
    write_task("009")
    created = create_task(repo(project), {"title": "New one", "dependencies": ["009"]}, group="api")
    assert created.id == "010"
    assert created.file_path == str(project.root / "api" / "010-new-one.md")
    assert created.created_at == today()
    with pytest.raises(TaskToolError) as info:
        create_task(repo(project), {"title": "x", "effort": "huge"})
    assert info.value.code == "task.invalid_effort"
    with pytest.raises(TaskToolError):
        create_task(repo(project), {"title": "x"}, task_id="009")
    for bad in ("../escape", ".hidden", "a/b", ""):
        with pytest.raises(TaskToolError) as info:
            create_task(repo(project), {"title": "x"}, task_id=bad)
        assert info.value.code == "task.invalid_id"


def test_remove_refuses_while_referenced(project: Project, write_task: TaskWriter) -> None:
    target = write_task("1")
    write_task("2", dependencies=["1"])
    log = project.write(".worklogs/1.md", "## 2025-01-01T00:00:00Z\nwork\n")
    with pytest.raises(TaskToolError) as info:
        remove_task(repo(project), "1")
    assert info.value.code == "task.referenced"
    assert target.exists()
    assert remove_task(repo(project), "1", force=True) == [target, log]
    assert not log.exists()


def test_remove_counts_children_and_archived_references(
    project: Project, write_task: TaskWriter
) -> None:
    write_task("1")
    write_task("2", parent="1")
    write_task("3", where="archive", status="completed", dependencies=["1"])
    with pytest.raises(TaskToolError) as info:
        remove_task(repo(project), "1")
    assert info.value.message == "task 1 is referenced by 2, 3; use --force to remove it"


def test_archive_moves_under_archive(project: Project, write_task: TaskWriter) -> None:
    write_task("1", where="api", status="completed")
    moved = archive_task(repo(project), "1")
    assert moved == project.root / "archive" / "api" / "1-task.md"
    loaded = repo(project)
    assert loaded.tasks == ()
    assert loaded.get("1").archived


def test_unsafe_ids_never_reach_outside(project: Project) -> None:
    project.write("t.md", "---\nid: ../../outside\ntitle: Odd\n---\n")
    bystander = project.root.parent / "outside.md"
    bystander.write_text("keep")
    loaded = repo(project)
    assert remove_task(loaded, "../../outside") == [project.root / "t.md"]
    assert bystander.read_text() == "keep"
    with pytest.raises(TaskToolError):
        loaded.worklog_path("../../outside")


def test_a_save_during_set_is_not_overwritten(
    project: Project, write_task: TaskWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_task("1")
    saved = path.read_text().replace("---\n", "---\nnote: saved by an editor\n", 1)
    plan = changes.plan_update

    def editor_saves_meanwhile(*args: Any, **kwargs: Any) -> Any:
        path.write_text(saved)  # an editor ignores our lock
        return plan(*args, **kwargs)

    monkeypatch.setattr(writes, "plan_update", editor_saves_meanwhile)
    with pytest.raises(TaskToolError) as raised:
        update_task(repo(project), "1", TaskChange(set={"status": "completed"}))
    assert raised.value.code == "task.conflict"
    assert path.read_text() == saved


def test_create_never_replaces_a_file(project: Project, write_task: TaskWriter) -> None:
    write_task("1")
    occupied = project.write("002-second.md", "notes, not a task\n")
    with pytest.raises(TaskToolError) as raised:
        create_task(repo(project), {"title": "Second"})
    assert raised.value.code == "task.exists"
    assert occupied.read_text() == "notes, not a task\n"
    assert not [p.name for p in occupied.parent.iterdir() if p.name.endswith(".tmp")]


def test_create_refuses_a_group_the_scan_would_not_see(
    project: Project, write_task: TaskWriter
) -> None:
    project.config("ignore: [generated]\n")
    write_task("001")
    outside = project.root.parent / "outside"
    for bad in ("../outside", str(outside), ".hidden", "node_modules", "api/generated", "a//b"):
        with pytest.raises(TaskToolError) as info:
            create_task(repo(project), {"title": "Lost"}, group=bad)
        assert info.value.code == "task.invalid_group"
    assert not outside.exists()
    assert sorted(path.name for path in project.root.rglob("*.md")) == ["001-task.md"]
    created = create_task(repo(project), {"title": "Kept"}, group="api/v2/")
    assert created.file_path == str(project.root / "api" / "v2" / "002-kept.md")
    assert [task.id for task in repo(project).tasks] == ["001", "002"]


def test_commands_refuse_an_id_held_by_two_files(project: Project, write_task: TaskWriter) -> None:
    """get, set, rm, archive and worklog name both files and suggest deduplicate instead of
    acting on one copy (rm used to delete one silently)."""
    first = write_task("5", status="completed")
    second = write_task("5", where="other", status="completed")
    loaded = repo(project)
    calls: list[Callable[[], object]] = [
        lambda: loaded.get("5"),
        lambda: update_task(loaded, "5", TaskChange(set={"owner": "x"})),
        lambda: remove_task(loaded, "5"),
        lambda: archive_task(loaded, "5"),
    ]
    for call in calls:
        with pytest.raises(TaskToolError) as info:
            call()
        assert info.value.code == "task.ambiguous_id"
        assert str(first) in info.value.message
        assert str(second) in info.value.message
        assert "deduplicate" in info.value.message
    assert first.exists()
    assert second.exists()
    assert "owner" not in first.read_text() + second.read_text()
