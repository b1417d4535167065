"""Whole-process tests of the planning commands (next, tracks, board, stats, graph,
todos, validate, worklog) in temporary git repositories."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.tasktool.conftest import Project as BaseProject

from .tasktool_process import git_repository, run_tasktool, tasktool_env

PHASES = "phases:\n  - id: alpha\n    name: Alpha\n  - id: beta\n    name: Beta\n"


class Project(BaseProject):
    """A git repository with a config, task files and a ``tasktool`` runner."""

    def __init__(self, root: Path, home: Path) -> None:
        super().__init__(root, home)
        self.env = tasktool_env(home)

    def config(self, text: str) -> Path:
        return self.write(".tasktool.yaml", "dir: tasks\n" + text)

    def task(self, task_id: str, *, where: str = "", **fields: Any) -> Path:
        lines = ["---", f"id: '{task_id}'", f"title: Task {task_id}"]
        for key, value in fields.items():
            text = "[" + ", ".join(value) + "]" if isinstance(value, list) else str(value)
            lines.append(f"{key}: {text}")
        folder = f"tasks/{where}/" if where else "tasks/"
        return self.write(f"{folder}{task_id}-task.md", "\n".join([*lines, "---", "body"]) + "\n")

    def run(self, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = run_tasktool(args, cwd=self.root, env=self.env)
        assert done.returncode == code, f"exit {done.returncode}: {done.stdout}{done.stderr}"
        assert "Traceback" not in done.stderr
        return done

    def json(self, *args: str, code: int = 0) -> Any:
        return json.loads(self.run(*args, "--format", "json", code=code).stdout)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = git_repository(tmp_path)
    made = Project(root, tmp_path / "home")
    made.config(PHASES)
    (root / "tasks").mkdir()
    return made


def _ids(items: list[dict[str, Any]]) -> list[str]:
    return [item["id"] for item in items]


def test_next_ranks_by_phase_then_score(project: Project) -> None:
    project.task("1", phase="beta", priority="critical")
    project.task("2", phase="alpha", priority="low", effort="small")
    project.task("3", priority="high", dependencies=["2", "6"])
    project.task("4", status="completed")
    project.task("5", phase="gamma", priority="critical")
    project.task("6", phase="alpha", status="completed", where="archive")
    ranked = project.json("next")
    assert _ids(ranked) == ["2", "1", "5"]
    first = ranked[0]
    assert set(first) == {
        "rank", "id", "title", "status", "priority", "effort", "phase", "score", "reasons",
        "file_path",
    }  # fmt: skip
    assert first["rank"] == 1
    assert first["score"] == sum(reason["points"] for reason in first["reasons"])
    assert {reason["factor"] for reason in first["reasons"]} == {
        "priority", "critical_path", "unblocks", "effort", "phase",
    }  # fmt: skip
    assert first["file_path"].endswith("2-task.md")
    loose = project.json("next", "--strict-phases=false")
    assert _ids(loose) == ["1", "2", "5"]
    assert [item["score"] for item in loose] == [60, 58, 40]
    assert project.json("next", "--limit", "1") == ranked[:1]
    assert _ids(project.json("next", "--quick-wins")) == ["2"]
    assert _ids(project.json("next", "--filter", "priority>=high")) == ["1", "5"]
    table = project.run("next").stdout
    assert "priority critical +40" in table


def test_next_unphased_last(project: Project) -> None:
    project.config(PHASES + "next:\n  unphased: last\n")
    project.task("1", priority="critical")
    project.task("2", phase="beta")
    project.task("3", phase="zeta", priority="critical")
    assert _ids(project.json("next")) == ["2", "1", "3"]


@pytest.mark.parametrize(
    ("section", "code"),
    [
        ("next:\n  unphased: first\n", "config.next.unphased"),
        ("next: current\n", "config.next.type"),
        ("next:\n  unphased: last\n  extra: 1\n", "config.next.unknown_key"),
    ],
)
def test_next_refuses_a_malformed_next_section(project: Project, section: str, code: str) -> None:
    project.config(PHASES + section)
    project.task("1")
    done = project.run("next", code=1)
    assert done.stdout == ""
    assert done.stderr.startswith("error: ")
    assert f"[{code}]" in done.stderr
    report = project.json("validate", code=1)
    assert code in [error["code"] for error in report["errors"]]


def test_next_bad_filter_is_a_usage_error(project: Project) -> None:
    project.task("1")
    assert "--filter" in project.run("next", "--filter", "colour=red", code=2).stderr


def test_tracks(project: Project) -> None:
    project.config("scopes:\n  api:\n    description: HTTP\n  db: {}\n")
    project.task("1", touches=["api", "db"], priority="high")
    project.task("2", touches=["db"])
    project.task("3", touches=["api"])
    project.task("4")
    project.task("5", touches=["cache"])
    result = project.json("tracks")
    assert [(t["id"], t["scopes"], _ids(t["tasks"])) for t in result["tracks"]] == [
        (1, ["api", "cache", "db"], ["1", "5"]),
        (2, ["api", "db"], ["2", "3"]),
    ]
    assert _ids(result["flexible"]) == ["4"]
    assert result["warnings"] == [
        "task 5: touches 'cache', which matches no configured scope (api (HTTP), db)"
    ]
    done = project.run("tracks")
    assert "flexible" in done.stdout
    assert "touches 'cache', which matches no configured scope" in done.stderr


def test_board_columns_in_natural_order(project: Project) -> None:
    project.config("effort: [xs, m, xl]\n" + PHASES)
    project.task("1", effort="xl", phase="beta")
    project.task("2", effort="xs")
    project.task("10", effort="xs", phase="alpha")
    board = project.json("board", "--group-by", "effort")
    assert [(c["name"], _ids(c["tasks"])) for c in board["columns"]] == [
        ("xs", ["2", "10"]),
        ("m", []),
        ("xl", ["1"]),
    ]
    phases = project.json("board", "--group-by", "phase")
    assert [c["name"] for c in phases["columns"]] == ["alpha", "beta", "(none)"]
    assert phases["columns"][-1]["value"] is None
    assert "xs (2)" in project.run("board", "--group-by", "effort").stdout
    assert "Invalid value" in project.run("board", "--group-by", "colour", code=2).stderr


def test_stats(project: Project) -> None:
    project.task("1", status="completed")
    project.task("2", dependencies=["1"])
    project.task("3", dependencies=["2"])
    stats = project.json("stats")
    assert stats["total"] == 3
    assert stats["by_status"]["pending"] == 2
    assert stats["completion_rate"] == pytest.approx(1 / 3, abs=1e-4)
    assert stats["blocked"] == 1
    assert stats["longest_chain"] == {"length": 3, "ids": ["1", "2", "3"]}
    assert "1 -> 2 -> 3" in project.run("stats").stdout


def test_graph_formats_root_and_cycles(project: Project) -> None:
    project.task("1", status="completed")
    project.task("2", dependencies=["1"])
    project.task("3", dependencies=["2"])
    project.task("7", dependencies=["8"])
    project.task("8", dependencies=["7"])
    ascii_ = project.run("graph").stdout
    assert "└── 3: Task 3 [pending]" in ascii_
    assert "cycle: 7 -> 8 -> 7" in ascii_
    assert "graph TD" in project.run("graph", "--format", "mermaid").stdout
    assert '"2" -> "3";' in project.run("graph", "--format", "dot").stdout
    view = json.loads(
        project.run(
            "graph", "--format", "json", "--root", "3", "--upstream", "--exclude-status",
            "completed",
        ).stdout
    )  # fmt: skip
    assert _ids(view["nodes"]) == ["2", "3"]
    assert view["edges"] == [{"from": "2", "to": "3"}]
    assert "task.not_found" in project.run("graph", "--root", "99", code=1).stderr
    assert "--root" in project.run("graph", "--upstream", code=2).stderr
    assert "'done'" in project.run("graph", "--exclude-status", "done", code=2).stderr


def test_todos(project: Project) -> None:
    project.config("todos:\n  exclude: ['legacy/**']\n")
    project.write("src/app.py", "x = 1  # TODO(ann): tidy up\ns = '# FIXME not me'\n")
    project.write("src/web.ts", "// HACK: later\n")
    project.write("legacy/old.py", "# TODO old\n")
    project.write("gen/out.py", "# XXX generated\n")
    project.write("ignored/skip.py", "# BUG ignored\n")
    project.write(".gitignore", "ignored/\n")
    project.write("node_modules/pkg/index.js", "// TODO vendored\n")
    (project.root / "blob.py").write_bytes(b"\x00# TODO binary\n")
    todos = project.json("todos", "--exclude", "gen")
    assert [(t["file"], t["line"], t["marker"], t["text"]) for t in todos] == [
        ("src/app.py", 1, "TODO", "tidy up"),
        ("src/web.ts", 1, "HACK", "later"),
    ]
    assert todos[0]["author"] == "ann"
    assert project.json("todos", "--exclude", "gen")[0]["id"] == todos[0]["id"]
    assert "src/app.py:1" in project.run("todos").stdout


def test_validate_errors_warnings_and_exit_codes(project: Project) -> None:
    project.task("1")
    assert project.json("validate") == {"valid": True, "errors": [], "warnings": []}
    assert project.run("validate").stdout == "valid: 0 errors, 0 warnings\n"
    project.task("2", phase="nowhere")
    assert project.json("validate")["warnings"][0]["code"] == "task.unknown_phase"
    strict = project.json("validate", "--strict", code=2)
    assert strict["valid"] is True
    project.task("3", dependencies=["4"], effort="huge", status="done")
    project.task("4", dependencies=["3"])
    project.task("1", where="dup")
    project.write("tasks/5-broken.md", "---\nid: '5'\nstatus: [unclosed\n---\n")
    report = project.json("validate", code=1)
    codes = {error["code"] for error in report["errors"]}
    assert {
        "task.dependency_cycle", "task.invalid_effort", "task.invalid_status", "task.duplicate_id",
    } <= codes  # fmt: skip
    assert any(error.get("file", "").endswith("5-broken.md") for error in report["errors"])
    cycle = next(e for e in report["errors"] if e["code"] == "task.dependency_cycle")
    assert cycle["message"] == "dependency cycle: 3 -> 4 -> 3"
    assert cycle["task_id"] == "3"
    duplicate = next(e for e in report["errors"] if e["code"] == "task.duplicate_id")
    assert "tasks/1-task.md" in duplicate["message"]
    assert "tasks/dup/1-task.md" in duplicate["message"]
    table = project.run("validate", code=1).stdout
    assert "dependency cycle: 3 -> 4 -> 3" in table


def test_validate_reports_config_errors(project: Project) -> None:
    project.config("effort: [s, s]\n")
    project.task("1")
    report = project.json("validate", code=1)
    assert report["errors"][0]["code"].startswith("config.effort")
    project.write(".tasktool.yaml", "dir: [unclosed\n")
    report = project.json("validate", code=1)
    assert report["errors"][0]["code"] == "config.syntax"


def test_worklog(project: Project) -> None:
    project.task("1")
    assert project.json("worklog", "1") == {"task_id": "1", "entries": []}
    refused = project.run("worklog", "1", "--add", "did it", code=1)
    assert "[worklog.disabled]" in refused.stderr
    assert "worklogs: true" in refused.stderr
    assert not (project.root / "tasks" / ".worklogs").exists()
    project.config("worklogs: true\n")
    added = project.json("worklog", "1", "--add", "did it")
    assert [entry["content"] for entry in added["entries"]] == ["did it"]
    project.run("worklog", "1", "--add", "and more")
    text = (project.root / "tasks" / ".worklogs" / "1.md").read_text()
    assert text.count("\n## ") + text.startswith("## ") == 2
    assert "and more" in project.run("worklog", "1").stdout
    assert "task.not_found" in project.run("worklog", "9", code=1).stderr
    assert "worklog.empty" in project.run("worklog", "1", "--add", " ", code=1).stderr


def test_validate_carries_the_config_rules(project: Project) -> None:
    project.config(
        "phases:\n  - name: Alpha\n  - id: beta\nscopes:\n  api: {}\nverbose: true\nprojects: []\n"
    )
    project.task("1", phase="Alpha", touches=["api"])
    report = project.json("validate", code=1)
    errors = {error["code"] for error in report["errors"]}
    warnings = [(w["code"], w["message"]) for w in report["warnings"]]
    assert "config.phases.name_missing" in errors
    assert "config.phases.id_missing" in {code for code, _ in warnings}
    unknown = [message for code, message in warnings if code == "config.unknown_key"]
    assert any("verbose" in message for message in unknown)
    assert any("projects" in message for message in unknown)
    assert not any(code.startswith("task.") for code in errors)


@pytest.mark.parametrize(
    "argv",
    [["next"], ["tracks"], ["board"], ["stats"], ["graph"], ["list"]],
)
def test_a_task_dir_not_made_yet_reads_empty_with_one_note(
    project: Project, argv: list[str]
) -> None:
    """A fresh clone (git keeps no empty folder): reads show nothing, with one coded note,
    and create nothing."""
    project.write(".tasktool.yaml", "dir: nowhere\n")
    done = project.run(*argv, "--format", "json")
    assert json.loads(done.stdout) is not None
    (line,) = done.stderr.splitlines()
    assert line.endswith("[task.dir_absent]")
    assert not (project.root / "nowhere").exists()


def test_validate_and_todos_without_a_task_dir(project: Project) -> None:
    project.write(".tasktool.yaml", "dir: nowhere\n")
    report = project.json("validate")
    assert report["errors"] == []
    project.write("a.sh", "echo hi # TODO greet\n")
    assert [todo["text"] for todo in project.json("todos")] == ["greet"]
    assert "does not exist" in project.run("todos", "missing-dir", code=2).stderr
