"""Write safety through the real CLI: ids of broken files, occupied file names, processes
killed mid-write, leftover lock files, read-only directories."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .tasktool_hostile import Hostile


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    return Hostile(tmp_path)


def test_add_does_not_take_the_id_of_a_broken_file(hostile: Hostile) -> None:
    hostile.write("002-broken.md", b"---\nid: '002'\ntitle: [unclosed\n---\n")
    assert hostile.run("-q", "next-id").stdout.strip() == "003"
    added = json.loads(hostile.run("-q", "add", "New", "--format", "json").stdout)
    assert added["id"] == "003"


def test_add_never_overwrites_an_existing_file(hostile: Hostile) -> None:
    occupied = hostile.write("002-new-one.md", b"my notes, no frontmatter\n")
    failed = hostile.run("add", "New one", expect=1)
    assert failed.stderr.endswith("[task.exists]\n")
    assert occupied.read_bytes() == b"my notes, no frontmatter\n"
    assert sorted(path.name for path in hostile.tasks.iterdir()) == [
        ".gitkeep",
        ".tasktool",
        "001-good-one.md",
        "002-new-one.md",
    ]


_COMPLETE = re.compile(
    r"---\nid: '001'\ntitle: Good one\nstatus: pending\n"
    r"(owner: o\d+\n)?created_at: \d{4}-\d\d-\d\d\n---\n"
)


def test_kill_9_mid_write_leaves_a_whole_file_and_no_stuck_lock(hostile: Hostile) -> None:
    path = hostile.tasks / "001-good-one.md"
    command = [sys.executable, "-m", "tasktool", "set", "001", "--owner"]
    for attempt in range(12):
        child = subprocess.Popen(
            [*command, f"o{attempt}"],
            cwd=hostile.root,
            env=hostile.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            # Kill at a different moment each time: start-up, scan, write, rename.
            child.wait(timeout=0.05 * attempt)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
        text = path.read_text()
        assert _COMPLETE.fullmatch(text), f"attempt {attempt} left {text!r}"
    # flock locks die with their holder: the next writer does not wait on a dead one.
    hostile.run("set", "001", "--owner", "final")
    assert json.loads(hostile.run("get", "001", "--format", "json").stdout)["owner"] == "final"
    assert hostile.run("list").stderr == ""  # abandoned temp files are not tasks


def test_leftover_lock_files_do_not_block(hostile: Hostile) -> None:
    locks = hostile.tasks / ".tasktool" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    for name in ("task-001.lock", "repository.lock"):
        (locks / name).write_text("12345\n")  # as a crashed process would leave them
    hostile.run("set", "001", "--status", "completed")
    hostile.run("add", "Second")
    assert len(json.loads(hostile.run("list", "--format", "json").stdout)) == 2


@contextlib.contextmanager
def _read_only(directory: Path) -> Iterator[None]:
    """No file can be created in ``directory`` (mode 555) until the block ends."""
    directory.chmod(0o555)
    try:
        yield
    finally:
        directory.chmod(0o755)


@pytest.mark.unprivileged
def test_read_only_task_directory(hostile: Hostile) -> None:
    path = hostile.tasks / "001-good-one.md"
    before = path.read_bytes()
    with _read_only(hostile.tasks):
        failed = hostile.run("set", "001", "--status", "completed", expect=1)
        assert failed.stderr.endswith(f"{path} [os.error]\n"), failed.stderr
        assert "[os.error]" in hostile.run("add", "Other", expect=1).stderr
        assert "001" in hostile.run("list").stdout  # reading still works
    assert path.read_bytes() == before
    # Nothing appeared: only what `init` (.gitkeep), the cache and the task made before.
    names = sorted(p.name for p in hostile.tasks.iterdir())
    assert names == [".gitkeep", ".tasktool", "001-good-one.md"]
