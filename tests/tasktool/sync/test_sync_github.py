"""``tasktool sync`` against a real local GitHub: create, re-run, update, conflicts."""

from __future__ import annotations

import json
import os
import re
import time
from urllib.parse import parse_qs

import pytest

from tasktool.files.caches.cache import ParseCache
from tasktool.files.scanning.scan import scan_tasks
from tasktool.model.task import KEPT
from tasktool.sync import engine
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


def _edit(workspace: Workspace, relative: str, old: str, new: str) -> None:
    path = workspace.tasks / relative
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


TASK_1 = "github/001-crash-on-start.md"


def test_remote_change_updates_in_place(synced: Workspace, github: FakeGitHub) -> None:
    others = {k: v for k, v in synced.task_files().items() if k != TASK_1}
    github.issues[1]["title"] = "Crash on start (macOS)"
    github.issues[1]["state"] = "closed"
    github.issues[1]["body"] = "Now with steps."
    result = synced.sync()
    assert result.output.splitlines()[-1] == (
        "created 0, updated 1, unchanged 4, conflicts 0, errors 0"
    )
    text = (synced.tasks / TASK_1).read_text()
    assert "title: Crash on start (macOS)" in text
    assert "status: completed" in text
    assert "completed_at:" in text  # the core's bookkeeping, as set does it
    assert text.endswith("---\nNow with steps.\n")
    assert "id: '001'" in text  # same task, same file name
    assert {k: v for k, v in synced.task_files().items() if k != TASK_1} == others
    again = synced.sync()
    assert again.output.splitlines()[-1].startswith("created 0, updated 0, unchanged 5")


def _local_edit_and_remote_change(synced: Workspace, github: FakeGitHub) -> None:
    _edit(synced, TASK_1, "status: pending", "status: in-progress  # mine now\nrisk: high")
    github.issues[1]["title"] = "Crash on start, again"


def test_conflict_skip_reports_and_keeps_the_file(synced: Workspace, github: FakeGitHub) -> None:
    _local_edit_and_remote_change(synced, github)
    before = (synced.tasks / TASK_1).read_bytes()
    for _ in range(2):  # reported again: nothing was resolved
        result = synced.sync()
        assert result.exit_code == 0, result.output
        assert "conflict acme/widgets#1 (task 001): edited locally and remotely" in result.output
        assert result.output.splitlines()[-1].endswith("conflicts 1, errors 0")
        assert (synced.tasks / TASK_1).read_bytes() == before


def test_conflict_local_keeps_the_file_once(synced: Workspace, github: FakeGitHub) -> None:
    _local_edit_and_remote_change(synced, github)
    before = (synced.tasks / TASK_1).read_bytes()
    result = synced.sync("--conflict", "local")
    assert "local version kept" in result.output
    assert result.output.splitlines()[-1].endswith("conflicts 1, errors 0")
    assert (synced.tasks / TASK_1).read_bytes() == before
    calm = synced.sync()  # the remote version was seen: no conflict until it changes again
    assert calm.output.splitlines()[-1] == (
        "created 0, updated 0, unchanged 5, conflicts 0, errors 0"
    )
    github.issues[1]["body"] = "Yet another change."
    later = synced.sync()  # the file still counts as edited locally
    assert later.output.splitlines()[-1].endswith("conflicts 1, errors 0")
    assert (synced.tasks / TASK_1).read_bytes() == before


def test_conflict_remote_overwrites_owned_fields_only(
    synced: Workspace, github: FakeGitHub
) -> None:
    _local_edit_and_remote_change(synced, github)
    result = synced.sync("--conflict", "remote")
    assert "overwritten by remote" in result.output
    text = (synced.tasks / TASK_1).read_text()
    assert "title: Crash on start, again" in text
    assert re.search(r"status: pending +# mine now", text)  # owned; the comment survives
    assert "risk: high" in text  # a key sync does not own is kept
    assert synced.sync().output.splitlines()[-1].startswith("created 0, updated 0, unchanged 5")


def test_dry_run_writes_nothing(workspace: Workspace, github: FakeGitHub) -> None:
    github.add(1, "One")
    github.add(2, "Two")
    workspace.configure(github_entry(github.url))
    before = workspace.snapshot()
    result = workspace.sync("--dry-run")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        "dry run (nothing written): created 2, updated 0, unchanged 0, conflicts 0, errors 0"
    )
    # Only the config reader's cache beside the config file (every command keeps it) appears.
    after = {k: v for k, v in workspace.snapshot().items() if not k.startswith(".tasktool/")}
    assert after == before


def test_dry_run_of_a_remote_change(synced: Workspace, github: FakeGitHub) -> None:
    github.issues[2]["title"] = "Add a dark theme"
    before = synced.snapshot()
    result = synced.sync("--dry-run")
    assert result.output.splitlines()[-1].endswith("updated 1, unchanged 4, conflicts 0, errors 0")
    assert synced.snapshot() == before


def test_json_report(synced: Workspace, github: FakeGitHub) -> None:
    github.issues[3]["state"] = "reopened"  # not in field_map.status
    del github.issues[6]
    result = synced.sync("--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["totals"] == {
        "created": 0,
        "updated": 1,
        "unchanged": 3,
        "conflicts": 0,
        "errors": 0,
    }
    (source,) = data["sources"]
    assert source["name"] == "github"
    assert source["removed_remotely"] == ["acme/widgets#6"]
    assert source["unmapped"] == [
        {"field": "status", "value": "reopened", "external_id": "acme/widgets#3"}
    ]


def test_unmapped_status_is_reported_and_left_alone(synced: Workspace, github: FakeGitHub) -> None:
    github.issues[3]["state"] = "reopened"
    github.issues[3]["title"] = "Document the whole API"
    result = synced.sync()
    assert "status 'reopened' is not in field_map.status (1 item)" in result.output
    text = (synced.tasks / "github/003-document-the-api.md").read_text()
    assert "title: Document the whole API" in text
    assert "status: pending" in text  # unchanged, not reset


def test_new_unmapped_status_leaves_the_field_unset(
    workspace: Workspace, github: FakeGitHub
) -> None:
    github.add(1, "Odd", state="triage")
    workspace.configure(github_entry(github.url, filters="{state: all}"))
    result = workspace.sync()
    assert "status 'triage' is not in field_map.status" in result.output
    (text,) = workspace.task_files().values()
    assert "status:" not in text


def test_deleted_remotely_is_reported_not_deleted(synced: Workspace, github: FakeGitHub) -> None:
    del github.issues[2]
    result = synced.sync()
    assert "acme/widgets#2 is no longer returned by the source" in result.output
    assert (synced.tasks / "github/002-add-dark-mode.md").exists()


def test_lost_state_never_duplicates(synced: Workspace, github: FakeGitHub) -> None:
    (synced.tasks / ".tasktool" / STATE_FILE).unlink()
    github.issues[5]["title"] = "Old thing, renamed"
    result = synced.sync()
    assert result.output.splitlines()[-1] == (
        "created 0, updated 0, unchanged 4, conflicts 1, errors 0"
    )  # #5 differs from its file and no state says which side changed: a conflict
    assert len(synced.task_files()) == 5
    result = synced.sync("--conflict", "remote")
    assert len(synced.task_files()) == 5
    assert "Old thing, renamed" in (synced.tasks / "github/004-old-thing.md").read_text()


def test_auth_failure_is_a_clear_error_without_the_token(
    workspace: Workspace, github: FakeGitHub
) -> None:
    github.add(1, "One")
    workspace.configure(github_entry(github.url))
    result = workspace.sync(env={"GH_TOKEN": "ghp_wrong_token"})
    assert result.exit_code == 1
    assert "[sync.auth]" in result.output
    assert "HTTP 401" in result.output
    assert "ghp_wrong_token" not in result.output
    assert GITHUB_TOKEN not in result.output
    assert result.output.splitlines()[-1].endswith("errors 1")
    assert workspace.task_files() == {}


def test_missing_token_variable_fails_before_any_request(
    workspace: Workspace, github: FakeGitHub
) -> None:
    github.add(1, "One")
    workspace.configure(github_entry(github.url))
    result = workspace.sync(env={"GH_TOKEN": None})
    assert result.exit_code == 1
    assert result.output.strip() == (
        "error: sync source 'github': the environment variable GH_TOKEN is not set "
        "(it holds the API token) [sync.env_missing]"
    )
    assert github.seen == []


def test_unknown_source_name(synced: Workspace) -> None:
    result = synced.sync("--source", "gitlab")
    assert result.exit_code == 1
    assert "no sync source named 'gitlab' (configured: github) [sync.unknown_source]" in (
        result.output
    )


def test_deleted_locally_is_a_conflict_and_remote_recreates_it(
    synced: Workspace, github: FakeGitHub
) -> None:
    (synced.tasks / TASK_1).unlink()
    assert synced.sync().output.splitlines()[-1].startswith("created 0, updated 0, unchanged 5")
    github.issues[1]["title"] = "Crash on start, still"
    result = synced.sync()
    assert "deleted locally; skipped" in result.output
    assert not (synced.tasks / TASK_1).exists()
    result = synced.sync("--conflict", "remote")
    assert "deleted locally; created again from remote" in result.output
    (recreated,) = (synced.tasks / "github").glob("*crash-on-start-still.md")
    assert "external_id: acme/widgets#1" in recreated.read_text()


def test_a_broken_task_file_is_an_error_not_a_duplicate(
    synced: Workspace, github: FakeGitHub
) -> None:
    (synced.tasks / TASK_1).write_text("---\nid: '001'\ntitle: [unclosed\n---\n")
    github.issues[1]["title"] = "Crash on start, still"
    result = synced.sync("--conflict", "remote")
    assert result.exit_code == 1
    assert "error acme/widgets#1 (task 001)" not in result.output  # no task to name
    assert "task 001 is in a file that cannot be read" in result.output
    assert "[task.broken]" in result.output
    assert len(synced.task_files()) == 5


def test_verbose_lists_every_change(workspace: Workspace, github: FakeGitHub) -> None:
    github.add(1, "One")
    workspace.configure(github_entry(github.url))
    result = workspace.sync(env={"TASKTOOL_VERBOSE": "1"})
    assert "github: created acme/widgets#1 (task 001)" in result.output
    quiet = workspace.sync()
    assert quiet.output == "created 0, updated 0, unchanged 1, conflicts 0, errors 0\n"


def test_a_renumbered_task_is_followed(synced: Workspace, github: FakeGitHub) -> None:
    old = synced.tasks / TASK_1
    new = synced.tasks / "github/042-crash-on-start.md"
    new.write_text(old.read_text().replace("id: '001'", "id: '042'"))
    old.unlink()
    assert synced.sync().output.splitlines()[-1].startswith("created 0, updated 0, unchanged 5")
    state = json.loads((synced.tasks / ".tasktool" / STATE_FILE).read_text())
    assert state["sources"]["github"]["acme/widgets#1"]["task_id"] == "042"
    github.issues[1]["title"] = "Crash on start, renamed"
    result = synced.sync()  # the new id is a local edit
    assert "conflict acme/widgets#1 (task 042)" in result.output
    synced.sync("--conflict", "remote")
    assert "title: Crash on start, renamed" in new.read_text()
    assert len(synced.task_files()) == 5


def test_new_tasks_are_written_in_batches(
    workspace: Workspace, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "CREATE_BATCH", 2)
    for number in range(1, 8):
        github.add(number, f"Issue {number}")
    workspace.configure(github_entry(github.url))
    result = workspace.sync()
    assert result.output.splitlines()[-1].startswith("created 7, updated 0")
    names = sorted(workspace.task_files("github"))
    assert names == [f"github/{n:03d}-issue-{n}.md" for n in range(1, 8)]


def test_a_sync_over_a_warm_cache_compares_the_real_bodies(synced: Workspace) -> None:
    """Files settled, the parse cache warm and the sync state gone: each task is adopted
    by its external id when it holds what its issue says, its body included, which is
    where the cache keeps it: read, found equal, nothing changed."""
    past = time.time() - 3600
    for path in synced.tasks.rglob("*.md"):
        os.utime(path, (past, past))
    scan_tasks(synced.tasks)
    rows = ParseCache.open(synced.tasks).rows()
    assert rows is not None
    assert sum(row.task.raw_body == KEPT for row in rows if row.task) == 5
    (synced.tasks / ".tasktool" / STATE_FILE).unlink()
    before = synced.task_files("github")
    result = synced.sync()
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        "created 0, updated 0, unchanged 5, conflicts 0, errors 0"
    )
    assert synced.task_files("github") == before
