"""Id strategies and the deduplicate plan."""

from __future__ import annotations

import re

import pytest

from tasktool.model.ids import next_id, plan_deduplicate, rewrite_references
from tasktool.model.settings import Settings
from tasktool.model.task import Task


@pytest.mark.parametrize(
    ("settings", "existing", "expected"),
    [
        (Settings(), [], "001"),
        (Settings(), ["009", "T-50", "abc", "10"], "011"),
        (Settings(id_padding=0), ["9"], "10"),
        (Settings(id_padding=5), ["41"], "00042"),
        (Settings(id_strategy="prefixed", id_prefix="T-"), ["T-009", "120", "X-500"], "T-010"),
        (Settings(id_strategy="prefixed", id_prefix="T"), [], "T001"),
    ],
)
def test_numbered_strategies(settings: Settings, existing: list[str], expected: str) -> None:
    assert next_id(settings, existing) == expected


@pytest.mark.parametrize("length", [1, 6, 12])
def test_random_ids(length: int) -> None:
    value = next_id(Settings(id_strategy="random", id_length=length), [])
    assert re.fullmatch(rf"[0-9a-z]{{{length}}}", value)


def test_random_retries_on_collision() -> None:
    taken = [c for c in "0123456789abcdefghijklmnopqrstuvwxy"]  # only "z" is free
    assert next_id(Settings(id_strategy="random", id_length=1), taken) == "z"


@pytest.mark.parametrize(("length", "size"), [(6, 6), (14, 14), (26, 26), (40, 26), (3, 3)])
def test_ulid_lengths(length: int, size: int) -> None:
    value = next_id(Settings(id_strategy="ulid", id_length=length), [])
    assert re.fullmatch(rf"[0-9a-hjkmnp-tv-z]{{{size}}}", value)


def test_full_ulids_sort_by_time() -> None:
    first = next_id(Settings(id_strategy="ulid", id_length=26), [])
    assert first[:10] <= next_id(Settings(id_strategy="ulid", id_length=26), [])[:10]


def test_deduplicate_keeps_the_oldest_and_rewrites_within_the_renumbered_set() -> None:
    tasks = [
        Task(id="1", title="a", created_at="2024-01-01", file_path="/a/1.md"),
        Task(id="1", title="b", created_at="2024-03-01", file_path="/b/1.md"),
        Task(id="2", title="c", created_at="2024-01-05", file_path="/a/2.md"),
        Task(
            id="2",
            title="d",
            created_at="2024-03-02",
            file_path="/b/2.md",
            dependencies=("1",),
            parent="1",
        ),
    ]
    plan = plan_deduplicate(tasks, Settings())
    assert [(p.old_id, p.new_id, p.file_path, p.kept_by) for p in plan] == [
        ("1", "003", "/b/1.md", "/a/1.md"),
        ("2", "004", "/b/2.md", "/a/2.md"),
    ]
    assert rewrite_references(tasks[3], plan) == {
        "id": "004",
        "dependencies": ["003"],
        "parent": "003",
    }
    assert plan_deduplicate(tasks[::2], Settings()) == []
