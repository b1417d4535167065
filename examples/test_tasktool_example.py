"""How a user tests their own automation around task files.

Installing tasktool gives pytest the ``tasktool_repo`` fixture: a task
repository built from a dict, written exactly as ``tasktool add`` would.
"""

from __future__ import annotations

import tasktool


def overdue_report(repo: tasktool.Repository) -> list[str]:
    """The user's code under test: titles of open high-priority tasks."""
    return [
        task.title for task in repo.tasks if task.priority == "high" and task.status != "completed"
    ]


def test_report_lists_open_high_priority_tasks(tasktool_repo):
    repo = tasktool_repo(
        tasks=[
            {"id": "001", "title": "Ship it", "priority": "high"},
            {"id": "002", "title": "Polish", "priority": "low"},
            {"id": "003", "title": "Done already", "priority": "high", "status": "completed"},
        ]
    )
    assert overdue_report(repo.load()) == ["Ship it"]


def test_next_respects_dependencies_and_writes_are_seen(tasktool_repo):
    repo = tasktool_repo(
        tasks=[
            {"id": "001", "title": "Design"},
            {"id": "002", "title": "Build", "dependencies": ["001"]},
        ]
    )
    assert [item.task.id for item in tasktool.rank(repo.load(), limit=5)] == ["001"]

    tasktool.update_task(repo.load(), "001", tasktool.TaskChange(set={"status": "completed"}))
    assert [item.task.id for item in tasktool.rank(repo.load(), limit=5)] == ["002"]
