"""Whole runs in one process: concurrent runs are serialized and never duplicate an item."""

from __future__ import annotations

import threading

from tasktool.config import Overrides
from tasktool.planning.repository import load_context
from tasktool.sync import SyncReport, configured_sources, run_sync
from tests.tasktool.sync.trackers import FakeGitHub, Workspace, github_entry


def test_concurrent_runs_import_each_item_once(workspace: Workspace, github: FakeGitHub) -> None:
    for number in range(1, 13):
        github.add(number, f"Issue {number}")
    workspace.configure(github_entry(github.url))
    reports: list[SyncReport] = []
    failures: list[BaseException] = []

    def one_run() -> None:
        try:
            # Each run loads the repository before the other has written anything.
            repo = load_context(
                Overrides(config=str(workspace.root / ".tasktool.yaml")),
                cwd=workspace.root,
                env=workspace.env,
            )
            reports.append(run_sync(repo, configured_sources(repo), env=workspace.env))
        except BaseException as exc:
            failures.append(exc)

    runs = [threading.Thread(target=one_run) for _ in range(3)]
    for run in runs:
        run.start()
    for run in runs:
        run.join(timeout=60)
    assert failures == []
    assert len(reports) == 3
    assert sum(report.totals()["created"] for report in reports) == 12
    notes = [o.note for report in reports for s in report.sources for o in s.outcomes]
    assert notes == [None] * 36  # nobody mistook the others' new tasks for deleted ones
    files = workspace.task_files("github")
    assert len(files) == 12
    ids = sorted(text.split("external_id: ", 1)[1].split("\n", 1)[0] for text in files.values())
    assert ids == sorted(f"acme/widgets#{n}" for n in range(1, 13))


def test_sync_creates_a_fresh_clone_s_task_folder(workspace: Workspace, github: FakeGitHub) -> None:
    """``dir: tasks`` with no ``tasks/`` (git keeps no empty folder): sync makes it."""
    workspace.tasks.rmdir()
    github.add(1, "Issue 1")
    workspace.configure(github_entry(github.url))
    done = workspace.sync()
    assert done.exit_code == 0, done.output
    assert list(workspace.task_files("github")) == ["github/001-issue-1.md"]
