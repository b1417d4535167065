"""Shared fixtures: a temporary git repository with an isolated home directory."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest


class Project:
    """A repository root (with ``.git``), a home directory and an environment for loaders."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.home = home
        self.env: dict[str, str] = {"HOME": str(home)}

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def config(self, text: str) -> Path:
        return self.write(".tasktool.yaml", text)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    return Project(root, home)


TaskWriter = Callable[..., Path]


def task_text(task_id: str, title: str, **fields: object) -> str:
    """A task file's text; list values become flow sequences."""
    lines = ["---", f"id: '{task_id}'", f"title: {title}"]
    for key, value in fields.items():
        if key == "body":
            continue
        text = str(value)
        if isinstance(value, list | tuple):
            text = "[" + ", ".join(str(item) for item in value) + "]"
        lines.append(f"{key}: {text}")
    lines.append("---")
    return "\n".join(lines) + "\n" + str(fields.get("body", "")) + "\n"


def edit_in_place(path: Path, old: str, new: str) -> None:
    """An editor saving over the file: the same inode, the mtime put back, no folder
    changed; only the ctime tells (and the size, unless ``old`` and ``new`` are as long)."""
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert old in text
    with path.open("r+", encoding="utf-8") as handle:
        handle.write(text.replace(old, new, 1))
        handle.truncate()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert after.st_ino == before.st_ino
    assert len(old.encode()) != len(new.encode()) or after.st_size == before.st_size


@pytest.fixture
def write_task(project: Project) -> TaskWriter:
    def write(task_id: str, title: str = "A task", *, where: str = "", **fields: object) -> Path:
        relative = f"{where}/{task_id}-task.md" if where else f"{task_id}-task.md"
        return project.write(relative, task_text(task_id, title, **fields))

    return write


@pytest.fixture
def in_project(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    """The project as the working directory and its home as ``HOME``, with no
    ``TASKTOOL_*`` variable from the calling environment (for in-process CLI runs)."""
    import os

    for name in [name for name in os.environ if name.startswith("TASKTOOL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(project.home))
    monkeypatch.chdir(project.root)
    return project
