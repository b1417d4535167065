"""``add`` writes a new task file the way most of the repository's files are written:
taskmd's ``created:`` and ``id: "007"``, or this tool's ``created_at:`` and ``id: '007'``,
learned from a bounded sample of files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from tasktool.cli.main import main as cli
from tasktool.files.parsing import house_style
from tasktool.files.parsing.house_style import SAMPLE, HouseStyle, learn_style
from tasktool.files.parsing.roundtrip import new_task_text

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project


def taskmd_file(number: int, created: str = "created") -> str:
    return (
        f'---\ntitle: "Task {number}"\nid: "{number:03d}"\nstatus: pending\n'
        f'dependencies: ["001"]\ntags: [cli]\n{created}: 2026-02-{number % 28 + 1:02d}\n---\n'
    )


def add(project: Project, *args: str) -> str:
    result = CliRunner().invoke(cli, ["add", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (path,) = (project.root / "tasks").glob(
        f"{len(list((project.root / 'tasks').glob('*.md'))):03d}-*.md"
    )
    return path.read_text()


@pytest.fixture
def tasks(in_project: Project) -> Project:
    in_project.config("dir: tasks\n")
    return in_project


def test_add_follows_taskmds_files(tasks: Project) -> None:
    for number in range(1, 4):
        tasks.write(f"tasks/{number:03d}-t.md", taskmd_file(number))
    tasks.write(
        "tasks/004-t.md", "---\nid: '004'\ntitle: Other style\ncreated_at: 2026-01-01\n---\n"
    )
    today = dt.datetime.now(dt.UTC).date().isoformat()
    text = add(tasks, "Next one", "--dep", "002", "--status", "completed")
    assert text == (
        f'---\nid: "005"\ntitle: "Next one"\nstatus: completed\ndependencies: ["002"]\n'
        f"created: {today}\ncompleted_at: {today}\n---\n"
    )


def test_add_keeps_its_own_style_where_files_use_it(tasks: Project) -> None:
    tasks.write("tasks/001-t.md", "---\nid: '001'\ntitle: One\ncreated_at: 2026-01-01\n---\n")
    tasks.write("tasks/002-t.md", taskmd_file(2))
    tasks.write("tasks/003-t.md", "---\nid: '003'\ntitle: Three\ncreated_at: 2026-01-03\n---\n")
    text = add(tasks, "Four", "--tag", "x")
    assert text.startswith("---\nid: '004'\ntitle: Four\nstatus: pending\ntags: [x]\ncreated_at: ")


def test_a_style_never_changes_what_a_value_reads_as() -> None:
    style = HouseStyle(date_key="created", quotes={"id": "", "title": "'"})
    text = new_task_text(
        {"id": "007", "title": "it's: fine", "created_at": "2026-01-01"}, "", style
    )
    assert text == "---\nid: '007'\ntitle: 'it''s: fine'\ncreated: 2026-01-01\n---\n"


def test_a_bounded_sample_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = []
    for number in range(1, 301):
        path = tmp_path / f"{number:03d}-t.md"
        path.write_text(taskmd_file(number, "created" if number % 3 else "created_at"))
        paths.append(str(path))
    read: list[str] = []
    real = house_style._frontmatter

    def counting(path: str) -> str:
        read.append(path)
        return real(path)

    monkeypatch.setattr(house_style, "_frontmatter", counting)
    style = learn_style(paths)
    assert len(read) == SAMPLE
    assert read[0] == paths[0]
    assert read[-1] == paths[-1]
    assert style.date_key == "created"
    assert style.quotes["id"] == '"'
    assert style.quotes["dependencies"] == '"'
    assert style.quotes["tags"] == ""
    assert learn_style([]) == HouseStyle()
