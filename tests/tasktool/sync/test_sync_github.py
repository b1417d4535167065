"""``tasktool sync`` against a real local GitHub: create, re-run, update, conflicts."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest

from tasktool.sync.state import STATE_FILE
from tests.tasktool.sync.trackers import GITHUB_TOKEN, FakeGitHub, Workspace, github_entry


@pytest.fixture
def synced(workspace: Workspace, github: FakeGitHub) -> Workspace:
    """Five issues and a pull request, synced once (three pages of two)."""
    github.add(1, "Crash on start", labels=["bug", "P1"], assignee="alice")
    github.add(2, "Add dark mode", labels=["Good first issue", "p2"])
    github.add(3, "Document the API", labels=["docs"])
    github.add(4, "Pull request", pull_request={"url": "x"})
    github.add(5, "Old thing", state="closed")
    github.add(6, "Speed up list")
    workspace.configure(github_entry(github.url, filters="{state: all}"))
    result = workspace.sync()
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        "created 5, updated 0, unchanged 0, conflicts 0, errors 0"
    )
    return workspace


def test_first_sync_creates_tasks_with_mapped_fields(synced: Workspace, github: FakeGitHub) -> None:
    files = synced.task_files("github")
    assert sorted(files) == [
        "github/001-crash-on-start.md",
        "github/002-add-dark-mode.md",
        "github/003-document-the-api.md",
        "github/004-old-thing.md",
        "github/005-speed-up-list.md",
    ]  # the pull request (#4) is skipped; ids come from the sequential strategy
    first = files["github/001-crash-on-start.md"]
    assert "id: '001'" in first
    assert "title: Crash on start" in first
    assert "status: pending" in first
    assert "priority: critical" not in first  # labels are "P1": the map has "p1" only
    assert "tags: [bug, p1]" in first
    assert "owner: alice" in first
    assert "external_id: acme/widgets#1" in first
    assert "sync_source: github" in first
    assert first.endswith("---\nBody of Crash on start.\n")
    second = files["github/002-add-dark-mode.md"]
    assert "priority: high" in second
    assert "tags: [good-first-issue, p2]" in second
    closed = files["github/004-old-thing.md"]
    assert "status: completed" in closed
    assert "completed_at:" in closed
    # Three pages of two, each with the token and the state filter.
    pages = [parse_qs(seen.query).get("page", ["1"])[0] for seen in github.seen]
    assert pages == ["1", "2", "3"]
    assert all(seen.authorization == f"Bearer {GITHUB_TOKEN}" for seen in github.seen)
    assert "state=all" in github.seen[0].query
    state = json.loads((synced.tasks / ".tasktool" / STATE_FILE).read_text())
    assert sorted(state["sources"]["github"]) == [f"acme/widgets#{n}" for n in (1, 2, 3, 5, 6)]


def test_second_sync_changes_nothing(synced: Workspace) -> None:
    before = synced.snapshot()
    result = synced.sync()
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        "created 0, updated 0, unchanged 5, conflicts 0, errors 0"
    )
    after = synced.snapshot()
    assert {k: v for k, v in after.items() if "sync-state" not in k} == {
        k: v for k, v in before.items() if "sync-state" not in k
    }

