"""A fresh clone: ``dir: tasks`` configured, no ``tasks/`` folder (git keeps no empty
folder). Reads show no tasks with one note, writes create the folder, a failed write
leaves nothing behind, and the dashboard serves it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest
from click.testing import CliRunner, Result

from tasktool.config import Overrides
from tasktool.planning.repository import loader
from tasktool.planning.writing.changes import new_task_fields
from tasktool.planning.writing.writes import create_task
from tasktool.web.app import WebConfig
from tests.tasktool.conftest import Project
from tests.tasktool.test_cli import tasktool_group
from tests.tasktool.web.conftest import ServerThread


@pytest.fixture
def clone(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    for name in [name for name in os.environ if name.startswith("TASKTOOL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(project.home))
    monkeypatch.chdir(project.root)
    project.config("dir: tasks\n")
    return project


def tasktool(*args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(tasktool_group(), list(args), catch_exceptions=False)
    assert result.exit_code == code, (args, result.stderr)
    return result


def contents(project: Project) -> list[str]:
    return sorted(path.name for path in project.root.iterdir())


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["next"],
        ["board"],
        ["stats"],
        ["tags"],
        ["search", "x"],
        ["graph"],
        ["next-id"],
        ["validate"],
    ],
)
def test_reads_show_no_tasks_with_one_note_and_make_nothing(
    clone: Project, argv: list[str]
) -> None:
    done = tasktool(*argv)
    (line,) = done.stderr.splitlines()
    assert line.startswith("warning: task directory ")
    assert line.endswith("does not exist yet: no tasks (the first add or sync creates it) "
                         "[task.dir_absent]")  # fmt: skip
    assert contents(clone) == [".git", ".tasktool.yaml"]
    assert tasktool("-q", *argv).stderr == ""


def test_add_creates_the_folder_and_a_failed_add_leaves_nothing(clone: Project) -> None:
    failed = tasktool("add", "X", "--priority", "bogus", code=1)
    assert failed.stderr.endswith("[task.invalid_priority]\n")
    assert contents(clone) == [".git", ".tasktool.yaml"]
    added = tasktool("add", "First")
    assert added.stderr == ""
    assert [path.name for path in (clone.root / "tasks").glob("*.md")] == ["001-first.md"]
    listed = tasktool("list", "--format", "json")
    assert listed.stderr == ""
    assert '"id": "001"' in listed.stdout


def test_a_task_dir_that_is_a_file_is_still_an_error(clone: Project) -> None:
    clone.write("tasks", "not a folder")
    failed = tasktool("list", code=1)
    assert failed.stderr.endswith("is not a directory [task.dir_missing]\n")


@pytest.fixture
def served(clone: Project) -> Iterator[str]:
    load = loader(Overrides(config=str(clone.root / ".tasktool.yaml")))
    server = ServerThread(WebConfig(load=load, task_dir=clone.root / "tasks"))
    bound = server.start()
    try:
        yield bound.url
    finally:
        server.stop()


def test_the_dashboard_serves_a_fresh_clone_and_sees_its_first_task(
    clone: Project, served: str
) -> None:
    with httpx.Client(base_url=served, timeout=httpx.Timeout(10, read=10)) as client:
        assert client.get("/api/tasks").json() == []
        assert client.get("/").status_code == 200
        assert client.get("/api/validate").json()["valid"] is True
        events = []
        with client.stream("GET", "/api/events") as stream:
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    events.append(line.removeprefix("event: "))
                    if events[-1] == "ready":
                        repo = loader(Overrides(config=str(clone.root / ".tasktool.yaml")))()
                        create_task(repo, new_task_fields("From the web", {}, {}))
                    elif events[-1] == "change":
                        break
        assert events == ["ready", "change"]
        assert [task["id"] for task in client.get("/api/tasks").json()] == ["001"]
