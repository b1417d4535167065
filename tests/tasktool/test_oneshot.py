"""The one-shot process (tasktool.cli.oneshot): a read command run as its own process ends
with os._exit once its output is flushed. That is safe only while nothing is left for the
interpreter's exit to do: no atexit handler, no thread still running. These tests run the
real entry point in a child process, with ``os._exit`` watched, and check exactly that,
plus that the output and exit status are those of the same command run in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tasktool.cli.facts import facts_of
from tasktool.cli.main import main
from tests.tasktool.conftest import Project, TaskWriter

#: The entry point with os._exit watched: it reports the atexit handlers and the threads
#: alive at that moment on stderr, then exits. ``ended`` is absent when os._exit never ran.
WATCHED = """
import atexit, os, sys, threading
real_exit = os._exit
def watched(status):
    alive = [thread.name for thread in threading.enumerate()]
    handlers = getattr(atexit, "_ncallbacks", lambda: "unknown")()
    sys.stderr.write(f"\\nended {handlers} {alive}\\n")
    sys.stderr.flush()
    real_exit(status)
os._exit = watched
from tasktool.cli.main import run
run()
"""


def _run(project: Project, *argv: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    script = prelude + WATCHED
    return subprocess.run(
        [sys.executable, "-c", script, "--task-dir", str(project.root / "tasks"), *argv],
        cwd=project.root,
        env={**project.env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def _in_process(project: Project, *argv: str) -> tuple[int, str]:
    done = CliRunner().invoke(
        main, ["--task-dir", str(project.root / "tasks"), *argv], env=project.env
    )
    return done.exit_code, done.stdout


@pytest.fixture
def tasks(project: Project, write_task: TaskWriter) -> Project:
    for number in range(1, 301):
        write_task(
            f"{number:03d}",
            f"task {number}",
            where="tasks/backend",
            status="completed" if number % 3 else "pending",
            dependencies=[f"{number - 1:03d}"] if number > 1 else [],
            body="some text\n" * 20,
        )
    write_task("900", "depends on nothing known", where="tasks", dependencies=["777"])
    past = time.time() - 3600  # settled files: the second run finds them all cached
    for path in (project.root / "tasks").rglob("*.md"):
        os.utime(path, (past, past))
    return project


@pytest.mark.parametrize(
    "argv",
    [
        ("list", "--format", "json"),
        ("list",),
        ("get", "002", "--format", "json"),
        ("get", "404"),  # not found: exit 1
        ("next", "--format", "json"),
        ("board",),
        ("stats", "--format", "json"),
        ("tracks",),
        ("graph", "--format", "json"),
        ("validate",),  # a missing dependency: exit 1
        ("tags",),
    ],
)
def test_a_read_command_ends_at_once_with_its_output_and_status(
    tasks: Project, argv: tuple[str, ...]
) -> None:
    assert facts_of(main.get_command(click.Context(main), argv[0])).reads
    # The first run parses the files (on a slow disk with reader threads, whose import
    # registers logging's atexit handler: then it exits the usual way) and writes the
    # cache; the second reads no file.
    for _run_number in range(2):
        done = _run(tasks, *argv)
        assert (done.returncode, done.stdout) == _in_process(tasks, *argv)
    assert done.stderr.endswith("\nended 0 ['MainThread']\n"), done.stderr
    if argv[-1] == "json" and argv[0] == "list":
        assert len(json.loads(done.stdout)) == 301


def test_a_long_output_into_a_pipe_is_complete(tasks: Project) -> None:
    """Many pages of output through a pipe: all of it arrives before the process ends."""
    done = _run(tasks, "list", "--format", "json", "--columns", "id,title,file_path")
    assert [item["id"] for item in json.loads(done.stdout)][-2:] == ["300", "900"]


def test_a_writer_exits_the_usual_way(tasks: Project) -> None:
    done = _run(tasks, "set", "002", "--status", "in-progress")
    assert done.returncode == 0, done.stderr
    assert "ended" not in done.stderr
    assert _in_process(tasks, "get", "002", "--format", "json")[1].count('"in-progress"') == 1


def test_an_atexit_handler_keeps_the_usual_exit(tasks: Project) -> None:
    """Coverage measuring subprocesses (or a sitecustomize) registers an atexit handler:
    then the process exits the usual way and the handler runs."""
    prelude = "import atexit, sys\natexit.register(lambda: sys.stderr.write('handler ran'))\n"
    done = _run(tasks, "list", "--format", "json", prelude=prelude)
    assert (done.returncode, done.stdout) == _in_process(tasks, "list", "--format", "json")
    assert "ended" not in done.stderr
    assert done.stderr.endswith("handler ran")


def test_an_interpreter_that_cannot_count_atexit_handlers_keeps_the_usual_exit(
    tasks: Project,
) -> None:
    """``atexit._ncallbacks`` is CPython's: without it the handlers are unknown, so the
    process exits the usual way."""
    done = _run(
        tasks, "list", "--format", "json", prelude="import atexit\ndel atexit._ncallbacks\n"
    )
    assert (done.returncode, done.stdout) == _in_process(tasks, "list", "--format", "json")
    assert "ended" not in done.stderr


def test_the_script_and_python_m_run_the_process_entry_point() -> None:
    package = Path(__file__).parents[2] / "packages" / "tasktool"
    declared = tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))
    assert declared["project"]["scripts"]["tasktool"] == "tasktool.cli.main:run"
    dunder_main = (package / "src" / "tasktool" / "__main__.py").read_text(encoding="utf-8")
    assert dunder_main.rstrip().endswith("run()")
