"""Worklogs: parsing, the ``worklogs`` gate, atomic appends that never lose entries."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tasktool.model.errors import TaskToolError
from tasktool.planning.repository import Repository, load_context
from tasktool.planning.writing.worklog import WorklogEntry, add_entry, parse_worklog, read_worklog

Loader = Callable[..., Repository]


@pytest.fixture
def load(tmp_path: Path) -> Loader:
    """A repository in ``tmp_path`` whose config sets ``worklogs`` as asked."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "home").mkdir()

    def make(*, worklogs: bool = True) -> Repository:
        (tmp_path / ".tasktool.yaml").write_text(f"worklogs: {str(worklogs).lower()}\n")
        return load_context(cwd=tmp_path, env={"HOME": str(tmp_path / "home")})

    return make


def test_parse() -> None:
    text = (
        "# preamble\n\n## 2026-01-02T03:04:05Z\n\nfirst\n## not a heading\n\n"
        "## 2026-01-03T00:00:00Z\nsecond\n"
    )
    assert parse_worklog(text) == [
        WorklogEntry("2026-01-02T03:04:05Z", "first\n## not a heading"),
        WorklogEntry("2026-01-03T00:00:00Z", "second"),
    ]


def test_add_then_read(tmp_path: Path, load: Loader) -> None:
    repo = load()
    assert read_worklog(repo, "7").entries == ()
    add_entry(repo, "7", "  did a thing \n", timestamp="2026-01-02T03:04:05Z")
    entry = add_entry(repo, "7", "and another")
    text = (tmp_path / ".worklogs" / "7.md").read_text()
    assert text.startswith("## 2026-01-02T03:04:05Z\n\ndid a thing\n\n## ")
    assert read_worklog(repo, "7").to_json() == {
        "task_id": "7",
        "entries": [
            {"timestamp": "2026-01-02T03:04:05Z", "content": "did a thing", "title": None},
            {"timestamp": entry.timestamp, "content": "and another", "title": None},
        ],
    }


@pytest.mark.parametrize(
    ("worklogs", "task_id", "content", "code"),
    [
        (False, "7", "text", "worklog.disabled"),
        (True, "7", "  ", "worklog.empty"),
        (True, "../x", "text", "task.invalid_id"),
    ],
)
def test_refusals(load: Loader, worklogs: bool, task_id: str, content: str, code: str) -> None:
    repo = load(worklogs=worklogs)
    with pytest.raises(TaskToolError) as raised:
        add_entry(repo, task_id, content)
    assert raised.value.code == code
    assert not (repo.task_dir / ".worklogs" / "7.md").exists()


def test_disabled_refusal_says_why(load: Loader) -> None:
    with pytest.raises(TaskToolError, match="worklogs: true"):
        add_entry(load(worklogs=False), "7", "text")


def test_concurrent_appends_lose_nothing(load: Loader) -> None:
    repo = load()

    def write(worker: int) -> None:
        for item in range(10):
            add_entry(repo, "1", f"w{worker}-{item}")

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    contents = {entry.content for entry in read_worklog(repo, "1").entries}
    assert contents == {f"w{w}-{i}" for w in range(4) for i in range(10)}


def test_a_fifo_in_place_of_the_worklog_is_refused_not_waited_on(load: Loader) -> None:
    repo = load()
    path = repo.worklog_path("1")
    path.parent.mkdir(parents=True)
    os.mkfifo(path)  # no writer ever opens it: a plain read would block forever
    for action in (lambda: read_worklog(repo, "1"), lambda: add_entry(repo, "1", "note")):
        with pytest.raises(TaskToolError) as info:
            action()
        assert info.value.code == "worklog.unreadable"
        assert "not a regular file" in info.value.message
