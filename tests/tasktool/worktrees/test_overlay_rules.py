"""The pure overlay rules, table-driven: effective status, provenance, claims, divergence."""

from __future__ import annotations

import pytest

from tasktool.model.task import Task
from tasktool.planning.worktrees.overlay import SiblingTasks, claimed_elsewhere, overlay


def _task(task_id: str, status: str, where: str = "here", **extra: object) -> Task:
    return Task(id=task_id, title="t", status=status, file_path=f"/{where}/{task_id}.md", **extra)  # type: ignore[arg-type]


def _sibling(name: str, *tasks: Task, archived: tuple[Task, ...] = ()) -> SiblingTasks:
    return SiblingTasks.of_tasks(f"/{name}", name, tasks, archived)


MTIMES = {"/b/1.md": 2.0, "/c/1.md": 1.0}


def _effective(local: str, b: str | None, c: str | None) -> Task:
    siblings = [
        _sibling(name, _task("1", status, name))
        for name, status in (("b", b), ("c", c))
        if status is not None
    ]
    result = overlay([_task("1", local)], [], siblings, mtime=lambda path: MTIMES[path])
    (task,) = result.tasks
    return task


@pytest.mark.parametrize(
    ("local", "b", "c", "status", "branch"),
    [
        ("pending", None, None, "pending", None),
        ("pending", "pending", "pending", "pending", None),  # a tie keeps this worktree's copy
        ("pending", "blocked", None, "blocked", "b"),
        ("blocked", "in-progress", "pending", "in-progress", "b"),
        ("in-progress", "in-review", "in-progress", "in-review", "b"),
        ("in-review", "cancelled", "pending", "cancelled", "b"),
        ("cancelled", "pending", "completed", "completed", "c"),
        ("completed", "cancelled", "in-review", "completed", None),
        ("pending", "in-progress", "in-progress", "in-progress", "b"),  # sibling tie: newest
        ("in-progress", "in-progress", "pending", "in-progress", None),
    ],
)
def test_effective_status_is_the_most_advanced_copy(
    local: str, b: str | None, c: str | None, status: str, branch: str | None
) -> None:
    task = _effective(local, b, c)
    assert task.status == status
    assert task.branch == branch
    assert task.worktree == (f"/{branch}" if branch else None)
    assert task.file_path == "/here/1.md"  # the local file stays the one written


def test_the_winner_brings_its_dates_and_nothing_else() -> None:
    local = _task("1", "pending", priority="low", completed_at=None)
    done = _task("1", "completed", "b", priority="high", completed_at="2025-01-02")
    (task,) = overlay([local], [], [_sibling("b", done)], mtime=lambda _: 0.0).tasks
    assert (task.status, task.completed_at, task.priority) == ("completed", "2025-01-02", "low")


def test_sibling_only_tasks_are_added_in_order_and_marked() -> None:
    result = overlay(
        [_task("1", "pending"), _task("10", "pending")],
        [],
        [
            _sibling(
                "b",
                _task("2", "pending", "b"),
                archived=(_task("3", "completed", "b", archived=True),),
            )
        ],
        mtime=lambda _: 0.0,
    )
    assert [task.id for task in result.tasks] == ["1", "2", "10"]
    assert [task.id for task in result.archived] == ["3"]
    two = result.tasks[1]
    assert (two.sibling_only, two.worktree, two.file_path) == (True, "/b", "/b/2.md")


@pytest.mark.parametrize(
    ("task", "claimed"),
    [
        (_task("1", "in-progress"), False),  # this worktree's own claim
        (Task(id="1", title="t", status="in-progress", worktree="/b"), True),
        (Task(id="1", title="t", status="in-review", worktree="/b"), True),
        (Task(id="1", title="t", status="blocked", worktree="/b"), False),
        (Task(id="1", title="t", status="pending", worktree="/b", sibling_only=True), True),
    ],
)
def test_claimed_elsewhere(task: Task, claimed: bool) -> None:
    assert claimed_elsewhere(task) is claimed


@pytest.mark.parametrize(
    ("local", "b", "c", "divergent"),
    [
        ("completed", "cancelled", None, True),
        ("pending", "completed", "cancelled", True),
        ("completed", "completed", "pending", False),
        ("cancelled", "in-review", None, False),
    ],
)
def test_divergent_terminal_states(local: str, b: str, c: str | None, divergent: bool) -> None:
    siblings = [_sibling("b", _task("1", b, "b"))]
    if c is not None:
        siblings.append(_sibling("c", _task("1", c, "c")))
    result = overlay([_task("1", local)], [], siblings, mtime=lambda path: MTIMES.get(path, 0))
    assert [d.code for d in result.divergent] == (["worktree.divergent"] if divergent else [])
    if divergent:
        assert "completed" in result.divergent[0].message
        assert "cancelled" in result.divergent[0].message


def test_every_local_copy_of_an_id_keeps_its_own_fields() -> None:
    active = _task("1", "pending", raw_body="active body")
    archived = _task("1", "pending", "here/archive", archived=True, raw_body="archived body")
    result = overlay(
        [active], [archived], [_sibling("b", _task("1", "completed", "b"))], mtime=lambda _: 0.0
    )
    (shown,) = result.tasks
    (kept,) = result.archived
    assert (shown.status, shown.archived, shown.raw_body) == ("completed", False, "active body")
    assert (kept.status, kept.archived, kept.raw_body) == ("completed", True, "archived body")
    assert kept.file_path == "/here/archive/1.md"
