"""``tasktool web start`` and ``web export`` as whole processes."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.tasktool_process import git_repository, run_tasktool, serving, tasktool_env
from tests.tasktool.conftest import Project
from tests.tasktool.web.conftest import seed_tasks


@pytest.fixture
def seeded(tmp_path: Path) -> Project:
    root = git_repository(tmp_path)
    project = Project(root, tmp_path / "home")
    seed_tasks(project)
    return project


def _env(project: Project, **extra: str) -> dict[str, str]:
    return {**tasktool_env(project.home), **extra}


@pytest.fixture
def started(seeded: Project) -> Iterator[tuple[subprocess.Popen[str], str]]:
    argv = [sys.executable, "-m", "tasktool", "web", "start"]
    with serving(argv, cwd=seeded.root, env=_env(seeded, TASKTOOL_WEB_PORT="0")) as started:
        yield started


def test_web_start_serves_on_loopback_and_stops_on_sigint(
    started: tuple[subprocess.Popen[str], str],
) -> None:
    """SIGINT stops the server promptly, even with an event stream open (it is ended)."""
    process, url = started
    assert httpx.get(url + "api/tasks", timeout=10).json()[0]["id"] == "001"
    with httpx.stream("GET", url + "api/events", timeout=10) as stream:
        lines = stream.iter_lines()
        assert next(lines) == "retry: 2000"
        assert next(lines) == "event: ready"
        process.send_signal(signal.SIGINT)
        rest = list(lines)  # ends when the server closes the stream
    assert all(not line.startswith("event: change") for line in rest)
    assert process.wait(15) == 0
    assert process.stderr is not None
    assert "WARNING" not in process.stderr.read()  # loopback: no exposure banner


def test_open_starts_the_browser_at_the_dashboard(seeded: Project, tmp_path: Path) -> None:
    opened = tmp_path / "opened"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o755)
    process = subprocess.Popen(
        [sys.executable, "-m", "tasktool", "web", "start", "--open", "--port", "0"],
        cwd=seeded.root,
        env=_env(seeded, BROWSER=str(browser)),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stderr is not None
        url = re.search(r"http://\S+/", process.stderr.readline())
        assert url
        deadline = time.monotonic() + 15
        while not (opened.exists() and opened.read_text().strip()):
            assert time.monotonic() < deadline, "the browser was not opened"
            time.sleep(0.05)
        assert opened.read_text().strip() == url.group(0)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(15)


@pytest.mark.parametrize("command", [("web", "start"), ("web", "export", "-o", "site")])
def test_bad_next_section_refuses_web_start_and_export(
    seeded: Project, command: tuple[str, ...]
) -> None:
    seeded.config("dir: tasks\nnext: last\n")
    done = run_tasktool(command, cwd=seeded.root, env=_env(seeded, TASKTOOL_WEB_PORT="0"))
    assert done.returncode == 1
    assert "[config.next." in done.stderr
    assert not (seeded.root / "site").exists()


#: Each module a command imports lazily, a command needing it, and the install line it names.
LAZY_IMPORTS = [
    ("starlette", ("web", "start"), "'./packages/tasktool[web]'"),
    ("hypercorn", ("web", "start"), "'./packages/tasktool[web]'"),
    ("watchfiles", ("web", "start"), "'./packages/tasktool[web]'"),
    ("mcp", ("mcp",), "'./packages/tasktool[mcp]'"),
    ("httpx", ("sync",), "'./packages/tasktool'"),
    ("click.shell_completion", ("completion", "bash"), "'./packages/tasktool'"),
]


@pytest.mark.parametrize(("module", "command", "install"), LAZY_IMPORTS)
def test_a_missing_lazy_import_is_a_coded_error_at_once(
    seeded: Project, module: str, command: tuple[str, ...], install: str
) -> None:
    """A partial install (starlette and hypercorn from another package, no watchfiles)
    stops at the start with the install line, instead of serving a port that never
    answers: the run ends well within the bound (a hang is killed there and fails)."""
    hidden = f"import sys; sys.modules[{module!r}] = None; from tasktool.cli.main import run; run()"
    done = subprocess.run(
        [sys.executable, "-c", hidden, *command],
        cwd=seeded.root,
        env=_env(seeded, TASKTOOL_WEB_PORT="0"),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.endswith("[tasktool.missing_extra]"), line
    assert f"pip install {install}" in line
    assert module in line


def test_export_writes_pages_and_json_and_deletes_nothing(seeded: Project) -> None:
    site = seeded.root / "site"
    site.mkdir()
    (site / "keep.txt").write_text("mine")
    done = run_tasktool(("web", "export", "-o", "site"), cwd=seeded.root, env=_env(seeded))
    assert done.returncode == 0, done.stderr
    assert (site / "keep.txt").read_text() == "mine"
    expected = (
        "index.html", "tasks/002.html", "board-owner.html", "graph.html", "next.html",
        "validate.html", "static/app.js", "api/tasks.json", "api/tasks/002.json",
    )  # fmt: skip
    for name in expected:
        assert (site / name).is_file(), name
    cli_next = run_tasktool(("next", "--format", "json"), cwd=seeded.root, env=_env(seeded))
    assert json.loads((site / "api/next.json").read_text()) == json.loads(cli_next.stdout)
    index = (site / "index.html").read_text()
    assert 'href="tasks/002.html"' in index
    assert "http://" not in index
    assert "https://" not in index
    detail = (site / "tasks/002.html").read_text()
    assert 'href="../static/app.css"' in detail
    assert "data-edit-form" not in detail


def test_export_into_a_file_is_refused(seeded: Project) -> None:
    target: Path = seeded.root / "occupied"
    target.write_text("a file")
    done = run_tasktool(("web", "export", "-o", "occupied"), cwd=seeded.root, env=_env(seeded))
    assert done.returncode in {1, 2}
    assert target.read_text() == "a file"


def test_export_never_writes_through_a_link_out_of_dir(seeded: Project, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    site = seeded.root / "site"
    site.mkdir()
    (site / "tasks").symlink_to(outside, target_is_directory=True)
    done = run_tasktool(("web", "export", "-o", "site"), cwd=seeded.root, env=_env(seeded))
    assert done.returncode == 1
    assert "[web.export]" in done.stderr
    assert list(outside.iterdir()) == []


def test_a_taken_port_is_a_coded_error(seeded: Project) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_tasktool(
            ("web", "start", "--port", str(port)), cwd=seeded.root, env=_env(seeded)
        )
    assert done.returncode == 1
    assert "[web.bind_failed]" in done.stderr


def test_quiet_silences_the_warnings_of_web_start_and_export(seeded: Project) -> None:
    seeded.write("tasks/009-broken.md", "---\nid: '009'\nstatus: [pending\n---\n")
    loud = run_tasktool(("web", "export", "-o", "site"), cwd=seeded.root, env=_env(seeded))
    assert "[task.yaml]" in loud.stderr
    quiet = run_tasktool(("-q", "web", "export", "-o", "site"), cwd=seeded.root, env=_env(seeded))
    assert quiet.returncode == 0
    assert "warning" not in quiet.stderr
    process = subprocess.Popen(
        [sys.executable, "-m", "tasktool", "-q", "web", "start", "--port", "0"],
        cwd=seeded.root,
        env=_env(seeded),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stderr is not None
        assert process.stderr.readline().startswith("tasktool dashboard on http://127.0.0.1:")
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(15)
