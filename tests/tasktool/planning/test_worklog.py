"""Worklogs: parsing, the ``worklogs`` gate, atomic appends that never lose entries."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tasktool.errors import TaskToolError
from tasktool.settings import Settings
from tasktool.worklog import WorklogEntry, add_entry, parse_worklog, read_worklog

ENABLED = Settings(worklogs=True)


def test_parse() -> None:
    text = (
        "# preamble\n\n## 2026-01-02T03:04:05Z\n\nfirst\n## not a heading\n\n"
        "## 2026-01-03T00:00:00Z\nsecond\n"
    )
    assert parse_worklog(text) == [
        WorklogEntry("2026-01-02T03:04:05Z", "first\n## not a heading"),
        WorklogEntry("2026-01-03T00:00:00Z", "second"),
    ]


def test_add_then_read(tmp_path: Path) -> None:
    assert read_worklog(tmp_path, "7").entries == ()
    add_entry(tmp_path, "7", "  did a thing \n", ENABLED, timestamp="2026-01-02T03:04:05Z")
    entry = add_entry(tmp_path, "7", "and another", ENABLED)
    text = (tmp_path / ".worklogs" / "7.md").read_text()
    assert text.startswith("## 2026-01-02T03:04:05Z\n\ndid a thing\n\n## ")
    assert read_worklog(tmp_path, "7").to_json() == {
        "task_id": "7",
        "entries": [
            {"timestamp": "2026-01-02T03:04:05Z", "content": "did a thing"},
            {"timestamp": entry.timestamp, "content": "and another"},
        ],
    }


@pytest.mark.parametrize(
    ("settings", "task_id", "content", "code"),
    [
        (Settings(), "7", "text", "worklog.disabled"),
        (ENABLED, "7", "  ", "worklog.empty"),
        (ENABLED, "../x", "text", "worklog.bad_id"),
    ],
)
def test_refusals(
    tmp_path: Path, settings: Settings, task_id: str, content: str, code: str
) -> None:
    with pytest.raises(TaskToolError) as raised:
        add_entry(tmp_path, task_id, content, settings)
    assert raised.value.code == code
    assert not (tmp_path / ".worklogs" / "7.md").exists()


def test_disabled_refusal_says_why(tmp_path: Path) -> None:
    with pytest.raises(TaskToolError, match="worklogs: true"):
        add_entry(tmp_path, "7", "text", Settings())


def test_concurrent_appends_lose_nothing(tmp_path: Path) -> None:
    def write(worker: int) -> None:
        for item in range(10):
            add_entry(tmp_path, "1", f"w{worker}-{item}", ENABLED)

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    contents = {entry.content for entry in read_worklog(tmp_path, "1").entries}
    assert contents == {f"w{w}-{i}" for w in range(4) for i in range(10)}
