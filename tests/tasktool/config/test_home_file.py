"""The home file (``~/.tasktool.yaml``) is a fallback config, never a task directory
of its own: its relative ``dir`` means the folder the command runs for (or the
``default_project``'s), and a registered project whose folder is gone is an error."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tasktool.config import LoadedConfig, Overrides, load_config
from tasktool.model.errors import TaskToolError
from tests.tasktool.conftest import Project
from tests.tasktool.test_cli import tasktool_group


def load(where: Project, cwd: Path, project: str | None = None) -> LoadedConfig:
    return load_config(Overrides(project=project), cwd=cwd, env=where.env, home=where.home)


@pytest.fixture
def outside(project: Project) -> Path:
    """A folder in no repository, under the home folder (the search walks up through it)."""
    folder = project.home / "notes"
    folder.mkdir()
    return folder


@pytest.mark.parametrize(
    ("text", "expected"), [("dir: tasks\n", "tasks"), ("worklogs: true\n", "")]
)
def test_a_relative_dir_in_the_home_file_means_the_current_folder(
    project: Project, outside: Path, text: str, expected: str
) -> None:
    home_file = project.home / ".tasktool.yaml"
    home_file.write_text(text)
    loaded = load(project, outside)
    assert loaded.file == str(home_file)
    assert loaded.config.task_dir == str(outside / expected).rstrip("/")
    elsewhere = project.root.parent / "elsewhere"
    elsewhere.mkdir()
    assert load(project, elsewhere).config.task_dir == str(elsewhere / expected).rstrip("/")


def test_the_home_file_s_dir_follows_default_project(project: Project, tmp_path: Path) -> None:
    """With ``default_project`` (whose folder has no file of its own), the home file's
    relative ``dir`` resolves against the project's folder."""
    folder = tmp_path / "plans"
    folder.mkdir()
    (project.home / ".tasktool.yaml").write_text(
        f"dir: tasks\ndefault_project: p\nprojects:\n  - {{id: p, path: {folder}}}\n"
    )
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    assert load(project, nowhere).config.task_dir == str(folder / "tasks")


def test_a_registered_project_whose_folder_is_gone_is_an_error(
    project: Project, tmp_path: Path
) -> None:
    gone = tmp_path / "gone"
    (project.home / ".tasktool.yaml").write_text(
        f"default_project: g\nprojects:\n  - {{id: g, path: {gone}}}\n"
    )
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    for flag in ("g", None):
        with pytest.raises(TaskToolError) as caught:
            load(project, nowhere, flag)
        assert caught.value.code == "projects.folder_missing"
        assert str(gone) in caught.value.message


def test_add_outside_a_project_never_writes_in_home(
    project: Project, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``projects register`` wrote ``~/.tasktool.yaml``: ``add`` in a folder outside
    any project writes there, and ``list`` reads there, not all of ``~``; the projects
    table shows a project whose folder is gone as its error, not ``0``."""
    project.config("dir: tasks\n")
    (project.root / "tasks").mkdir()
    monkeypatch.setenv("HOME", str(project.home))
    for name in [name for name in os.environ if name.startswith("TASKTOOL_")]:
        monkeypatch.delenv(name)
    group = tasktool_group()
    runner = CliRunner()
    monkeypatch.chdir(project.root)
    assert runner.invoke(group, ["projects", "register"]).exit_code == 0
    (project.home / "stray-001-old.md").write_text("---\nid: '001'\ntitle: In home\n---\n")
    monkeypatch.chdir(outside)
    added = runner.invoke(group, ["add", "x"])
    assert added.exit_code == 0, added.stderr
    assert [path.name for path in outside.glob("*.md")] == ["001-x.md"]
    assert not (project.home / ".tasktool").exists()
    assert not list(project.home.glob("001-*.md"))
    listed = runner.invoke(group, ["list", "--format", "json"])
    assert '"In home"' not in listed.stdout
    shutil.rmtree(project.root)
    table = runner.invoke(group, ["projects"])
    assert "[projects.folder_missing]" in table.stdout
