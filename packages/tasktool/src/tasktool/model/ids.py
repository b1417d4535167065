"""Id generation (``add``, ``next-id``) and the renumbering plan of ``deduplicate``.

Strategies, as the seed and the design note define them:

- ``sequential``: the highest all-digit id + 1, zero-padded to ``id.padding``;
- ``prefixed``: ``id.prefix`` (literally) + the next number among ids with that prefix;
- ``random``: ``id.length`` characters of ``[0-9a-z]``, retried on collision;
- ``ulid``: a lowercase ULID; with ``id.length`` < 26 the time part is shortened
  first and at least 4 random characters are kept. It always sorts after every
  ULID-shaped id of its length already taken (the latest plus one when the clock
  does not move it further), so ids sort in creation order and never collide.
"""

from __future__ import annotations

import secrets
import string
import time
from collections.abc import Callable, Collection, Sequence

import msgspec

from tasktool.model.config import Config
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task, natural_key

__all__ = ["Renumbering", "next_id", "plan_deduplicate", "rewrite_references"]

_ALPHABET = string.digits + string.ascii_lowercase
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
_ULID_TIME = 10
_ULID_LENGTH = 26
_MIN_RANDOM = 4
_ATTEMPTS = 1000


def _numbered(prefix: str, padding: int, existing: Collection[str]) -> str:
    highest = 0
    for task_id in existing:
        if task_id.startswith(prefix):
            rest = task_id[len(prefix) :]
            if rest.isdigit():
                highest = max(highest, int(rest))
    return f"{prefix}{highest + 1:0{padding}d}"


def _ulid_candidate(length: int) -> str:
    millis = time.time_ns() // 1_000_000
    stamp = "".join(_CROCKFORD[(millis >> (5 * i)) & 31] for i in reversed(range(_ULID_TIME)))
    random_count = max(min(length, _MIN_RANDOM), length - _ULID_TIME)
    randomness = "".join(secrets.choice(_CROCKFORD) for _ in range(random_count))
    if random_count == length:
        # No room for time: start in the lowest 32nd of the range and count up from there,
        # or a random start could leave no room to sort after it.
        return "0" + randomness[1:]
    return stamp[: length - random_count] + randomness


def _successor(value: str) -> str | None:
    """The next base-32 number of the same length, or None after ``zzz...``."""
    digits = [_CROCKFORD.index(char) for char in value]
    for position in reversed(range(len(digits))):
        if digits[position] < 31:
            digits[position] += 1
            return "".join(_CROCKFORD[digit] for digit in digits)
        digits[position] = 0
    return None


def _ulid(length: int, existing: Collection[str]) -> str:
    """A ULID of ``length`` characters that sorts after every ULID-shaped id of that length
    in ``existing``: the time-and-random candidate, or the latest one plus one when the
    candidate would not sort after it (same millisecond, or a time bucket shared because a
    short length keeps only the top of the timestamp)."""
    length = min(length, _ULID_LENGTH)
    candidate = _ulid_candidate(length)
    latest = max(
        (
            task_id
            for task_id in existing
            if len(task_id) == length and all(char in _CROCKFORD for char in task_id)
        ),
        default="",
    )
    if candidate > latest:
        return candidate
    following = _successor(latest)
    if following is None:
        raise TaskToolError(
            "no ulid of this length sorts after the latest one; increase id.length",
            code="id.exhausted",
        )
    return following


def _retried(make: Callable[[], str], existing: Collection[str]) -> str:
    for _ in range(_ATTEMPTS):
        candidate = make()
        if candidate not in existing:
            return candidate
    raise TaskToolError("could not find a free id; increase id.length", code="id.exhausted")


def next_id(config: Config, existing: Collection[str]) -> str:
    """The id ``add`` would give the next task, never one in ``existing``."""
    strategy = config.id_strategy
    if strategy == "sequential":
        return _numbered("", config.id_padding, existing)
    if strategy == "prefixed":
        return _numbered(config.id_prefix, config.id_padding, existing)
    if strategy == "random":
        length = config.id_length
        return _retried(lambda: "".join(secrets.choice(_ALPHABET) for _ in range(length)), existing)
    return _ulid(config.id_length, existing)


class Renumbering(msgspec.Struct, frozen=True, kw_only=True):
    """One task copy that gives up a colliding id."""

    old_id: str
    new_id: str
    file_path: str
    kept_by: str  # the file that keeps the id


def _age(task: Task, mtimes: dict[str, float]) -> tuple[str, float, str]:
    return (task.created_at or "9999-99-99", mtimes.get(task.file_path, 0.0), task.file_path)


def plan_deduplicate(
    tasks: Sequence[Task], config: Config, mtimes: dict[str, float] | None = None
) -> list[Renumbering]:
    """Renumber every copy of a colliding id but the oldest (``created_at``, then mtime, path).

    References are rewritten only inside the renumbered set (see :func:`rewrite_references`):
    a task that keeps its id keeps pointing at the oldest copy.
    """
    mtimes = mtimes or {}
    by_id: dict[str, list[Task]] = {}
    for task in tasks:
        by_id.setdefault(task.id, []).append(task)
    used = set(by_id)
    plan: list[Renumbering] = []
    for task_id in sorted(by_id, key=natural_key):
        copies = sorted(by_id[task_id], key=lambda task: _age(task, mtimes))
        for copy in copies[1:]:
            new_id = next_id(config, used)
            used.add(new_id)
            plan.append(
                Renumbering(
                    old_id=task_id,
                    new_id=new_id,
                    file_path=copy.file_path,
                    kept_by=copies[0].file_path,
                )
            )
    return plan


def rewrite_references(task: Task, plan: Sequence[Renumbering]) -> dict[str, object]:
    """Frontmatter updates for a renumbered task: its id and its references to renumbered ids.

    Copies renumbered together came from the same branch, so their references to each
    other's old ids follow them to the new ids.
    """
    mine = next(step for step in plan if step.file_path == task.file_path)
    mapping = {step.old_id: step.new_id for step in plan}
    updates: dict[str, object] = {"id": mine.new_id}
    if any(dep in mapping for dep in task.dependencies):
        updates["dependencies"] = [mapping.get(dep, dep) for dep in task.dependencies]
    if task.parent in mapping:
        updates["parent"] = mapping[task.parent]
    return updates
