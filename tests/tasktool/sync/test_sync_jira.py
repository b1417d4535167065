"""``tasktool sync`` against a real local Jira: JQL, Basic auth, cursor paging, ADF bodies."""

from __future__ import annotations

import base64
import json

import pytest

from tests.tasktool.sync.trackers import (
    JIRA_TOKEN,
    JIRA_USER,
    FakeJira,
    Workspace,
    adf,
    jira_entry,
    paragraph,
    text,
)

DESCRIPTION = adf(
    {"type": "heading", "attrs": {"level": 2}, "content": [text("Steps")]},
    {
        "type": "orderedList",
        "content": [
            {
                "type": "listItem",
                "content": [
                    paragraph(text("Open "), text("settings", "strong")),
                    {
                        "type": "bulletList",
                        "content": [
                            {
                                "type": "listItem",
                                "content": [paragraph(text("then "), text("x", "code"))],
                            }
                        ],
                    },
                ],
            },
            {"type": "listItem", "content": [paragraph(text("Save"))]},
        ],
    },
    {"type": "codeBlock", "attrs": {"language": "sh"}, "content": [text("make test")]},
    paragraph(text("Ping "), {"type": "mention", "attrs": {"id": "1", "text": "@Bob"}}),
)


def test_first_sync_converts_and_maps(workspace: Workspace, jira: FakeJira) -> None:
    jira.add(
        1,
        "Login fails",
        description=DESCRIPTION,
        status="In Progress",
        priority="High",
        labels=["backend", "Needs Review"],
        assignee="Bob Smith",
    )
    jira.add(2, "Logout button", status="Done", priority="Low")
    jira.add(3, "Export CSV", status="Blocked")
    workspace.configure(jira_entry(jira.url, filters='{jql: "labels != wontfix"}'))
    result = workspace.sync()
    assert result.exit_code == 0, result.output
    assert "status 'Blocked' is not in field_map.status (1 item)" in result.output
    assert result.output.splitlines()[-1] == (
        "created 3, updated 0, unchanged 0, conflicts 0, errors 0"
    )
    files = workspace.task_files("jira")
    assert sorted(files) == [
        "jira/001-login-fails.md",
        "jira/002-logout-button.md",
        "jira/003-export-csv.md",
    ]
    first = files["jira/001-login-fails.md"]
    assert "status: in-progress" in first
    assert "priority: high" in first
    assert "tags: [backend, needs-review]" in first
    assert "owner: Bob Smith" in first
    assert "external_id: PROJ-1" in first
    assert first.split("---\n", 2)[2] == (
        "## Steps\n"
        "\n"
        "1. Open **settings**\n"
        "   - then `x`\n"
        "2. Save\n"
        "\n"
        "```sh\n"
        "make test\n"
        "```\n"
        "\n"
        "Ping @Bob\n"
    )
    assert "status: completed" in files["jira/002-logout-button.md"]
    assert "status:" not in files["jira/003-export-csv.md"]
    # Two pages (cursor), Basic auth, the project ANDed with the configured JQL.
    assert len(jira.seen) == 2
    assert "nextPageToken" not in jira.seen[0].body
    assert jira.seen[1].body["nextPageToken"]
    basic = base64.b64encode(f"{JIRA_USER}:{JIRA_TOKEN}".encode()).decode()
    assert {seen.authorization for seen in jira.seen} == {f"Basic {basic}"}
    assert jira.seen[0].body["jql"] == ('project = "PROJ" AND (labels != wontfix) ORDER BY key ASC')


def test_second_sync_and_remote_change(workspace: Workspace, jira: FakeJira) -> None:
    jira.add(1, "Login fails")
    jira.add(2, "Logout button")
    workspace.configure(jira_entry(jira.url))
    assert workspace.sync().exit_code == 0
    jira.issues["PROJ-2"]["fields"]["description"] = adf(paragraph(text("New", "em")))
    result = workspace.sync("--format", "json")
    data = json.loads(result.output)
    assert data["totals"]["updated"] == 1
    assert data["totals"]["unchanged"] == 1
    assert workspace.task_files()["jira/002-logout-button.md"].endswith("---\n*New*\n")


def test_missing_user_variable(workspace: Workspace, jira: FakeJira) -> None:
    workspace.configure(jira_entry(jira.url))
    result = workspace.sync(env={"JIRA_USER": ""})
    assert result.exit_code == 1
    assert "the environment variable JIRA_USER is not set" in result.output
    assert "[sync.env_missing]" in result.output
    assert jira.seen == []


def test_refused_credentials(workspace: Workspace, jira: FakeJira) -> None:
    jira.add(1, "Login fails")
    workspace.configure(jira_entry(jira.url))
    result = workspace.sync(env={"JIRA_TOKEN": "not-the-token"})
    assert result.exit_code == 1
    assert "HTTP 401; the credentials were refused" in result.output
    assert "not-the-token" not in result.output
    assert workspace.task_files() == {}


def test_only_the_chosen_source_runs(workspace: Workspace, jira: FakeJira) -> None:
    jira.add(1, "Login fails")
    workspace.configure(
        jira_entry(jira.url)
        + "    - name: github\n      project: acme/widgets\n      output_dir: tasks/gh\n"
        "      base_url: http://127.0.0.1:9\n      token_env: UNSET_TOKEN\n"
    )
    result = workspace.sync("--source", "jira")
    assert result.exit_code == 0, result.output
    assert list(workspace.task_files()) == ["jira/001-login-fails.md"]


@pytest.mark.parametrize(
    ("mode", "kept"),
    [("skip", True), ("local", True), ("remote", False)],
)
def test_local_edit_conflict(workspace: Workspace, jira: FakeJira, mode: str, kept: bool) -> None:
    jira.add(1, "Login fails")
    workspace.configure(jira_entry(jira.url))
    assert workspace.sync().exit_code == 0
    path = workspace.tasks / "jira/001-login-fails.md"
    path.write_text(path.read_text().replace("About Login fails.", "My notes."))
    jira.issues["PROJ-1"]["fields"]["summary"] = "Login fails on Safari"
    result = workspace.sync("--conflict", mode)
    assert result.output.splitlines()[-1].endswith("conflicts 1, errors 0")
    text = path.read_text()
    assert ("My notes." in text) is kept
    assert ("title: Login fails on Safari" in text) is not kept


def test_titles_become_one_line(workspace: Workspace, jira: FakeJira) -> None:
    jira.add(1, "  Two\nlines  ")
    jira.add(2, "   ")
    workspace.configure(jira_entry(jira.url))
    result = workspace.sync()
    assert result.exit_code == 0, result.output
    assert sorted(workspace.task_files("jira")) == ["jira/001-two-lines.md", "jira/002-proj-2.md"]
