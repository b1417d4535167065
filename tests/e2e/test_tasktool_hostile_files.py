"""Hostile task files through the real CLI: each one loads, is reported, or is (rightly)
not a task; never a traceback, a hang or a task dropped without a word."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .tasktool_hostile import Hostile

_LAUGHS = b"a: &a [x, x, x, x, x, x, x, x, x]\n" + b"".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n".encode()
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)


def _body(data: bytes) -> bytes:
    """Everything after the closing ``---`` line."""
    lines = data.decode().removeprefix("\ufeff").splitlines(keepends=True)
    close = next(index for index in range(1, len(lines)) if lines[index].rstrip() == "---")
    return "".join(lines[close + 1 :]).encode()


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    return Hostile(tmp_path)


# name -> (file bytes, title ``get 002`` shows)
LOADS = {
    "tab after colon": (b"---\nid:\t'002'\ntitle:\tTabbed\n---\nbody\n", "Tabbed"),
    "crlf": (b"---\r\nid: '002'\r\ntitle: Crlf\r\n---\r\nbody\r\nline 2\r\n", "Crlf"),
    "bom": (b"\xef\xbb\xbf---\nid: '002'\ntitle: Bom\n---\nbody\n", "Bom"),
    "bom and crlf": (b"\xef\xbb\xbf---\r\nid: '002'\r\ntitle: Both\r\n---\r\nx\r\n", "Both"),
    "--- in body": (b"---\nid: '002'\ntitle: Dash\n---\nbody\n---\nmore\n---\n", "Dash"),
    "indented mapping": (b"---\n  id: '002'\n  title: Indented\n---\n", "Indented"),
    "aliased title": (b"---\nid: &x '002'\ntitle: *x\n---\n", "002"),
    "billion laughs": (b"---\nid: '002'\ntitle: Laughs\n" + _LAUGHS + b"---\nb\n", "Laughs"),
    "python tag": (b"---\nid: '002'\ntitle: !!python/object:os.system x\n---\n", "x"),
    "huge body": (b"---\nid: '002'\ntitle: Huge\n---\n" + b"x" * 8_000_000 + b"\n", "Huge"),
    "huge value": (b"---\nid: '002'\ntitle: Wide\nnote: " + b"y" * 2_000_000 + b"\n---\n", "Wide"),
}


@pytest.mark.parametrize("name", LOADS)
def test_readable_oddities_load_and_edit_in_place(hostile: Hostile, name: str) -> None:
    data, title = LOADS[name]
    path = hostile.write("002-odd.md", data)
    started = time.monotonic()
    listed = json.loads(hostile.run("list", "--format", "json").stdout)
    assert [task["id"] for task in listed] == ["001", "002"]
    assert json.loads(hostile.run("get", "002", "--format", "json").stdout)["title"] == title
    assert "0 errors" in hostile.run("validate").stdout
    assert "002" in hostile.run("next").stdout
    hostile.run("set", "002", "--status", "in-progress", "--owner", "ann")
    shown = json.loads(hostile.run("get", "002", "--format", "json").stdout)
    assert (shown["status"], shown["owner"], shown["title"]) == ("in-progress", "ann", title)
    assert time.monotonic() - started < 45
    written = path.read_bytes()
    assert _body(written) == _body(data), "the body changed"
    assert written.startswith(b"\xef\xbb\xbf") == data.startswith(b"\xef\xbb\xbf")
    if b"\r\n" in data:  # a CRLF file stays CRLF throughout, frontmatter included
        assert written.count(b"\n") == written.count(b"\r\n")


# name -> (file bytes, diagnostic code, whether ``get 002`` can tell the file holds task 002)
BROKEN = {
    "no closing ---": (b"---\nid: '002'\ntitle: Open\nbody\n", "task.frontmatter", True),
    "list frontmatter": (b"---\n- id: '002'\n- title: x\n---\n", "task.frontmatter", False),
    "id is a list": (b"---\nid: ['002', b]\ntitle: L\n---\n", "task.field_type", False),
    "id is a map": (b"---\nid: {a: '002'}\ntitle: M\n---\n", "task.field_type", False),
    "id is empty": (b"---\nid:\ntitle: E\n---\n", "task.missing_id", False),
    "id is ''": (b"---\nid: ''\ntitle: E\n---\n", "task.missing_id", False),
    "no title": (b"---\nid: '002'\nstatus: pending\n---\n", "task.missing_title", True),
    "duplicate title": (b"---\nid: '002'\ntitle: A\ntitle: B\n---\n", "task.duplicate_key", True),
    "duplicate id": (b"---\nid: '002'\nid: '003'\ntitle: D\n---\n", "task.duplicate_key", True),
    "laughs as tags": (
        b"---\nid: '002'\ntitle: T\n" + _LAUGHS + b"tags: *i\n---\n",
        "task.field_type",
        True,
    ),
    "unhashable key": (b"---\nid: '002'\ntitle: K\n? [a, b]\n: c\n---\n", "task.yaml", True),
    "bad yaml": (b"---\nid: '002'\ntitle: [unclosed\n---\n", "task.yaml", True),
    "not utf-8": (b"---\nid: '002'\ntitle: caf\xe9\n---\n", "task.unreadable", True),
}


@pytest.mark.parametrize("name", BROKEN)
def test_broken_task_files_are_reported_by_every_command(hostile: Hostile, name: str) -> None:
    data, code, named = BROKEN[name]
    path = hostile.write("002-broken.md", data)
    for command in (("list",), ("next",)):
        done = hostile.run(*command)
        assert f"[{code}]" in done.stderr, done.stderr
        assert str(path) in done.stderr
        assert "001" in done.stdout
    validated = hostile.run("validate", "--format", "json", expect=1)
    assert code in validated.stdout
    assert str(path) in validated.stdout
    missing = "[task.broken]" if named else "[task.not_found]"
    assert missing in hostile.run("get", "002", expect=1).stderr
    assert missing in hostile.run("set", "002", "--status", "completed", expect=1).stderr
    assert path.read_bytes() == data, "a refused write touched the file"


# Files that are not tasks at all: skipped without a word, as other Markdown is.
NOT_TASKS = {
    "empty frontmatter": b"---\n---\nbody\n",
    "scalar frontmatter": b"---\njust text\n---\n",
    "readme": b"# Read me\n\nid: not frontmatter\n",
    "latin-1 readme": b"# Caf\xe9\n",
    "no task keys": b"---\nlayout: page\ntitle: Docs\n---\n",
}


@pytest.mark.parametrize("name", NOT_TASKS)
def test_other_markdown_is_skipped_quietly(hostile: Hostile, name: str) -> None:
    hostile.write("README.md", NOT_TASKS[name])
    done = hostile.run("list", "--format", "json")
    assert done.stderr == ""
    assert [task["id"] for task in json.loads(done.stdout)] == ["001"]
    assert "0 errors" in hostile.run("validate").stdout


@pytest.mark.parametrize(
    ("written", "listed"), [(b"2", "2"), (b"010", "010"), (b"'0x1F'", "0x1F"), (b"1e3", "1e3")]
)
def test_numeric_looking_ids_stay_text(hostile: Hostile, written: bytes, listed: str) -> None:
    hostile.write("x.md", b"---\nid: " + written + b"\ntitle: Numeric\n---\n")
    assert json.loads(hostile.run("get", listed, "--format", "json").stdout)["id"] == listed
    hostile.run("set", listed, "--status", "completed")
    assert json.loads(hostile.run("get", listed, "--format", "json").stdout)["status"] == (
        "completed"
    )
