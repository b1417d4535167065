"""Hostile task directories through the real CLI: symlinks, loops, FIFOs, odd names,
unreadable files. Nothing hangs, nothing is replaced behind a link."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .tasktool_hostile import Hostile


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    return Hostile(tmp_path)


def _ids(hostile: Hostile) -> list[str]:
    return [task["id"] for task in json.loads(hostile.run("list", "--format", "json").stdout)]


def test_set_writes_through_a_symlinked_task_file(hostile: Hostile, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.md"
    target.write_text("---\nid: '002'\ntitle: Linked\n---\nbody\n")
    link = hostile.tasks / "002-linked.md"
    link.symlink_to(target)
    hostile.run("set", "002", "--status", "completed")
    assert link.is_symlink(), "set replaced the link with a copy"
    assert "status: completed" in target.read_text()
    assert json.loads(hostile.run("get", "002", "--format", "json").stdout)["status"] == (
        "completed"
    )


def test_directory_symlinks_loops_dangling_links_and_fifos_do_not_hang(hostile: Hostile) -> None:
    (hostile.tasks / "loop").symlink_to(".")
    (hostile.tasks / "again").symlink_to(hostile.tasks)
    (hostile.tasks / "002-dangling.md").symlink_to("nowhere.md")
    os.mkfifo(hostile.tasks / "003-fifo.md")  # opening it would block forever
    assert _ids(hostile) == ["001"]  # each task once, the loop not followed
    assert "0 errors" in hostile.run("validate").stdout
    hostile.run("set", "001", "--status", "in-progress")
    assert hostile.run("add", "After", "--format", "json").returncode == 0
    assert _ids(hostile) == ["001", "002"]


@pytest.mark.parametrize("name", ["002 with spaces.md", "002-ünïcødé.md", "002-'quote\".md"])
def test_odd_file_names(hostile: Hostile, name: str) -> None:
    path = hostile.write(name, "---\nid: '002'\ntitle: Odd näme\n---\n".encode())
    assert _ids(hostile) == ["001", "002"]
    hostile.run("set", "002", "--status", "completed")
    assert "status: completed" in path.read_text(encoding="utf-8")
    shown = json.loads(hostile.run("get", "002", "--format", "json").stdout)
    assert shown["file_path"] == str(path)


@pytest.mark.unprivileged
def test_unreadable_task_file_is_reported(hostile: Hostile) -> None:
    path = hostile.write("002-secret.md", b"---\nid: '002'\ntitle: Secret\n---\n")
    path.chmod(0)
    try:
        assert "[task.unreadable]" in hostile.run("list").stderr
        assert "task.unreadable" in hostile.run("validate", expect=1).stdout
    finally:
        path.chmod(0o644)


def test_names_that_are_not_utf8(hostile: Hostile) -> None:
    odd_dir = hostile.tasks / os.fsdecode(b"group-\xff")
    odd_dir.mkdir()
    inside = odd_dir / "002-x.md"
    inside.write_bytes(b"---\nid: '002'\ntitle: In an odd folder\n---\n")
    named = hostile.tasks / os.fsdecode(b"003-\xfe.md")
    named.write_bytes(b"---\nid: '003'\ntitle: Oddly named\n---\n")
    for path in (inside, named, hostile.tasks / "001-good-one.md"):
        os.utime(path, (1_000_000_000, 1_000_000_000))  # old enough to be cached
    for _ in range(2):  # cold, then warm: the cache must not choke on the names
        assert _ids(hostile) == ["001", "002", "003"]
    shown = json.loads(hostile.run("get", "002", "--format", "json").stdout)
    assert shown["file_path"].endswith("group-\ufffd/002-x.md")
    hostile.run("list", "--format", "yaml")
    hostile.run("set", "003", "--status", "completed")
    assert b"status: completed" in named.read_bytes()
    outside = hostile.root / os.fsdecode(b"dir-\xff")
    outside.mkdir()
    hostile.run("-d", str(outside), "list")
    assert "dir-\ufffd" in hostile.run("-d", str(outside), "config", "show").stdout


@pytest.mark.parametrize(
    "args",
    [
        ("add", os.fsdecode(b"bad \xed\xa0\x80 title")),
        ("add", "Fine", "--body", os.fsdecode(b"\xff")),
        ("set", "001", "--owner", os.fsdecode(b"\xff")),
        ("set", "001", "--add-tag", os.fsdecode(b"\xff")),
    ],
)
def test_arguments_that_are_not_utf8_are_refused(hostile: Hostile, args: tuple[str, ...]) -> None:
    before = sorted(path.name for path in hostile.tasks.iterdir())
    failed = hostile.run(*args, expect=1)
    assert failed.stderr.endswith("[task.invalid_text]\n"), failed.stderr
    assert sorted(path.name for path in hostile.tasks.iterdir()) == before
    assert "0 errors" in hostile.run("validate").stdout  # nothing unreadable was written


def test_worklog_text_that_is_not_utf8(hostile: Hostile) -> None:
    failed = hostile.run(
        "worklog", "001", "--add", os.fsdecode(b"\xff"), expect=1, TASKTOOL_WORKLOGS="1"
    )
    assert failed.stderr.endswith("[task.invalid_text]\n"), failed.stderr
