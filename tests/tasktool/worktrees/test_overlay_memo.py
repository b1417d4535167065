"""The overlay's memo: a warm run applies the remembered verdict, and any change to what
it was derived from (a file here or in a sibling, edited in place; a worktree added,
removed or on another branch; a damaged memo) gives the overlay a fresh read would give.

Each test first *poisons* the memo (the right key, a wrong verdict): a run that wrongly
trusted it would show the poison instead of the cold answer."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task
from tasktool.planning.memos.overlay_memo import memo_path
from tasktool.planning.repository import Repository, load_context
from tasktool.planning.worktrees.overlay import Provenance, Verdict, Won
from tests.tasktool.cache_entries import bodies_read
from tests.tasktool.conftest import edit_in_place

from .conftest import Repo, Run, as_json, git

PAST_NS = (time.time_ns() // 1_000_000_000 - 3600) * 1_000_000_000  # outside the racy window


def _age(folder: Path) -> None:
    """Date every file and folder an hour back (entries changed a moment ago are never
    trusted, so the memo would not even be asked)."""
    for path in (folder, *folder.rglob("*")):
        os.utime(path, ns=(PAST_NS, PAST_NS))


def _load(cwd: Path, home: Path, *, use_cache: bool = True) -> Repository:
    return load_context(cwd=cwd, env={}, home=home, use_cache=use_cache)


Shown = tuple[tuple[Task, ...], tuple[Task, ...], tuple[Diagnostic, ...]]


def _shown(repo: Repository) -> Shown:
    return (bodies_read(repo.tasks), bodies_read(repo.archived), repo.worktree_diagnostics)


def _memo(cwd: Path) -> Path:
    return memo_path(cwd / "tasks")


def _poison(memo: Path, verdict: Verdict) -> None:
    """Keep the stored key, replace the verdict."""
    stored = msgspec.msgpack.decode(memo.read_bytes())
    stored[1][0][1] = msgspec.Raw(msgspec.msgpack.encode(verdict))  # the one entry's value
    memo.write_bytes(msgspec.msgpack.encode(stored))


@pytest.fixture
def three(repo: Repo) -> tuple[Path, Path]:
    """main, wt-a (001 in progress, 005 only there) and wt-b (002 completed, 003 cancelled
    while wt-a completed it: divergent), every file aged."""
    a = repo.worktree("wt-a", branch="feature-a")
    b = repo.worktree("wt-b", branch="feature-b")
    Repo.write(a, "001", "Design", status="in-progress")
    Repo.write(a, "005", "Only in A", status="in-review", body="kept whole")
    Repo.write(a, "003", "Ship", status="completed")
    Repo.write(b, "002", "Build", status="completed", dependencies=["'001'"])
    Repo.write(b, "003", "Ship", status="cancelled")
    for worktree in (repo.main, a, b):
        _age(worktree / "tasks")
    return a, b


def test_a_warm_run_applies_the_remembered_verdict(repo: Repo, three: tuple[Path, Path]) -> None:
    cold = _shown(_load(repo.main, repo.home, use_cache=False))
    assert not _memo(repo.main).exists()  # a run without caches keeps none
    _load(repo.main, repo.home)  # writes the parse caches and the indexes
    _load(repo.main, repo.home)  # the first run whose scan is the cache's: writes the memo
    assert _memo(repo.main).is_file()
    warm = _load(repo.main, repo.home)
    assert _shown(warm) == cold
    five = warm.by_id["005"]
    assert (five.sibling_only, warm.bodies.read(five).strip(), five.branch) == (
        True,
        "kept whole",
        "feature-a",
    )

    # Proof that the memo answers: a poisoned verdict under the right key is what shows.
    _poison(
        _memo(repo.main), Verdict(won=(Won(0, Provenance("blocked", None, None, "/x", "poison")),))
    )
    poisoned = _load(repo.main, repo.home)
    assert (poisoned.tasks[0].status, poisoned.tasks[0].branch) == ("blocked", "poison")
    assert "005" not in poisoned.by_id


def _cold(run: Run, repo: Repo) -> str:
    """``list --format json`` with no state at all (no caches, indexes or memo)."""
    shutil.rmtree(repo.main / "tasks" / ".tasktool", ignore_errors=True)
    return run(repo.main, "list", "--format", "json").stdout


def test_the_cli_output_is_the_same_cold_and_warm(repo: Repo, run: Run, three: object) -> None:
    cold = _cold(run, repo)
    first = run(repo.main, "list", "--format", "json").stdout
    second = run(repo.main, "list", "--format", "json").stdout
    third = run(repo.main, "list", "--format", "json")  # from the memo
    assert _memo(repo.main).is_file()
    assert cold == first == second == third.stdout
    statuses = {task["id"]: task["status"] for task in as_json(third)}
    assert statuses == {
        "001": "in-progress",
        "002": "completed",
        "003": "completed",
        "005": "in-review",
    }


def _in_sibling(repo: Repo, a: Path, b: Path) -> None:
    edit_in_place(a / "tasks" / "001-task.md", "status: in-progress", "status: in-review")


def _here(repo: Repo, a: Path, b: Path) -> None:
    edit_in_place(repo.main / "tasks" / "002-task.md", "title: Build", "title: Built")


def _new_worktree(repo: Repo, a: Path, b: Path) -> None:
    c = repo.worktree("wt-c", branch="feature-c")
    Repo.write(c, "007", "Only in C")
    _age(c / "tasks")


def _removed_worktree(repo: Repo, a: Path, b: Path) -> None:
    git(repo.main, "worktree", "remove", "--force", str(b))


def _renamed_branch(repo: Repo, a: Path, b: Path) -> None:
    git(a, "branch", "-m", "feature-a", "renamed")  # no file changes: only the provenance


CHANGES: dict[str, Callable[[Repo, Path, Path], None]] = {
    "edit in place in a sibling": _in_sibling,
    "edit in place here": _here,
    "a new sibling worktree": _new_worktree,
    "a removed sibling worktree": _removed_worktree,
    "a sibling's branch renamed": _renamed_branch,
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_a_change_to_any_input_is_seen_at_once(
    repo: Repo, three: tuple[Path, Path], change: Callable[[Repo, Path, Path], None]
) -> None:
    for _ in range(3):
        _load(repo.main, repo.home)
    _poison(_memo(repo.main), Verdict())
    change(repo, *three)
    cold = _shown(_load(repo.main, repo.home, use_cache=False))
    assert any(task.worktree for task in cold[0])  # the poison would show
    for _ in range(3):  # the change seen, then (once settled) remembered and recalled
        assert _shown(_load(repo.main, repo.home)) == cold


def test_a_scan_that_parsed_a_file_never_recalls_a_verdict(
    repo: Repo, three: tuple[Path, Path]
) -> None:
    """A file written a moment ago is parsed by every scan (never from the cache alone):
    such a scan has no identity, so nothing is recalled for it, whatever was stored."""
    for _ in range(3):
        _load(repo.main, repo.home)
    Repo.write(repo.main, "010", "Fresh")  # racy until it settles
    for _ in range(2):
        _load(repo.main, repo.home)
    _poison(_memo(repo.main), Verdict())
    edit_in_place(repo.main / "tasks" / "001-task.md", "title: Design", "title: Designed")
    cold = _shown(_load(repo.main, repo.home, use_cache=False))
    assert any(task.worktree for task in cold[0])  # the poison would show
    assert _shown(_load(repo.main, repo.home)) == cold


def test_a_siblings_racy_file_edited_again_in_place_is_seen(
    repo: Repo, three: tuple[Path, Path]
) -> None:
    """A sibling's file written a moment ago (racy: its index stores a signature that
    never matches) and then edited in place with its mtime kept: its index's signatures,
    and so a digest made of them, are the same before and after, while the status
    changed. Such an index has no digest and the overlay is not remembered."""
    wt_a, _ = three
    for _ in range(3):
        _load(repo.main, repo.home)
    path = wt_a / "tasks" / "001-task.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("status: in-progress", "status: pending"), encoding="utf-8")
    assert _load(repo.main, repo.home).by_id["001"].status == "pending"
    assert _load(repo.main, repo.home).cache.identity is None  # none: nothing kept
    edit_in_place(path, "status: pending", "status: in-review")
    cold = _shown(_load(repo.main, repo.home, use_cache=False))
    assert {task.id: task.status for task in cold[0]}["001"] == "in-review"
    for _ in range(2):
        assert _shown(_load(repo.main, repo.home)) == cold


def _entry_value(data: bytes, value: object) -> bytes:
    """The memo ``data`` with its one entry's value replaced by ``value``."""
    stored = msgspec.msgpack.decode(data)
    return msgspec.msgpack.encode([stored[0], [[stored[1][0][0], value]]])


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "garbage": lambda data: b"\x93garbage",
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "another format": lambda data: msgspec.msgpack.encode(["overlay-memo-0", [[b"k", None]]]),
    "a verdict that is no verdict": lambda data: _entry_value(data, {"won": 1}),
    "a row past the tasks": lambda data: _entry_value(
        data, [[[10**6, ["blocked", None, None, "/x", None]]], [], []]
    ),
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_memo_is_computed_again_silently(
    repo: Repo, run: Run, three: object, damage: Callable[[bytes], bytes]
) -> None:
    cold = _cold(run, repo)
    for _ in range(2):
        run(repo.main, "list")
    memo = _memo(repo.main)
    memo.write_bytes(damage(memo.read_bytes()))
    assert run(repo.main, "list", "--format", "json").stdout == cold  # no stderr either (run)
    assert run(repo.main, "list", "--format", "json").stdout == cold
    assert msgspec.msgpack.decode(memo.read_bytes())[0] == "overlay-memo-2"  # rewritten


STATUSES = ("pending", "in-progress", "completed", "cancelled")
step = st.one_of(
    st.tuples(st.just("edit"), st.booleans(), st.integers(0, 9), st.sampled_from(STATUSES)),
    st.tuples(st.just("racy"), st.booleans(), st.integers(0, 9), st.sampled_from(STATUSES)),
    st.tuples(st.just("add"), st.booleans(), st.integers(0, 9), st.sampled_from(STATUSES)),
    st.tuples(st.just("remove"), st.booleans(), st.integers(0, 9)),
    st.tuples(st.just("damage"), st.sampled_from(("memo", "index", "cache"))),
    st.tuples(st.just("load")),
)


def _files(worktree: Path) -> list[Path]:
    return sorted((worktree / "tasks").glob("*.md"))


def _step(repo: Repo, sibling: Path, op: tuple[object, ...]) -> None:
    kind, args = op[0], op[1:]
    if kind == "damage":  # each file of the memo, the sibling indexes or the parse cache
        state = repo.main / "tasks" / ".tasktool"
        where = {"memo": [], "index": state / "worktrees", "cache": state / "cache"}[str(args[0])]
        found = sorted(where.glob("*")) if isinstance(where, Path) else [_memo(repo.main)]
        for path in (path for path in found if path.is_file()):
            path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        return
    if kind == "load":
        _load(repo.main, repo.home)
        return
    worktree = sibling if args[0] else repo.main
    files = _files(worktree)
    if kind == "add":
        path = Repo.write(worktree, f"0{20 + int(str(args[1]))}", "New", status=args[2])
        os.utime(path, ns=(PAST_NS, PAST_NS))
    elif files and kind == "remove":
        files[int(str(args[1])) % len(files)].unlink()
    elif files and kind in ("edit", "racy"):
        path = files[int(str(args[1])) % len(files)]
        text = path.read_text(encoding="utf-8")
        lines = [line for line in text.splitlines() if not line.startswith("status:")]
        changed = "\n".join([*lines[:2], f"status: {args[2]}", *lines[2:]]) + "\n"
        if kind == "racy":  # written just now: never trusted until it settles
            path.write_text(changed, encoding="utf-8")
        else:
            edit_in_place(path, text, changed)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=8))
@example([("racy", True, 1, "pending"), ("edit", True, 1, "in-progress")])
def test_warm_runs_always_equal_the_cold_overlay(ops: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "home").mkdir()
        (Path(folder) / "repos").mkdir()
        repo = Repo(Path(folder) / "repos", Path(folder) / "home")
        sibling = repo.worktree("wt-a", branch="feature-a")
        Repo.write(sibling, "001", "Design", status="in-progress")
        Repo.write(sibling, "009", "Only there", status="blocked")
        for worktree in (repo.main, sibling):
            _age(worktree / "tasks")
        for op in [("load",), ("load",), *ops]:
            _step(repo, sibling, op)
            cold = _shown(_load(repo.main, repo.home, use_cache=False))
            assert _shown(_load(repo.main, repo.home)) == cold
            assert _shown(_load(repo.main, repo.home)) == cold  # from what that run kept
