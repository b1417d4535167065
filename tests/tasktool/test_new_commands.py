"""Commands people expect from taskmd and Backlog.md: search, edit, restore, archive
filters and --format json, tags, and ``--filter tag=X`` (through the real CLI)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result

from tasktool.cli.main import main as cli

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project

Invoke = Callable[..., Result]


@pytest.fixture
def run(in_project: Project) -> Invoke:
    project = in_project
    project.config("dir: tasks\n")
    tasks = [
        ("1", "Fix login cache", "completed", "[auth, bug]", "2020-01-01", "Sessions expire."),
        ("2", "Cache warmup", "pending", "[perf]", None, "Warm the login cache at boot."),
        ("3", "Write docs", "cancelled", "[docs]", "2026-11-01", "Nothing about caches."),
        ("4", "Dark mode", "completed", "[ui, bug]", "2026-11-20", "Colours."),
    ]
    for task_id, title, status, tags, done, body in tasks:
        stamp = f"completed_at: {done}\n" if done and status == "completed" else ""
        stamp += f"cancelled_at: {done}\n" if done and status == "cancelled" else ""
        project.write(
            f"tasks/{task_id}-t.md",
            f"---\nid: '{task_id}'\ntitle: {title}\nstatus: {status}\ntags: {tags}\n"
            f"created_at: 2019-06-01\n{stamp}---\n{body}\n",
        )

    def invoke(*args: str, code: int = 0, env: dict[str, str] | None = None) -> Result:
        result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result

    return invoke


def ids(result: Result, key: str | None = None) -> list[str]:
    data = json.loads(result.stdout)
    return [row["id"] for row in (data[key] if key else data)]


def test_search_ranks_titles_over_bodies_and_takes_filters(run: Invoke) -> None:
    found = json.loads(run("search", "CACHE", "--format", "json").stdout)
    assert {row["id"] for row in found[:2]} == {"1", "2"}  # in the title
    assert found[2]["id"] == "3"  # only in the body ("caches")
    assert found[1]["score"] > found[2]["score"]
    assert ids(run("search", "login cache", "--format", "json")) == ["1", "2"]
    assert ids(run("search", "cache", "-f", "status=pending", "--format", "json")) == ["2"]
    assert ids(run("search", "cache", "-f", "tag=auth", "--format", "json")) == ["1"]


def test_filter_tag_is_an_alias_of_tags(run: Invoke) -> None:
    assert ids(run("list", "--filter", "tag=bug", "--format", "json")) == ["1", "4"]
    assert ids(run("list", "--filter", "tags=bug", "--format", "json")) == ["1", "4"]


def test_tags_counts_every_tag(run: Invoke) -> None:
    rows = json.loads(run("tags", "--format", "json").stdout)
    assert rows[0] == {"tag": "bug", "count": 2}
    assert {row["tag"]: row["count"] for row in rows} == {
        "bug": 2,
        "auth": 1,
        "perf": 1,
        "docs": 1,
        "ui": 1,
    }


def test_archive_filters_json_and_restore(run: Invoke, project: Project) -> None:
    plan = json.loads(
        run("archive", "--tag", "bug", "--older-than", "30", "--dry-run", "--format", "json").stdout
    )
    assert [row["id"] for row in plan["archived"]] == ["1"]  # 4 was completed days ago
    done = json.loads(run("archive", "--status", "cancelled", "--format", "json").stdout)
    assert [row["id"] for row in done["archived"]] == ["3"]
    assert (project.root / "tasks/archive/3-t.md").is_file()
    assert ids(run("list", "--archived", "-f", "status=cancelled", "--format", "json")) == ["3"]
    restored = json.loads(run("restore", "3", "--format", "json").stdout)
    assert restored["restored"][0]["to"].endswith("tasks/3-t.md")
    assert (project.root / "tasks/3-t.md").is_file()
    assert "[task.exists]" in run("restore", "3", code=1).output  # not archived now
    project.write("tasks/archive/2-t.md", "---\nid: '2'\ntitle: Old copy\n---\n")
    assert "[task.exists]" in run("restore", "2", code=1).output  # the id is active


def test_edit_opens_the_editor_and_checks_the_result(run: Invoke, project: Project) -> None:
    script = project.root.parent / "editor.py"
    script.write_text(
        "import sys, pathlib\n"
        "path = pathlib.Path(sys.argv[3])\n"
        "path.write_text(path.read_text().replace(sys.argv[1], sys.argv[2]))\n"
    )
    editor = f"{sys.executable} {script}"
    edited = json.loads(
        run("edit", "2", "--format", "json", env={"VISUAL": f"{editor} pending in-progress"}).stdout
    )
    assert edited["status"] == "in-progress"
    result = run("edit", "2", code=1, env={"VISUAL": "", "EDITOR": f"{editor} in-progress bogus"})
    assert "[task.invalid_status]" in result.output
    assert str(project.root / "tasks" / "2-t.md") in result.output
    failing = run("edit", "1", code=1, env={"VISUAL": "false"})
    assert "[task.editor]" in failing.output


def test_documented_file_paths_are_absolute_as_printed(run: Invoke) -> None:
    docs = (Path(__file__).parents[2] / "docs" / "tasktool.md").read_text(encoding="utf-8")
    documented = re.findall(r'"file_path": "([^"]*)"', docs)
    assert documented
    assert all(path.startswith("/") for path in documented), documented
    for args in (("list",), ("next",), ("search", "cache"), ("get", "2")):
        data = json.loads(run(*args, "--format", "json").stdout)
        for row in data if isinstance(data, list) else [data]:
            assert Path(row["file_path"]).is_absolute(), (args, row["file_path"])


def test_archive_dry_run_shows_the_plan_with_unresolved_tasks_marked(
    run: Invoke, project: Project
) -> None:
    """A dry run with filters that select unfinished tasks shows where each would go (those
    a real run refuses marked), instead of refusing with task.unresolved."""
    plan = run("archive", "--status", "pending,cancelled", "--dry-run", "--format", "json")
    rows = json.loads(plan.stdout)["archived"]
    assert [(row["id"], row["needs_force"]) for row in rows] == [("2", True), ("3", False)]
    assert all(row["to"].startswith(str(project.root / "tasks" / "archive")) for row in rows)
    text = run("archive", "--status", "pending", "--dry-run").stdout
    assert "would archive 2: " in text
    assert "(status pending: needs --force)" in text
    forced = json.loads(
        run("archive", "--status", "pending", "--dry-run", "--force", "--format", "json").stdout
    )
    assert [row["needs_force"] for row in forced["archived"]] == [False]
    assert (project.root / "tasks" / "2-t.md").is_file()  # nothing moved
    assert "[task.unresolved]" in run("archive", "--status", "pending", code=1).output
