"""The derived memo: a warm ``next``, ``stats`` or ``validate`` recalls what an earlier run
derived, and any change to what it was derived from (a task file edited in place, added,
removed or renamed; the config; the command's options; a sibling worktree's file; a
damaged memo) gives the answer a cold run gives.

Each test first *poisons* a memo (the right key, a wrong result): a run that wrongly
trusted it would show the poison instead of the cold answer."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasktool.model.diagnostics import Diagnostic
from tasktool.planning.memos.derived_memo import memo_path
from tasktool.planning.ranking import Placed
from tasktool.planning.repository import Repository, load_context
from tasktool.planning.stats import Stats
from tasktool.present.documents import rank, repository_stats, validation_report
from tests.tasktool.conftest import edit_in_place, task_text
from tests.tasktool.worktrees.conftest import Repo

PAST_NS = (time.time_ns() // 1_000_000_000 - 3600) * 1_000_000_000  # outside the racy window
CONFIG = "dir: tasks\neffort: [xs, s, m, l]\n"
PHASED = CONFIG + "phases:\n  - id: p1\n    name: One\n  - id: p2\n    name: Two\n"
#: ``next``'s options, as the memo keys them: limit, quick wins, strict phases, filters.
NEXT_OPTIONS: tuple[dict[str, Any], ...] = (
    {"limit": 5},
    {"limit": 0, "strict_phases": False},
    {"limit": 2, "quick_wins": True},
    {"limit": 0, "filters": ("priority=high,critical",)},
)

Answers = tuple[Any, ...]


def _age(folder: Path) -> None:
    """Date every file and folder an hour back (a file changed a moment ago is parsed by
    every scan until it settles: such a run has no identity and never recalls)."""
    for path in (folder, *folder.rglob("*")):
        os.utime(path, ns=(PAST_NS, PAST_NS))


def _write(root: Path, number: int, **fields: object) -> Path:
    task_id = f"{number:03d}"
    path = root / "tasks" / f"{task_id}-task.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(task_text(task_id, f"Task {task_id}", **fields), encoding="utf-8")
    return path


def _project(root: Path) -> None:
    """Ten tasks with dependencies, priorities, efforts and phases (one unknown, one
    dependency that exists nowhere: ``validate`` has something to say), every file aged."""
    (root / ".tasktool.yaml").write_text(CONFIG, encoding="utf-8")
    priorities = ("low", "medium", "high", "critical")
    for n in range(1, 11):
        _write(
            root,
            n,
            status="completed" if n == 1 else "pending",
            priority=priorities[n % 4],
            effort=("xs", "s", "m", "l")[n % 4],
            phase=("p1", "p2", "p9")[n % 3],
            dependencies=[f"'{n - 1:03d}'"] if n % 3 == 0 else ["'404'"] if n == 7 else [],
        )
    _age(root)


def _load(root: Path, home: Path, *, use_cache: bool = True) -> Callable[..., Repository]:
    def load(*, tolerant: bool = False) -> Repository:
        return load_context(cwd=root, env={}, home=home, tolerant=tolerant, use_cache=use_cache)

    return load


def _answers(root: Path, home: Path, *, use_cache: bool = True) -> Answers:
    """What next (each option set), stats and validate answer, as their JSON documents."""
    load = _load(root, home, use_cache=use_cache)
    repo = load()
    ranked = [[item.to_json() for item in rank(repo, **options)] for options in NEXT_OPTIONS]
    return (
        ranked,
        repository_stats(repo).to_json(),
        validation_report(load).to_json(),
    )


def _replace(memo: Path, value: object) -> None:
    """Every result ``memo`` keeps replaced by ``value``, under the same keys."""
    fmt, entries = msgspec.msgpack.decode(memo.read_bytes())
    poisoned = [[key, msgspec.Raw(msgspec.msgpack.encode(value))] for key, _ in entries]
    memo.write_bytes(msgspec.msgpack.encode([fmt, poisoned]))


def _poison(root: Path, home: Path) -> Answers:
    """Put a wrong result under each memo's keys (the stored ones); what the run that
    trusted them would show."""
    repo = _load(root, home)()
    first = repo.tasks[0]
    wrong: dict[str, object] = {
        "next": [Placed(0, first.id, 999, ())],
        "stats": Stats(
            total=-1,
            archived=0,
            counts={},
            completion_rate=0.5,
            actionable=0,
            blocked=0,
            longest_chain=("poison",),
        ),
        "validate": [Diagnostic(severity="error", code="poison", message="poison")],
    }
    for kind, value in wrong.items():
        _replace(memo_path(repo, kind), value)
    return _answers(root, home)


def _settle(root: Path, home: Path) -> None:
    """Runs until every memo holds the current key: the first run after a change parses
    (no identity), the next computes and stores."""
    for _ in range(2):
        _answers(root, home)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    _project(tmp_path / "repo")
    return tmp_path / "repo"


def test_a_warm_run_recalls_what_a_cold_run_computes(root: Path, home: Path) -> None:
    cold = _answers(root, home, use_cache=False)
    assert not (root / "tasks" / ".tasktool").exists()  # a run without caches keeps none
    _settle(root, home)
    assert all(memo_path(_load(root, home)(), kind).is_file() for kind in ("next", "stats"))
    assert _answers(root, home) == cold  # recalled
    poisoned = _poison(root, home)
    ranked, stats, report = poisoned
    assert all([item["score"] for item in part] == [999] for part in ranked)  # the memo
    assert stats["longest_chain"]["ids"] == ["poison"]
    assert report["errors"][0]["code"] == "poison"
    assert all(part != cold[at] for at, part in enumerate(poisoned))


def _edited(root: Path) -> None:
    edit_in_place(root / "tasks" / "004-task.md", "priority: low", "priority: critical")


def _added(root: Path) -> None:
    _write(root, 42, priority="critical", phase="p1", dependencies=["'005'"])
    _age(root / "tasks")


def _removed(root: Path) -> None:
    (root / "tasks" / "003-task.md").unlink()


def _renamed(root: Path) -> None:
    (root / "tasks" / "archive").mkdir()
    os.replace(root / "tasks" / "002-task.md", root / "tasks" / "archive" / "002-task.md")
    _age(root / "tasks")


def _configured(root: Path) -> None:
    (root / ".tasktool.yaml").write_text(PHASED, encoding="utf-8")


CHANGES: dict[str, Callable[[Path], None]] = {
    "a task edited in place": _edited,
    "a task added": _added,
    "a task removed": _removed,
    "a task renamed (archived)": _renamed,
    "the config's phases": _configured,
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_a_change_to_any_input_is_seen_at_once(
    root: Path, home: Path, change: Callable[[Path], None]
) -> None:
    before = _answers(root, home, use_cache=False)
    _settle(root, home)
    poisoned = _poison(root, home)
    change(root)
    cold = _answers(root, home, use_cache=False)
    assert cold != before  # the change changes every answer...
    assert all(part != poisoned[at] for at, part in enumerate(cold))  # ...and the poison shows
    for _ in range(3):  # the change seen, then (once settled) remembered and recalled
        assert _answers(root, home) == cold


def test_other_options_are_never_answered_from_the_memo(root: Path, home: Path) -> None:
    _settle(root, home)
    repo = _load(root, home)()
    cold = [[item.to_json() for item in rank(repo, **options)] for options in NEXT_OPTIONS]
    memo = memo_path(repo, "next")
    for at, options in enumerate(NEXT_OPTIONS):
        memo.unlink()
        rank(repo, **options)  # the memo now holds this option set's answer alone
        _replace(memo, [Placed(0, repo.tasks[0].id, 999, ())])
        for other, answer in enumerate(cold):
            if other != at:
                assert [item.to_json() for item in rank(repo, **NEXT_OPTIONS[other])] == answer
        assert [item.score for item in rank(repo, **options)] == [999]  # its own: poisoned


def test_the_memo_keeps_the_last_few_answers(root: Path, home: Path) -> None:
    """Runs alternating between option sets each recall theirs."""
    _settle(root, home)
    repo = _load(root, home)()
    for options in NEXT_OPTIONS:
        rank(repo, **options)
    _replace(memo_path(repo, "next"), [Placed(0, repo.tasks[0].id, 999, ())])
    for options in NEXT_OPTIONS:
        assert [item.score for item in rank(repo, **options)] == [999]


def test_a_sibling_worktrees_change_is_seen_at_once(tmp_path: Path, home: Path) -> None:
    (tmp_path / "repos").mkdir()
    repo = Repo(tmp_path / "repos", home)
    sibling = repo.completed_sibling("wt-a", "feature-a", _age)
    _settle(repo.main, home)
    poisoned = _poison(repo.main, home)
    assert poisoned[1]["longest_chain"]["ids"] == ["poison"]  # the overlay's memo answers
    edit_in_place(sibling / "tasks" / "002-task.md", "title: Build", "title: B\nstatus: completed")
    cold = _answers(repo.main, home, use_cache=False)
    assert all(part != poisoned[at] for at, part in enumerate(cold))
    for _ in range(3):
        assert _answers(repo.main, home) == cold


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "garbage": lambda data: b"\x93garbage",
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "another format": lambda data: msgspec.msgpack.encode(
        ["derived-memo-0", *msgspec.msgpack.decode(data)[1:]]
    ),
    "a value of another shape": lambda data: _each(data, {"total": "many"}),
    "a task past the tasks": lambda data: _each(data, [[10**6, "001", 1, []]]),
    "another task at its place": lambda data: _each(data, [[0, "404", 1, []]]),
}


def _each(data: bytes, value: object) -> bytes:
    """``data`` (a memo) with ``value`` as every result."""
    fmt, entries = msgspec.msgpack.decode(data)
    return msgspec.msgpack.encode([fmt, [[key, value] for key, _ in entries]])


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_memo_is_computed_again_silently(
    root: Path, home: Path, damage: Callable[[bytes], bytes]
) -> None:
    cold = _answers(root, home, use_cache=False)
    _settle(root, home)
    repo = _load(root, home)()
    memos = [memo_path(repo, kind) for kind in ("next", "stats", "validate")]
    for memo in memos:
        memo.write_bytes(damage(memo.read_bytes()))
    assert _answers(root, home) == cold
    assert all(msgspec.msgpack.decode(m.read_bytes())[0] == "derived-memo-2" for m in memos)
    assert _answers(root, home) == cold


def _as_written_before_the_new_checks(memo: Path) -> None:
    """``memo`` as the code before ``task.invalid_id``, ``task.stale_temp`` and the
    dangling dependencies of archived tasks wrote it (format ``derived-memo-1``, in the
    file and in every key), every result a validation that found nothing."""
    _, entries = msgspec.msgpack.decode(memo.read_bytes())
    old = "derived-memo-1"
    keys = [msgspec.msgpack.encode([old, *msgspec.msgpack.decode(key)[1:]]) for key, _ in entries]
    memo.write_bytes(msgspec.msgpack.encode([old, [[key, []] for key in keys]]))


def test_a_validation_kept_by_older_code_is_not_recalled(root: Path, home: Path) -> None:
    cold = _answers(root, home, use_cache=False)
    assert cold[2]["errors"]  # the project has something to say
    _settle(root, home)
    memo = memo_path(_load(root, home)(), "validate")
    _as_written_before_the_new_checks(memo)
    assert _answers(root, home) == cold


def test_a_memo_that_cannot_be_written_changes_nothing(root: Path, home: Path) -> None:
    """Where the memos go is taken by folders (as unwritable as a read-only task directory
    is, even to root): every run computes, and answers as a cold run."""
    cold = _answers(root, home, use_cache=False)
    _settle(root, home)
    repo = _load(root, home)()
    for kind in ("next", "stats", "validate"):
        memo_path(repo, kind).unlink()
        memo_path(repo, kind).mkdir()
    for _ in range(2):
        assert _answers(root, home) == cold


@pytest.mark.unprivileged  # root writes into read-only folders: nox -s unprivileged runs it
def test_a_read_only_task_directory_still_answers(root: Path, home: Path) -> None:
    cold = _answers(root, home, use_cache=False)
    _settle(root, home)
    folders = [root / "tasks", root / "tasks" / ".tasktool"]
    for kind in ("next", "stats", "validate"):
        memo_path(_load(root, home)(), kind).unlink()
    for folder in folders:
        folder.chmod(0o555)
    try:
        for _ in range(2):
            assert _answers(root, home) == cold
    finally:
        for folder in folders:
            folder.chmod(0o755)


step = st.one_of(
    st.tuples(st.just("edit"), st.integers(1, 12), st.sampled_from(("low", "critical"))),
    st.tuples(st.just("status"), st.integers(1, 12), st.sampled_from(("completed", "blocked"))),
    st.tuples(st.just("racy"), st.integers(1, 12), st.sampled_from(("low", "high"))),
    st.tuples(st.just("add"), st.integers(11, 14), st.integers(1, 10)),
    st.tuples(st.just("remove"), st.integers(1, 14)),
    st.tuples(st.just("rename"), st.integers(1, 14)),
    st.tuples(st.just("config"), st.booleans()),
    st.tuples(st.just("damage"), st.sampled_from(("next", "stats", "validate"))),
    st.tuples(st.just("sibling"), st.integers(1, 10), st.sampled_from(("completed", "pending"))),
    st.tuples(st.just("run")),
)


def _step(root: Path, home: Path, sibling: Path | None, op: tuple[Any, ...]) -> None:
    kind, args = op[0], op[1:]
    tasks = root / "tasks"
    path = tasks / f"{args[0]:03d}-task.md" if kind not in ("config", "damage", "run") else tasks
    if kind == "run":
        _answers(root, home)
    elif kind == "config":
        (root / ".tasktool.yaml").write_text(PHASED if args[0] else CONFIG, encoding="utf-8")
    elif kind == "damage":
        memo = tasks / ".tasktool" / f"derived-{args[0]}.msgpack"
        if memo.is_file():
            memo.write_bytes(memo.read_bytes()[: memo.stat().st_size // 2])
    elif kind == "add":
        os.utime(_write(root, args[0], dependencies=[f"'{args[1]:03d}'"]), ns=(PAST_NS, PAST_NS))
    elif kind == "sibling" and sibling is not None:
        Repo.write(sibling, f"{args[0]:03d}", "There", status=args[1])
        _age(sibling / "tasks")
    elif not path.is_file():
        return
    elif kind == "remove":
        path.unlink()
    elif kind == "rename":
        os.replace(path, path.with_name(f"moved-{path.name}"))
    elif kind in ("edit", "racy", "status"):
        text = path.read_text(encoding="utf-8")
        field = "status" if kind == "status" else "priority"
        lines = [line for line in text.splitlines() if not line.startswith(f"{field}:")]
        changed = "\n".join([*lines[:2], f"{field}: {args[1]}", *lines[2:]]) + "\n"
        if kind == "racy":  # written just now: never trusted until it settles
            path.write_text(changed, encoding="utf-8")
        else:
            edit_in_place(path, text, changed)


def _always_cold(ops: list[tuple[Any, ...]], *, with_sibling: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        (base / "home").mkdir()
        sibling = None
        if with_sibling:
            (base / "repos").mkdir()
            repo = Repo(base / "repos", base / "home")
            root = repo.main
            sibling = repo.worktree("wt-a", branch="feature-a")
            _age(sibling / "tasks")
        else:
            root = base / "repo"
            (root / ".git").mkdir(parents=True)
        _project(root)
        for op in [("run",), ("run",), *ops]:
            _step(root, base / "home", sibling, op)
            cold = _answers(root, base / "home", use_cache=False)
            assert _answers(root, base / "home") == cold
            assert _answers(root, base / "home") == cold  # from what that run kept


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=8))
def test_warm_answers_always_equal_cold_ones(ops: list[tuple[Any, ...]]) -> None:
    _always_cold(ops, with_sibling=False)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=8))
def test_warm_answers_always_equal_cold_ones_with_a_sibling(ops: list[tuple[Any, ...]]) -> None:
    _always_cold(ops, with_sibling=True)
