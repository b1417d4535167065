"""Every tasktool command README.md shows, run verbatim (each line as written, comment
included, by ``bash``) on a fresh machine: a new git repository, and a home directory
that is either empty or holds the ``~/.tasktool.yaml`` an earlier ``projects register``
left. Only ``web start`` gets ``TASKTOOL_WEB_PORT=0`` (8080 may be taken here); the
long-running ``web start`` and ``mcp`` are asked one question each and stopped."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from .tasktool_process import git_repository, serving, tasktool_env

README = Path(__file__).resolve().parents[2] / "README.md"


def quick_start() -> list[str]:
    """The lines of the tasktool quick start's shell block, then the commands its comments
    name (``# then: tasktool --all-projects next``)."""
    section = README.read_text().split("## Quick start: tasktool", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    lines = [line for line in block[1].splitlines() if line.startswith("tasktool ")]
    named = [m[1].strip() for line in lines for m in re.finditer(r"then: (tasktool [^#]*)", line)]
    return lines + named


def first_lines() -> list[str]:
    """The tasktool commands of the README's one-line install (``pip install ... &&
    tasktool add ... && tasktool next``), in order."""
    line = next(line for line in README.read_text().splitlines() if "&& tasktool add" in line)
    return [part.strip() for part in line.split("&&") if part.strip().startswith("tasktool ")]


def shell_env(home: Path) -> dict[str, str]:
    """A fresh user's environment: ``HOME`` at ``home``, the interpreter's ``bin`` (where
    the ``tasktool`` script is installed) first on ``PATH``."""
    env = tasktool_env(home)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    return env


def sh(line: str, cwd: Path, env: dict[str, str], given: str = "") -> str:
    """Run ``line`` with ``bash``, ``given`` as its input; its output (it must succeed)."""
    done = subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=env, input=given, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{line!r} exited {done.returncode}: {done.stderr}"
    assert "Traceback" not in done.stderr
    return done.stdout


@pytest.fixture(params=["empty home", "populated home"])
def home(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """An empty home directory, or one whose ``~/.tasktool.yaml`` lists a project another
    repository registered (as the README's last line leaves it), with a setting."""
    home = tmp_path / "home"
    home.mkdir()
    if request.param == "populated home":
        other = tmp_path / "other"
        (other / "tasks").mkdir(parents=True)
        (other / ".git").mkdir()
        (other / ".tasktool.yaml").write_text("dir: tasks\n")
        (other / "tasks/001-other.md").write_text("---\nid: '001'\ntitle: Other\n---\n")
        (home / ".tasktool.yaml").write_text(
            f"# my settings\nworklogs: true\nprojects:\n  - id: other\n    path: {other}\n"
        )
    return home


def web_start(line: str, cwd: Path, env: dict[str, str]) -> None:
    """``web start`` serves the tasks just added, and stops on Ctrl+C."""
    argv = ["bash", "-c", f"exec {line}"]
    with serving(argv, cwd=cwd, env={**env, "TASKTOOL_WEB_PORT": "0"}) as (process, url):
        assert httpx.get(url, timeout=10).status_code == 200
        tasks = httpx.get(url + "api/tasks", timeout=10).json()
        assert [task["id"] for task in tasks] == ["001", "002"]
        process.send_signal(signal.SIGINT)
        assert process.wait(15) == 0


def ask(
    line: str, cwd: Path, env: dict[str, str], requests: list[dict[str, Any]], errors: IO[str]
) -> dict[int, dict[str, Any]]:
    """Send ``requests`` to ``line``'s process, read until the last one is answered, then
    close its input; the answers by id (it must exit 0)."""
    process = subprocess.Popen(
        ["bash", "-c", line], cwd=cwd, env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
    )  # fmt: skip
    last = max(request["id"] for request in requests if "id" in request)
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write("".join(json.dumps(request) + "\n" for request in requests))
        process.stdin.flush()
        answers: dict[int, dict[str, Any]] = {}
        while last not in answers:
            reply = process.stdout.readline()  # blocks until the server answers
            assert reply, f"{line!r} ended before answering: {answers}"
            answer = json.loads(reply)
            answers[answer["id"]] = answer
        process.stdin.close()
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
    return answers


def mcp(line: str, cwd: Path, env: dict[str, str]) -> None:
    """``mcp`` answers an agent's first questions over stdio and ends with its input.

    The input stays open until the last answer is read (an agent waits for its answers;
    input closed at once may end the server before it has answered), then is closed."""
    requests: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "readme", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with tempfile.TemporaryFile("w+") as errors:  # a pipe nobody reads could fill and stall
        answers = ask(line, cwd, env, requests, errors)
        errors.seek(0)
        assert "Traceback" not in errors.read()
    assert answers[1]["result"]["serverInfo"]
    assert "next" in {tool["name"] for tool in answers[2]["result"]["tools"]}


def test_the_readme_quick_start_runs_verbatim(tmp_path: Path, home: Path) -> None:
    (tmp_path / "fresh").mkdir()
    repo = git_repository(tmp_path / "fresh")
    env = shell_env(home)
    lines = quick_start()
    assert len(lines) >= 12, lines
    for line in lines:
        if line.startswith("tasktool web start"):
            web_start(line, repo, env)
        elif line.startswith("tasktool mcp"):
            mcp(line, repo, env)
        else:
            sh(line, repo, env)
    assert sorted(path.name for path in (repo / "tasks").glob("*.md")) == [
        "001-set-up-ci.md",
        "002-write-the-docs.md",
    ]
    assert (repo / "site" / "index.html").is_file()
    registered = sh("tasktool projects --format json", repo, env)
    assert str(repo.resolve()) in [project["path"] for project in json.loads(registered)]
    # Nothing was written to the home directory but the home file (and its parsed copy).
    assert not_home_file(home) == []


def not_home_file(home: Path) -> list[Path]:
    """Files in ``home`` other than ``~/.tasktool.yaml`` and its parsed copy (the cache
    every config file gets beside it, ``.tasktool/cache/config-*``)."""
    return [
        path
        for path in home.rglob("*")
        if path.is_file()
        and path != home / ".tasktool.yaml"
        and not path.name.startswith("config-")
        and path.name != ".gitignore"
    ]


def test_the_one_line_install_runs_in_any_folder(tmp_path: Path, home: Path) -> None:
    """``tasktool add "First task" && tasktool next`` in a folder with no config keeps the
    task there, with or without a home file (never in the home directory)."""
    folder = tmp_path / "anywhere"
    folder.mkdir()
    env = shell_env(home)
    add, following = first_lines()
    sh(add, folder, env)
    assert "First task" in sh(following, folder, env)
    assert [path.name for path in folder.rglob("*.md")] == ["001-first-task.md"]
    assert not_home_file(home) == []
