"""The ``tasktool`` command in-process through Click's ``CliRunner``: arguments, usage errors
and coded errors, fast enough to cover every command (``tests/e2e`` runs whole processes).

The group is loaded through the installed console script's entry point, so these tests
drive exactly the command users get.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from tasktool import __version__

from .conftest import Project

#: Every stderr line: ``warning:``/``error:``, a message, a dotted code in brackets.
DIAGNOSTIC = re.compile(r"(warning|error): .+ \[[a-z_]+(\.[a-z_]+)*\]")

Invoke = Callable[..., Result]


def tasktool_group() -> click.Group:
    """The group of the installed ``tasktool`` script's module (the script itself runs
    ``run``, which ends the process: see test_oneshot.py)."""
    (script,) = entry_points(group="console_scripts", name="tasktool")
    group = import_module(script.module).main
    assert isinstance(group, click.Group)
    return group


@pytest.fixture
def tasktool(project: Project, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    """Run ``tasktool ARGS`` in the project's root; assert the exit code and that stderr
    holds only coded diagnostics, never a traceback."""
    for name in [name for name in os.environ if name.startswith("TASKTOOL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(project.home))
    monkeypatch.chdir(project.root)
    group = tasktool_group()

    def invoke(*args: str, code: int = 0) -> Result:
        result = CliRunner().invoke(group, list(args), prog_name="tasktool", catch_exceptions=False)
        assert "Traceback" not in result.stderr, result.stderr
        for line in result.stderr.splitlines():
            assert DIAGNOSTIC.fullmatch(line), f"uncoded stderr line: {line!r}"
        assert result.exit_code == code, (args, result.exit_code, result.stderr)
        return result

    invoke("init")
    return invoke


def test_version_and_help(tasktool: Invoke) -> None:
    assert tasktool("--version").stdout == f"tasktool, version {__version__}\n"
    assert "Manage tasks kept as Markdown files" in tasktool("--help").stdout
    assert tasktool("-h").stdout == tasktool("--help").stdout


def command_names() -> list[str]:
    group = tasktool_group()
    return group.list_commands(click.Context(group))  # commands load lazily


def test_the_commands_are_listed() -> None:
    assert {"init", "add", "list", "get", "set", "rm", "validate"} <= set(command_names())


@pytest.mark.parametrize("command", command_names())
def test_every_command_has_help(tasktool: Invoke, command: str) -> None:
    helped = tasktool(command, "--help").stdout
    assert helped.startswith(f"Usage: tasktool {command} ")
    group = tasktool_group()
    found = group.get_command(click.Context(group), command)
    assert found is not None
    assert found.get_short_help_str(limit=200).split()[0] in helped


@pytest.mark.parametrize(
    ("args", "named", "code"),
    [
        (("nope",), "No such command 'nope'", "usage"),
        (("set",), "Missing argument 'ID'", "usage"),
        (("list", "--format", "xml"), "'--format'", "usage"),
        # a bad filter is a usage error that keeps its catalogued filter.* code
        (("list", "--filter", "priority>>high"), "--filter", "filter.value"),
        (("list", "--no-such-option"), "--no-such-option", "usage"),
        (("--worktree-scope", "shared", "list"), "--worktree-scope", "usage"),
        (("add",), "Missing argument", "usage"),
        # --all-projects on a command that does not aggregate: refused, not ignored
        (("--all-projects", "add", "X"), "--all-projects works with", "usage"),
        (("--all-projects", "validate"), "not validate", "usage"),
        (("--all-projects", "tags"), "not tags", "usage"),
    ],
)
def test_usage_errors_exit_2_with_one_coded_line(
    tasktool: Invoke, args: tuple[str, ...], named: str, code: str
) -> None:
    failed = tasktool(*args, code=2)
    assert failed.stdout == ""
    (line,) = failed.stderr.splitlines()
    assert named in line
    assert line.endswith(f"[{code}]")


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("get", "999"), "task.not_found"),
        (("set", "999", "--status", "completed"), "task.not_found"),
        (("rm", "999"), "task.not_found"),
        (("add", "X", "--priority", "bogus"), "task.invalid_priority"),
        (("add", ""), "task.invalid_title"),
        (("add", "bad\x1b[31m"), "task.invalid_text"),
        (("add", "X", "--owner", "a\x00b"), "task.invalid_text"),
        (("add", "X", "--tag", "t\x07"), "task.invalid_text"),
        (("init",), "config.exists"),
    ],
)
def test_errors_exit_1_with_their_code(
    tasktool: Invoke, project: Project, args: tuple[str, ...], code: str
) -> None:
    before = sorted(path.name for path in (project.root / "tasks").iterdir())
    failed = tasktool(*args, code=1)
    (line,) = failed.stderr.splitlines()
    assert line.startswith("error: ")
    assert line.endswith(f"[{code}]")
    assert sorted(path.name for path in (project.root / "tasks").iterdir()) == before


def test_arguments_reach_the_task_file(tasktool: Invoke, project: Project) -> None:
    tasktool("add", "Write docs", "--priority", "high", "--tag", "docs,api")
    (path,) = (project.root / "tasks").glob("001-*.md")
    text = path.read_text()
    assert "priority: high" in text
    assert re.search(r"tags: \[docs, api\]|tags:\n\s+- docs\n\s+- api", text), text
    tasktool("set", "001", "--status", "completed")
    assert "status: completed" in path.read_text()
    listed = tasktool("list", "--format", "json", "--filter", "status=completed").stdout
    assert '"id": "001"' in listed


def test_global_task_dir_option(tasktool: Invoke, project: Project) -> None:
    (project.root / "elsewhere").mkdir()
    tasktool("--task-dir", "elsewhere", "add", "Placed")
    assert [p.name for p in (project.root / "elsewhere").glob("*.md")] == ["001-placed.md"]
    assert not list(Path(project.root / "tasks").glob("*.md"))


def test_taskmd_option_names(tasktool: Invoke, project: Project) -> None:
    """--tags beside --tag on add, --tag/--dep adding on set (--tags replacing), a bare
    number for an id, --depends-on as taskmd spells it, and list's --status/--priority/--tag
    shortcuts for its filters."""
    tasktool("add", "First", "--priority", "high")
    tasktool("add", "Second", "--tags", "a,b", "--depends-on", "001", "--status", "in-progress")
    (path,) = (project.root / "tasks").glob("002-*.md")
    text = path.read_text()
    assert re.search(r"tags: \[a, b\]", text), text
    assert re.search(r"dependencies: \['?001'?\]", text), text
    tasktool("set", "002", "--tag", "c", "--dep", "1")  # the singular adds, as on add
    assert re.search(r"tags: \[a, b, c\]", path.read_text())
    tasktool("set", "002", "--tags", "c")  # the plural replaces
    assert re.search(r"tags: \[c\]", path.read_text())

    def ids(*args: str) -> list[str]:
        return re.findall(r'"id": "(\d+)"', tasktool("list", "--format", "json", *args).stdout)

    assert ids("--status", "in-progress") == ["002"]
    assert ids("--status", "pending", "--status", "in-progress") == ["001", "002"]
    assert ids("--priority", "high,low") == ["001"]
    assert ids("--tag", "c") == ids("--filter", "tags=c") == ["002"]
    assert ids("--status", "pending", "--priority", "medium") == []


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("tasktool list --status in", ["in-progress", "in-review"]),
        ("tasktool list --status pending,c", ["pending,cancelled", "pending,completed"]),
        ("tasktool add X --priority h", ["high"]),
        ("tasktool set 1 --status bl", ["blocked"]),
        ("tasktool list --priority ", ["low", "medium", "high", "critical"]),
    ],
)
def test_status_and_priority_values_complete(
    tasktool: Invoke, words: str, expected: list[str]
) -> None:
    env = {
        "_TASKTOOL_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split(" ")) - 1),
    }
    done = CliRunner().invoke(tasktool_group(), [], prog_name="tasktool", env=env)
    assert done.exit_code == 0, done.output
    assert [line.split(",", 1)[1] for line in done.stdout.splitlines()] == expected


def test_get_finds_a_padded_id_when_exactly_one_matches(tasktool: Invoke, project: Project) -> None:
    tasktool("add", "First")
    assert '"id": "001"' in tasktool("get", "1", "--format", "json").stdout
    assert '"id": "001"' in tasktool("get", "0001", "--format", "json").stdout
    project.write("tasks/01-other.md", "---\nid: '01'\ntitle: Other\n---\n")
    failed = tasktool("get", "1", code=1)  # 001 or 01: a guess, so not found
    assert failed.stderr.endswith("[task.not_found]\n")
    assert '"id": "01"' in tasktool("get", "01", "--format", "json").stdout


def test_todos_reads_source_files_not_the_task_directory(
    tasktool: Invoke, project: Project
) -> None:
    """A marker in a task's body (Markdown comments count elsewhere) is not a source
    TODO: ``todos`` neither lists nor reads the task directory."""
    project.write("tasks/1-a.md", "---\nid: '1'\ntitle: A\n---\n<!-- TODO: in a task -->\n")
    project.write("docs/notes.md", "<!-- TODO: in the docs -->\n")
    project.write("src/app.py", "x = 1  # FIXME: in the source\n")
    found = json.loads(tasktool("todos", "--format", "json").stdout)
    assert sorted((item["file"], item["text"]) for item in found) == [
        ("docs/notes.md", "in the docs"),
        ("src/app.py", "in the source"),
    ]
