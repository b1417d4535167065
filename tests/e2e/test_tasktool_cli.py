"""Whole-process tests of the ``tasktool`` CLI in temporary git repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from .tasktool_process import git_repository, run_tasktool, tasktool_env

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repository(tmp_path)


@pytest.fixture
def tt(repo: Path) -> Run:
    env = tasktool_env(repo.parent / "home")

    def run(*args: str, cwd: Path | None = None, check: bool = True, **extra: str) -> Any:
        done = run_tasktool(args, cwd=cwd or repo, env={**env, **extra})
        if check and done.returncode != 0:
            raise AssertionError(f"exit {done.returncode}: {done.stderr}")
        return done

    return run


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


def test_init_add_list_get_set_flow(repo: Path, tt: Run) -> None:
    tt("init")
    assert (repo / ".tasktool.yaml").read_text().startswith("# tasktool configuration")
    assert (
        as_json(
            tt(
                "add",
                "Design the API",
                "--priority",
                "high",
                "--tag",
                "api,design",
                "--format",
                "json",
            )
        )["id"]
        == "001"
    )
    tt("add", "Build it", "--dep", "001", "--effort", "large", "--group", "backend")
    listed = as_json(tt("list", "--format", "json"))
    assert [task["id"] for task in listed] == ["001", "002"]
    required = {
        "id",
        "title",
        "status",
        "priority",
        "effort",
        "dependencies",
        "tags",
        "phase",
        "touches",
        "owner",
        "parent",
        "file_path",
    }
    assert required <= set(listed[0])
    assert listed[1]["file_path"] == str(repo / "tasks" / "backend" / "002-build-it.md")
    detail = as_json(tt("get", "001", "--format", "json"))
    assert detail["dependents"] == ["002"]
    assert detail["tags"] == ["api", "design"]
    done = as_json(tt("set", "001", "--done", "--format", "json"))
    assert done["status"] == "completed"
    assert done["completed_at"]
    assert as_json(tt("get", "002", "--format", "json"))["blocked"] is False
    plain = tt("list").stdout.splitlines()
    assert plain[0].split() == ["ID", "STATUS", "PRIORITY", "EFFORT", "PHASE", "TITLE"]
    assert plain[1].split()[:3] == ["001", "completed", "high"]


def test_subdirectory_and_task_dir_flag(repo: Path, tt: Run) -> None:
    (repo / ".tasktool.yaml").write_text("dir: tasks\n")
    (repo / "tasks").mkdir()
    (repo / "other").mkdir()
    tt("add", "Root task")
    deep = repo / "src" / "deep"
    deep.mkdir(parents=True)
    assert [t["id"] for t in as_json(tt("list", "--format", "json", cwd=deep))] == ["001"]
    assert as_json(tt("-d", "other", "list", "--format", "json")) == []
    env_ignored = tt("list", "--format", "json", TASKTOOL_TASK_DIR=str(repo / "other"))
    assert len(as_json(env_ignored)) == 1  # the file has no task-dir key
    assert as_json(tt("list", "--format", "json", TASKTOOL_DIR=str(repo / "other"))) == []


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def task(repo: Path, task_id: str, **fields: str) -> Path:
    lines = "".join(f"{key}: {value}\n" for key, value in fields.items())
    return write(repo / f"{task_id}-t.md", f"---\nid: '{task_id}'\ntitle: T{task_id}\n{lines}---\n")


def test_filters_sort_group_limit_columns(repo: Path, tt: Run) -> None:
    task(repo, "1", priority="low", effort="large", tags="[a]")
    task(repo, "2", priority="critical", effort="small", tags="[a, b]")
    task(repo, "10", priority="high", effort="medium", status="in-progress")
    task(repo, "3")

    def ids(*args: str) -> list[str]:
        return [t["id"] for t in as_json(tt("list", "--format", "json", *args))]

    assert ids() == ["1", "2", "3", "10"]
    assert ids("-f", "priority>=high") == ["2", "10"]
    assert ids("-f", "effort<medium") == ["2"]
    assert ids("-f", "tags=b") == ["2"]
    assert ids("-f", "status=pending,in-progress", "-f", "priority!=low") == ["2", "3", "10"]
    assert ids("-f", "priority=") == ["3"]
    assert ids("--sort", "effort") == ["2", "10", "1", "3"]  # vocabulary order, unset last
    assert ids("--sort", "-priority", "--limit", "2") == ["2", "10"]
    grouped = as_json(tt("list", "--format", "json", "--group-by", "tags", "--columns", "id"))
    assert grouped == [
        {"group": "a", "tasks": [{"id": "1"}, {"id": "2"}]},
        {"group": "b", "tasks": [{"id": "2"}]},
        {"group": None, "tasks": [{"id": "3"}, {"id": "10"}]},
    ]
    for bad in (
        ["-f", "colour=red"],
        ["-f", "title>x"],
        ["--sort", "nope"],
        ["--columns", "x"],
        ["-f", "priority>=urgent"],
    ):
        failed = tt("list", *bad, check=False)
        assert failed.returncode == 2, bad
        assert "Traceback" not in failed.stderr


def test_yaml_and_plain_table_output(repo: Path, tt: Run) -> None:
    task(repo, "1", priority="low")
    assert "- id: '1'\n  title: T1\n" in tt("list", "--format", "yaml").stdout
    assert tt("--format", "yaml", "get", "1").stdout.startswith("id: '1'\n")
    plain = tt("get", "1").stdout
    assert "id:" in plain
    assert "\x1b[" not in plain


def test_broken_config_is_one_line_exit_1(repo: Path, tt: Run) -> None:
    write(repo / ".tasktool.yaml", "web:\n  port: [8080\n  host: x\n")
    failed = tt("list", check=False)
    assert failed.returncode == 1
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {repo / '.tasktool.yaml'}:3:")
    assert lines[0].endswith("[config.syntax]")


def test_rejected_config_refuses_commands(repo: Path, tt: Run) -> None:
    write(repo / ".tasktool.yaml", "effort: [small, small]\n")
    failed = tt("list", check=False)
    assert failed.returncode == 1
    assert "[config.effort.duplicate]" in failed.stderr


def test_broken_task_file_is_warned_not_dropped(repo: Path, tt: Run) -> None:
    task(repo, "1")
    write(repo / "2-bad.md", "---\nid: 2\ntitle: [oops\n---\n")
    done = tt("list", "--format", "json")
    assert [t["id"] for t in as_json(done)] == ["1"]
    assert "2-bad.md" in done.stderr
    assert "warning:" in done.stderr
    assert tt("-q", "list").stderr == ""
    assert tt("list", TASKTOOL_QUIET="1").stderr == ""


def test_config_show_sources(repo: Path, tt: Run) -> None:
    write(repo / ".tasktool.yaml", "web:\n  port: 9000\nid:\n  strategy: prefixed\n")
    shown = as_json(
        tt(
            "--verbose",
            "config",
            "show",
            "--format",
            "json",
            TASKTOOL_WEB_HOST="0.0.0.0",
        )
    )
    assert shown["file"] == str(repo / ".tasktool.yaml")
    settings = shown["settings"]
    assert settings["web.port"] == {"value": 9000, "source": "file"}
    assert settings["web.host"] == {"value": "0.0.0.0", "source": "env"}
    assert settings["verbose"] == {"value": True, "source": "flag"}
    assert settings["worktree_scope"] == {"value": "unified", "source": "default"}
    assert settings["id.strategy"] == {"value": "prefixed", "source": "file"}
    assert settings["next.unphased"] == {"value": "current", "source": "default"}
    assert settings["effort"]["value"] == ["small", "medium", "large"]
    table = tt("config", "show").stdout
    assert "web.port" in table
    assert "file" in table
    (repo / ".tasktool.yaml").unlink()
    bare = as_json(tt("config", "show", "--format", "json"))
    assert bare["file"] is None
    assert {value["source"] for value in bare["settings"].values()} == {"default"}


def test_next_id_strategies(repo: Path, tt: Run) -> None:
    task(repo, "007")
    assert tt("next-id").stdout == "008\n"
    assert as_json(tt("next-id", "--format", "json")) == {"id": "008", "strategy": "sequential"}
    write(repo / ".tasktool.yaml", "id:\n  strategy: prefixed\n  prefix: T-\n  padding: 2\n")
    assert tt("next-id").stdout == "T-01\n"
    assert as_json(tt("next-id", "--format", "json")) == {"id": "T-01", "strategy": "prefixed"}
    assert tt("next-id", TASKTOOL_ID_PREFIX="T").stdout == "T01\n"  # the prefix is literal
    write(repo / ".tasktool.yaml", "id:\n  strategy: random\n  length: 9\n")
    value = tt("next-id").stdout.strip()
    assert len(value) == 9
    assert value.isalnum()
    shown = as_json(tt("next-id", "--format", "json"))
    assert shown["strategy"] == "random"
    assert len(shown["id"]) == 9
    write(repo / ".tasktool.yaml", "id:\n  strategy: ulid\n")
    assert len(tt("next-id").stdout.strip()) == 6
    shown = as_json(tt("next-id", "--format", "json", TASKTOOL_ID_LENGTH="26"))
    assert shown["strategy"] == "ulid"
    assert len(shown["id"]) == 26
    assert shown["id"] == shown["id"].lower()
    write(repo / ".tasktool.yaml", "id:\n  strategy: ulid\nid:\n  strategy: random\n")
    assert tt("next-id").stdout == "008\n"  # two id blocks: sequential


def test_rm_and_archive(repo: Path, tt: Run) -> None:
    task(repo, "1", status="completed")
    task(repo, "2", dependencies="['1']")
    log = write(
        repo / ".worklogs" / "1.md",
        "## 2025-01-01T10:00:00Z\nDid it.\n## Notes (part of the entry)\n"
        "## 2025-01-02T09:00:00Z\nChecked.\n",
    )
    refused = tt("rm", "1", check=False)
    assert refused.returncode == 1
    assert "referenced by 2" in refused.stderr
    tt("archive", "1")
    assert [t["id"] for t in as_json(tt("list", "--format", "json"))] == ["2"]
    summary = as_json(tt("get", "1", "--format", "json"))["worklog"]
    assert (summary["entries"], summary["last"]) == (2, "2025-01-02T09:00:00Z")  # as worklog reads
    assert len(as_json(tt("worklog", "1", "--format", "json"))["entries"]) == 2
    assert tt("archive", "2", check=False).returncode == 1  # unresolved
    tt("rm", "1", "--force")
    assert not log.exists()
    assert not (repo / "archive" / "1-t.md").exists()


def test_deduplicate(repo: Path, tt: Run) -> None:
    task(repo, "1", created_at="2024-01-01")
    write(
        repo / "b" / "1-other.md",
        "---\nid: '1'\ntitle: Other\ncreated_at: 2024-02-01\n# keep\n---\nbody\n",
    )
    write(repo / "b" / "2-child.md", "---\nid: '2'\ntitle: Child\ndependencies: ['1']\n---\n")
    plan = as_json(tt("deduplicate", "--dry-run", "--format", "json"))
    assert plan == [
        {
            "old_id": "1",
            "new_id": "003",
            "file_path": str(repo / "b" / "1-other.md"),
            "kept_by": str(repo / "1-t.md"),
        }
    ]
    assert (repo / "b" / "1-other.md").exists()
    tt("deduplicate")
    moved = repo / "b" / "003-other.md"
    assert (
        moved.read_text()
        == "---\nid: '003'\ntitle: Other\ncreated_at: 2024-02-01\n# keep\n---\nbody\n"
    )
    assert tt("deduplicate").stdout == "no duplicate ids\n"


def test_usage_errors_exit_2(tt: Run) -> None:
    for args in (
        ["set"],
        ["set", "1"],
        ["list", "--format", "xml"],
        ["nosuch"],
        ["archive"],
        ["--worktree-scope", "shared", "list"],  # unified or isolated only
    ):
        failed = tt(*args, check=False)
        assert failed.returncode == 2, args
        assert failed.stderr.count("\n") == 1, failed.stderr  # one line, not click's three
        assert failed.stderr.startswith("error: ")
        assert failed.stderr.endswith("--help') [usage]\n")


def test_filter_errors_keep_their_code_and_exit_2(tt: Run) -> None:
    """A bad --filter is a usage error (exit 2) that still names its catalogued code."""
    for args, code in (
        (["list", "--filter", "colour=red"], "filter.field"),
        (["list", "--filter", "nonsense"], "filter.syntax"),
        (["next", "--filter", "title>a"], "filter.comparison"),
        (["list", "--group-by", "colour"], "filter.field"),
    ):
        failed = tt(*args, check=False)
        assert failed.returncode == 2, args
        assert failed.stderr.startswith(f"error: Invalid value for {args[1]}: ")
        assert failed.stderr.endswith(f"tasktool {args[0]} --help') [{code}]\n")


def test_coded_error_line_and_status(repo: Path, tt: Run) -> None:
    """``error: <message> [<code>]``, exit status from the catalogue."""
    task(repo, "1")
    missing = tt("get", "NOPE", check=False)
    assert (missing.returncode, missing.stderr) == (
        1,
        "error: no task with id 'NOPE' [task.not_found]\n",
    )


def test_errors_are_one_line(repo: Path, tt: Run) -> None:
    task(repo, "1")
    for args, code in (
        (["get", "9"], "task.not_found"),
        (["set", "1", "--effort", "huge"], "task.invalid_effort"),
        (["set", "1", "--status", "finished"], "task.invalid_status"),
        (["-d", "1-t.md", "list"], "task.dir_missing"),
    ):
        failed = tt(*args, check=False)
        assert failed.returncode == 1, args
        assert failed.stderr.count("\n") == 1
        assert failed.stderr.endswith(f"[{code}]\n")


def test_concurrent_set_loses_no_update(repo: Path, tt: Run) -> None:
    path = task(repo, "1", tags="[]")
    tags = [f"t{i}" for i in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda tag: tt("set", "1", "--add-tag", tag), tags))
    assert all(result.returncode == 0 for result in results)
    final = as_json(tt("get", "1", "--format", "json"))
    assert sorted(final["tags"]) == sorted(tags)
    assert path.read_text().startswith("---\nid: '1'\ntitle: T1\n")


def test_verbose_quiet_and_config_warnings(repo: Path, tt: Run) -> None:
    write(repo / ".tasktool.yaml", "verbose: true\ncolour: red\n")
    task(repo, "1")
    shown = tt("config", "show", "--format", "yaml")
    assert "file: " + str(repo / ".tasktool.yaml") in shown.stdout
    assert "web.port:\n    value: 8080\n    source: default\n" in shown.stdout
    assert "unknown config key 'colour' [config.unknown_key]" in shown.stderr
    assert "config: " in tt("list").stderr  # verbose from the file
    assert tt("list", TASKTOOL_VERBOSE="0").stderr == ""  # env over file
    assert tt("-q", "config", "show").stderr == ""


def test_init_refuses_to_overwrite(repo: Path, tt: Run) -> None:
    tt("init", "--dir", "work")
    assert (repo / "work").is_dir()
    again = tt("init", check=False)
    assert again.returncode == 1
    assert "[config.exists]" in again.stderr
    tt("init", "--force")


def test_home_file_is_a_fallback_only(repo: Path, tt: Run) -> None:
    home_config = repo.parent / "home" / ".tasktool.yaml"
    home_config.write_text(f"dir: {repo / 'home-tasks'}\nweb:\n  port: 7000\n")
    (repo / "home-tasks").mkdir()
    task(repo / "home-tasks", "5")
    shown = as_json(tt("config", "show", "--format", "json"))
    assert shown["file"] == str(home_config)
    assert [t["id"] for t in as_json(tt("list", "--format", "json"))] == ["5"]
    write(repo / ".tasktool.yaml", "workflow: solo\n")
    shown = as_json(tt("config", "show", "--format", "json"))
    assert shown["file"] == str(repo / ".tasktool.yaml")
    assert shown["settings"]["web.port"] == {"value": 8080, "source": "default"}
    assert shown["settings"]["dir"] == {"value": str(repo), "source": "default"}


def test_concurrent_adds_get_distinct_ids(repo: Path, tt: Run) -> None:
    titles = [f"Task {i}" for i in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        added = list(pool.map(lambda title: as_json(tt("add", title, "--format", "json")), titles))
    assert sorted(task["id"] for task in added) == [f"{i:03d}" for i in range(1, 7)]
    assert len(as_json(tt("list", "--format", "json"))) == 6


def test_explicit_dates_win_over_the_stamp(repo: Path, tt: Run) -> None:
    path = task(repo, "1")
    done = as_json(tt("set", "1", "--done", "--completed-at", "2024-12-31", "--format", "json"))
    assert done["completed_at"] == "2024-12-31"
    reopened = as_json(tt("set", "1", "--status", "pending", "--format", "json"))
    assert reopened["completed_at"] is None
    before = path.read_bytes()
    refused = tt("set", "1", "--created-at", "soon", check=False)
    assert refused.returncode == 1
    assert "[task.invalid_date]" in refused.stderr
    assert path.read_bytes() == before


def test_archive_all_dry_run_and_listing_archived(repo: Path, tt: Run) -> None:
    task(repo, "1", status="completed")
    task(repo, "2", status="cancelled")
    task(repo, "3")
    dry = tt("archive", "--all", "--dry-run").stdout
    assert dry.count("would archive") == 2
    assert (repo / "1-t.md").exists()
    tt("archive", "--all")
    assert [t["id"] for t in as_json(tt("list", "--format", "json"))] == ["3"]
    listed = as_json(tt("list", "--archived", "--format", "json"))
    assert [(t["id"], t["archived"]) for t in listed] == [("1", True), ("2", True), ("3", False)]


def test_add_with_id_body_and_set_body(repo: Path, tt: Run) -> None:
    added = as_json(tt("add", "Custom", "--id", "X-1", "--body", "First line", "--format", "json"))
    assert added["file_path"] == str(repo / "X-1-custom.md")
    taken = tt("add", "Again", "--id", "X-1", check=False)
    assert taken.returncode == 1
    assert "[task.exists]" in taken.stderr
    assert sorted(path.name for path in repo.glob("X-1*")) == ["X-1-custom.md"]
    tt("set", "X-1", "--body", "Second\n")
    detail = as_json(tt("get", "X-1", "--format", "json"))
    assert detail["body"] == "Second\n"
    text = (repo / "X-1-custom.md").read_text()
    assert text.endswith("---\nSecond\n")


def test_list_read_path_stays_light(repo: Path, tt: Run) -> None:
    task(repo, "1")
    tt("list")  # warm the caches
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tasktool", "list", "--format", "json"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "HOME": str(repo.parent / "home")},
    )
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    heavy = {
        "ruamel.yaml",
        "rich",
        "git",
        "starlette",
        "mcp",
        "yaml",
        "tasktool.planning.writing.writes",
    }
    assert not heavy & imported
    # only get and the planning commands need these
    assert not {"tasktool.planning.graph", "tasktool.planning.writing.worklog"} & imported


@pytest.mark.parametrize("command", ["stats", "list", "next", "board", "tags", "graph"])
def test_a_reader_that_closed_the_pipe_ends_the_command_quietly_with_0(
    repo: Path, command: str
) -> None:
    """``tasktool stats | head -1`` exits 0, always: the reader is gone before the command
    writes (a pipe whose read end is closed), the worst case of the race."""
    for number in range(1, 40):
        task(repo, str(number))
    read, write_end = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tasktool", command],
            cwd=repo,
            env=tasktool_env(repo.parent / "home"),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")
