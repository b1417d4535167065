"""The terminal: tables fitted to 80 columns, board side by side, a pager like git's, a
quiet broken pipe, help for a bare ``tasktool`` and shell completion (real processes on a
pseudo-terminal where a terminal matters)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

from tasktool.present.terminal import MIN_TITLE, fitted_table, width_of

_ESCAPES = re.compile(r"\x1b\[[0-9;]*m")
LONG = "Rework the session cache invalidation so that stale logins expire everywhere"


def tasktool() -> list[str]:
    script = shutil.which("tasktool", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "tasktool"]


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKTOOL_", "NO_COLOR"))}
    env.update({"HOME": str(home), "PAGER": "cat", "COLUMNS": "", "LINES": ""}, **extra)
    return {k: v for k, v in env.items() if v}


def on_terminal(
    args: list[str], cwd: Path, env: dict[str, str], columns: int = 80, lines: int = 24
) -> str:
    """Run tasktool with stdout and stderr on a pseudo-terminal of the given size."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    done = subprocess.run(
        [*tasktool(), *args],
        cwd=cwd,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        timeout=60,
        check=False,
    )
    os.close(slave)
    reader.join(timeout=30)
    os.close(master)
    text = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    assert done.returncode == 0, text
    return text


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".tasktool.yaml").write_text("dir: tasks\n")
    tasks = root / "tasks"
    tasks.mkdir()
    statuses = ("pending", "in-progress", "completed")
    for number in range(1, 41):
        (tasks / f"{number:03d}-t.md").write_text(
            f"---\nid: '{number:03d}'\ntitle: {LONG} {number}\nstatus: {statuses[number % 3]}\n"
            "priority: high\neffort: medium\nowner: someone-with-a-long-name\n"
            "tags: [security, performance, refactoring]\nphase: foundation\n---\n"
        )
    return root


def test_list_at_80_columns_keeps_titles_readable(repo: Path, tmp_path: Path) -> None:
    text = _ESCAPES.sub("", on_terminal(["--no-pager", "list"], repo, environment(tmp_path)))
    lines = text.splitlines()
    assert all(width_of(line) <= 80 for line in lines), lines[:3]
    header = lines[0].split()
    # the title was shortened before any column was dropped: every default column stays
    assert header == ["ID", "STATUS", "PRIORITY", "EFFORT", "PHASE", "TITLE"]
    assert width_of(lines[1]) == 80
    row = lines[1]
    title = row[lines[0].index("TITLE") :]
    assert title.startswith(LONG[:MIN_TITLE])
    assert title.endswith("\u2026")


@pytest.mark.parametrize(
    ("width", "header"),
    [
        (100, ["ID", "STATUS", "OWNER", "TAGS", "TITLE"]),  # a shorter title: all stay
        (62, ["ID", "STATUS", "OWNER", "TAGS", "TITLE"]),  # a title at its floor
        (55, ["ID", "STATUS", "OWNER", "TITLE"]),  # then tags go, the title takes the room
        (40, ["ID", "STATUS", "TITLE"]),
    ],
)
def test_titles_are_shortened_before_columns_are_dropped(width: int, header: list[str]) -> None:
    rows = [{"id": "001", "status": "pending", "owner": "someone-long", "tags": "a, b, c",
             "title": LONG}]  # fmt: skip
    columns = ("id", "status", "owner", "tags", "title")
    text = fitted_table(rows, columns, width=width, bold=False, cell=str)
    head, row = text.splitlines()
    assert head.split() == header
    assert width_of(row) <= width
    assert "…" in row
    assert row.split("  ")[-1].startswith(LONG[: MIN_TITLE - 1])


def test_board_shows_columns_side_by_side(repo: Path, tmp_path: Path) -> None:
    text = _ESCAPES.sub("", on_terminal(["--no-pager", "board"], repo, environment(tmp_path), 150))
    first = text.splitlines()[0]
    assert "pending (13)" in first
    assert "in-progress (14)" in first
    assert "completed (13)" in first


def test_long_output_goes_through_the_pager(repo: Path, tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    env = environment(tmp_path, PAGER=f"tee {paged}")
    shown = on_terminal(["list"], repo, env)
    assert "001" in paged.read_text(encoding="utf-8")
    assert "040" in shown
    paged.unlink()
    on_terminal(["--no-pager", "list"], repo, env)
    assert not paged.exists()
    on_terminal(["list", "--limit", "3"], repo, env)  # fits on one screen: no pager
    assert not paged.exists()
    piped = subprocess.run(
        [*tasktool(), "list"], cwd=repo, env=env, capture_output=True, check=True, timeout=60
    )
    assert b"040" in piped.stdout
    assert not paged.exists()


def test_broken_pipe_is_quiet(repo: Path, tmp_path: Path) -> None:
    tasks = repo / "tasks"
    for number in range(100, 2100):  # more output than a pipe buffer holds
        (tasks / f"{number}-t.md").write_text(f"---\nid: '{number}'\ntitle: {LONG}\n---\n")
    for command in ("stats", "list"):
        done = subprocess.run(
            f"{' '.join(tasktool())} {command} | head -1",
            shell=True,
            cwd=repo,
            env=environment(tmp_path),
            capture_output=True,
            check=False,
            timeout=60,
        )
        assert done.stdout.count(b"\n") == 1
        assert done.stderr == b"", done.stderr


def test_bare_tasktool_prints_help(repo: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        tasktool(), cwd=repo, env=environment(tmp_path), capture_output=True, check=False
    )
    assert done.returncode == 0
    assert b"Usage: tasktool" in done.stdout
    assert b"Commands:" in done.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_and_task_ids(repo: Path, tmp_path: Path, shell: str) -> None:
    env = environment(tmp_path)
    script = subprocess.run(
        [*tasktool(), "completion", shell], cwd=repo, env=env, capture_output=True, check=True
    )
    assert b"_TASKTOOL_COMPLETE" in script.stdout
    for command in ("get", "set", "rm", "archive", "worklog"):
        done = subprocess.run(
            tasktool(),
            cwd=repo,
            env={
                **env,
                "_TASKTOOL_COMPLETE": "bash_complete",
                "COMP_WORDS": f"tasktool {command} 00",
                "COMP_CWORD": "2",
            },
            capture_output=True,
            check=True,
        )
        ids = [line.split(",", 1)[1] for line in done.stdout.decode().splitlines()]
        assert ids == [f"{n:03d}" for n in range(1, 10)], (command, ids)
