"""Id strategies and the deduplicate plan."""

from __future__ import annotations

import re
import time

import pytest

from tasktool.model.config import Config
from tasktool.model.errors import TaskToolError
from tasktool.model.ids import next_id, plan_deduplicate, rewrite_references
from tasktool.model.task import Task


@pytest.mark.parametrize(
    ("config", "existing", "expected"),
    [
        (Config(), [], "001"),
        (Config(), ["009", "T-50", "abc", "10"], "011"),
        (Config(id_padding=0), ["9"], "10"),
        (Config(id_padding=5), ["41"], "00042"),
        (Config(id_strategy="prefixed", id_prefix="T-"), ["T-009", "120", "X-500"], "T-010"),
        (Config(id_strategy="prefixed", id_prefix="T"), [], "T001"),
    ],
)
def test_numbered_strategies(config: Config, existing: list[str], expected: str) -> None:
    assert next_id(config, existing) == expected


@pytest.mark.parametrize("length", [1, 6, 12])
def test_random_ids(length: int) -> None:
    value = next_id(Config(id_strategy="random", id_length=length), [])
    assert re.fullmatch(rf"[0-9a-z]{{{length}}}", value)


def test_random_retries_on_collision() -> None:
    taken = [c for c in "0123456789abcdefghijklmnopqrstuvwxy"]  # only "z" is free
    assert next_id(Config(id_strategy="random", id_length=1), taken) == "z"


@pytest.mark.parametrize(("length", "size"), [(6, 6), (14, 14), (26, 26), (40, 26), (3, 3)])
def test_ulid_lengths(length: int, size: int) -> None:
    value = next_id(Config(id_strategy="ulid", id_length=length), [])
    assert re.fullmatch(rf"[0-9a-hjkmnp-tv-z]{{{size}}}", value)


CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def millis_now() -> int:
    return time.time_ns() // 1_000_000


def decoded_millis(ulid: str) -> int:
    return sum(CROCKFORD.index(char) << (5 * i) for i, char in enumerate(reversed(ulid[:10])))


def test_full_ulids_sort_by_time() -> None:
    """Ids made in successive milliseconds sort in the order they were made, and their time
    part is the clock at generation.
    """
    config = Config(id_strategy="ulid", id_length=26)
    made: list[str] = []
    deadline = time.monotonic() + 10
    while len(made) < 50:
        before = millis_now()
        made.append(next_id(config, made))
        after = millis_now()
        assert before <= decoded_millis(made[-1]) <= after
        while millis_now() == after:  # the next id belongs to a later millisecond
            assert time.monotonic() < deadline, "the clock did not advance"
    assert len(set(made)) == len(made)
    assert sorted(made) == made


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
    plan = plan_deduplicate(tasks, Config())
    assert [(p.old_id, p.new_id, p.file_path, p.kept_by) for p in plan] == [
        ("1", "003", "/b/1.md", "/a/1.md"),
        ("2", "004", "/b/2.md", "/a/2.md"),
    ]
    assert rewrite_references(tasks[3], plan) == {
        "id": "004",
        "dependencies": ["003"],
        "parent": "003",
    }
    assert plan_deduplicate(tasks[::2], Config()) == []


@pytest.mark.parametrize("length", range(1, 27))
def test_ulids_sort_in_creation_order_at_every_length(length: int) -> None:
    """Many ids in the same millisecond (or the same coarse time bucket of a short id)
    still sort in the order they were made, and never repeat."""
    config = Config(id_strategy="ulid", id_length=length)
    made: list[str] = []
    for _ in range(min(300, 32**length // 2)):
        made.append(next_id(config, made))
    assert len(set(made)) == len(made)
    assert sorted(made) == made
    assert all(len(value) == length for value in made)


def test_ulid_of_the_last_value_is_exhausted_not_repeated() -> None:
    with pytest.raises(TaskToolError) as info:
        next_id(Config(id_strategy="ulid", id_length=2), ["zz"])
    assert info.value.code == "id.exhausted"
