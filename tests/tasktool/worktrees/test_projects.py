"""The project registry through the CLI: register, list, unregister, --project,
--all-projects and default_project, with real git worktrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tasktool.conftest import task_text

from .conftest import Repo, Run, as_json


@pytest.fixture
def registry(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The global file, named by TASKTOOL_HOME_CONFIG (not ~/.tasktool.yaml)."""
    path = repo.base / "global" / "registry.yaml"
    path.parent.mkdir()
    path.write_text("# my projects\ndefault_project: ''  # none yet\n", encoding="utf-8")
    monkeypatch.setenv("TASKTOOL_HOME_CONFIG", str(path))
    return path


def _other(tmp_path: Path, name: str = "other", *tasks: str) -> Path:
    folder = tmp_path / name
    (folder / "tasks").mkdir(parents=True)
    (folder / ".tasktool.yaml").write_text("dir: tasks\n", encoding="utf-8")
    for task_id in tasks or ("1",):
        (folder / "tasks" / f"{task_id}-t.md").write_text(task_text(task_id, f"Other {task_id}"))
    return folder


def test_register_list_unregister_keep_the_file_s_comments(
    repo: Repo, run: Run, registry: Path, tmp_path: Path
) -> None:
    other = _other(tmp_path)
    assert "registered main" in run(repo.main, "projects", "register").stdout
    run(tmp_path, "projects", "register", str(other), "--id", "o", "--name", "Other one")
    listed = as_json(run(tmp_path, "projects", "--format", "json"))
    assert listed == [
        {"id": "main", "name": "main", "path": str(repo.main.resolve())},
        {"id": "o", "name": "Other one", "path": str(other.resolve())},
    ]
    table = run(tmp_path, "projects").stdout
    assert "Other one" in table
    assert " 3" in table  # main's task count
    text = registry.read_text()
    assert text.startswith("# my projects\ndefault_project: ''  # none yet\n")
    assert not (repo.home / ".tasktool.yaml").exists()  # the variable named the file

    refused = run(tmp_path, "projects", "register", str(other / "tasks"), code=1)
    assert "[projects.no_config]" in refused.stderr
    taken = run(tmp_path, "projects", "register", str(_other(tmp_path, "x")), "--id", "o", code=1)
    assert "[projects.exists]" in taken.stderr

    run(tmp_path, "projects", "unregister", "o")
    assert [p["id"] for p in as_json(run(tmp_path, "projects", "--format", "json"))] == ["main"]
    assert "# my projects" in registry.read_text()
    assert "[projects.not_found]" in run(tmp_path, "projects", "unregister", "o", code=1).stderr


def test_the_registry_defaults_to_home_and_ignores_config(
    repo: Repo, run: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TASKTOOL_HOME_CONFIG", raising=False)
    run(repo.main, "--config", str(repo.main / ".tasktool.yaml"), "projects", "register")
    assert "projects:" in (repo.home / ".tasktool.yaml").read_text()
    assert "projects:" not in (repo.main / ".tasktool.yaml").read_text()


def test_a_linked_worktree_registers_the_main_worktree_once(
    repo: Repo, run: Run, registry: Path
) -> None:
    a = repo.worktree("wt-a")
    b = repo.worktree("wt-b")
    assert f"registered main: {repo.main.resolve()}" in run(a, "projects", "register").stdout
    assert "already registered main" in run(b, "projects", "register").stdout
    assert "already registered" in run(repo.main, "projects", "register", "--id", "x").stdout
    assert [p["path"] for p in as_json(run(b, "projects", "--format", "json"))] == [
        str(repo.main.resolve())
    ]


def test_all_projects_counts_a_repository_with_three_worktrees_once(
    repo: Repo, run: Run, registry: Path, tmp_path: Path
) -> None:
    a = repo.worktree("wt-a")
    b = repo.worktree("wt-b")
    other = _other(tmp_path, "other", "1", "2")
    # A hand-written registry naming two worktrees of one repository, and another project.
    registry.write_text(
        f"projects:\n  - {{id: r, path: {repo.main}}}\n  - {{id: r-a, path: {a}}}\n"
        f"  - {{id: o, path: {other}}}\n",
        encoding="utf-8",
    )
    run(b, "set", "001", "--status", "in-progress")  # claimed in a third worktree

    listed = as_json(run(tmp_path, "--all-projects", "list", "--format", "json"))
    assert sorted((t["project"], t["id"]) for t in listed) == [
        ("o", "1"),
        ("o", "2"),
        ("r", "001"),
        ("r", "002"),
        ("r", "003"),
    ]
    assert next(t for t in listed if t["id"] == "001")["status"] == "in-progress"
    stats = as_json(run(tmp_path, "--all-projects", "stats", "--format", "json"))
    assert [(s["project"], s["total"]) for s in stats] == [("r", 3), ("o", 2)]
    board = as_json(run(tmp_path, "--all-projects", "board", "--format", "json"))
    assert [b_["project"] for b_ in board] == ["r", "o"]
    ranked = as_json(run(tmp_path, "--all-projects", "next", "--limit", "0", "--format", "json"))
    assert ("r", "001") not in [(t["project"], t["id"]) for t in ranked]
    assert ("r", "003") in [(t["project"], t["id"]) for t in ranked]
    table = run(tmp_path, "--all-projects", "list").stdout
    assert "project:o" in table
    assert "project:r-a" not in table
    # An explicit override applies to every project of the run.
    isolated = as_json(
        run(tmp_path, "--all-projects", "--worktree-scope", "isolated", "list", "--format", "json")
    )
    assert next(t for t in isolated if t["id"] == "001")["status"] == "pending"


def test_project_flag_and_default_project(
    repo: Repo, run: Run, registry: Path, tmp_path: Path
) -> None:
    other = _other(tmp_path, "other", "7")
    registry.write_text(
        f"default_project: o\nprojects:\n  - {{id: o, path: {other}}}\n"
        f"  - {{id: r, path: {repo.main}}}\n",
        encoding="utf-8",
    )
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()

    def ids(cwd: Path, *args: str) -> list[str]:
        return [t["id"] for t in as_json(run(cwd, *args, "list", "--format", "json"))]

    assert ids(nowhere) == ["7"]  # no config here: default_project
    assert ids(repo.main) == ["001", "002", "003"]  # a discovered config wins
    assert ids(nowhere, "--project", "r") == ["001", "002", "003"]  # --project beats both
    assert ids(repo.main, "--project", "o") == ["7"]
    (nowhere / "tasks").mkdir()
    (nowhere / "tasks" / "9-t.md").write_text(task_text("9", "Here"))
    assert ids(nowhere, "--task-dir", "tasks") == ["9"]  # --task-dir disables the fallback
    missing = run(nowhere, "--project", "zzz", "list", code=1)
    assert "[projects.not_found]" in missing.stderr
    registry.write_text("projects: 3\n", encoding="utf-8")
    assert "[projects.invalid]" in run(nowhere, "list", code=1).stderr
