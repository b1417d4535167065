"""The output memo: a repeated ``list --format json`` replays the bytes an earlier run
printed, and any change to what they were made from (a task file edited in place, added,
removed or renamed; the config; the command's options; a damaged memo) prints what a
cold run prints.

Each test first *poisons* the kept output (the right key, other bytes): a run that wrongly
replayed it would print the poison instead of the cold output."""

from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasktool.cli.main import main
from tasktool.files.caches.memo import HEADER
from tasktool.model.views import TASK_KEYS, TaskRows
from tasktool.planning.repository import load_context
from tasktool.present import output_memo
from tasktool.present.documents import list_tasks
from tasktool.present.render import write_json_array
from tests.tasktool.conftest import Project
from tests.tasktool.planning.test_derived_memo import (
    CHANGES,
    _age,
    _project,
    _step,
    step,
)

POISON = b'["poison"]\n'
#: ``list`` options and the query they make (what the memo keys on).
QUERIES: dict[tuple[str, ...], dict[str, Any]] = {
    (): {},
    ("--archived",): {"archived": True},
    ("--filter", "priority=high,critical", "--sort", "-priority", "--limit", "3"): {
        "filters": ("priority=high,critical",),
        "sort": "-priority",
        "limit": 3,
    },
    ("--columns", "id,title"): {"keys": ("id", "title")},
}
COLUMNS = ("--columns", "id,title")


def _cold(root: Path, home: Path, argv: tuple[str, ...] = ()) -> bytes:
    """What ``list --format json`` with ``argv`` prints, made without any cache."""
    query: dict[str, Any] = {
        "filters": (),
        "sort": None,
        "limit": 0,
        "archived": False,
        "keys": TASK_KEYS,
    }
    query |= QUERIES[argv]
    repo = load_context(cwd=root, env={}, home=home, use_cache=False)
    tasks = list_tasks(
        repo,
        filters=query["filters"],
        sort=query["sort"],
        limit=query["limit"],
        archived=query["archived"],
    )
    out = io.BytesIO()
    write_json_array(TaskRows(tasks, query["keys"]), out.write)
    return out.getvalue()


def _run(root: Path, home: Path, argv: tuple[str, ...] = ()) -> tuple[bytes, str]:
    """``list --format json`` in process: its stdout and stderr."""
    with contextlib.chdir(root):  # where the config is found
        done = CliRunner().invoke(
            main, ["list", "--format", "json", *argv], env={"HOME": str(home)}
        )
    assert done.exit_code == 0, done.output
    return done.stdout_bytes, done.stderr


def _kept(root: Path) -> list[Path]:
    folder = root / "tasks" / ".tasktool" / "output"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _poison(root: Path) -> None:
    """Every kept output's bytes replaced by ``POISON``, under the same key."""
    for path in _kept(root):
        path.write_bytes(path.read_bytes()[:HEADER] + POISON)


def _settle(root: Path, home: Path, argv: tuple[str, ...] = ()) -> None:
    """Runs until the output is kept: the first run after a change that left a file racy
    (written a moment ago) has no identity; the one after it does."""
    for _ in range(2):
        _run(root, home, argv)


@pytest.fixture
def home(project: Project) -> Path:
    return project.home


@pytest.fixture
def root(project: Project) -> Path:
    """The derived memo's ten tasks (dependencies, priorities, phases), every file aged."""
    _project(project.root)
    return project.root


def test_a_repeated_list_replays_what_the_first_run_printed(root: Path, home: Path) -> None:
    cold = _cold(root, home)
    assert _run(root, home)[0] == cold  # the first run: no cache, parses, keeps the cache
    assert _kept(root)  # every file cached for good: that run kept its output too
    assert _run(root, home)[0] == cold
    _poison(root)
    assert _run(root, home)[0] == POISON  # replayed


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_a_change_to_any_input_is_seen_at_once(
    root: Path, home: Path, change: Callable[[Path], None]
) -> None:
    before = _cold(root, home)
    _settle(root, home)
    _poison(root)
    change(root)
    cold = _cold(root, home)
    # A file's change changes the output; the config's (phases) changes only the key.
    assert (cold != before) is (change is not CHANGES["the config's phases"])
    assert _run(root, home)[0] == cold  # not the poison
    _poison(root)  # that run, files settled, kept its output: the next replays it
    assert _run(root, home)[0] == POISON


def test_a_run_that_parsed_a_racy_file_keeps_no_output(root: Path, home: Path) -> None:
    """A file written a moment ago is parsed again by every run until it settles, so no
    later run could replay what this one printed: it is not kept."""
    (root / "tasks" / "099-new.md").write_text("---\nid: '099'\ntitle: New\n---\n")
    assert _run(root, home)[0] == _cold(root, home)
    assert _kept(root) == []


def test_an_empty_folder_made_after_the_cache_is_cached(root: Path, home: Path) -> None:
    """A folder without task files changes no output, but the cache learns it (else every
    later run would scan again and never replay)."""
    _settle(root, home)
    (root / "tasks" / "drafts").mkdir()  # no file touched: no row to parse
    assert _run(root, home)[0] == _cold(root, home)
    _poison(root)
    assert _run(root, home)[0] == POISON


def test_other_options_are_never_answered_from_the_memo(root: Path, home: Path) -> None:
    for argv in QUERIES:
        for path in _kept(root):
            path.unlink()
        _settle(root, home, argv)
        _poison(root)  # this query's output alone
        assert _run(root, home, argv)[0] == POISON
        for other in QUERIES:
            if other != argv:
                assert _run(root, home, other)[0] == _cold(root, home, other)


def test_the_most_recently_used_outputs_are_kept(root: Path, home: Path) -> None:
    first, second, third = list(QUERIES)[:3]
    for argv in (first, second):
        _settle(root, home, argv)
    assert len(_kept(root)) == output_memo.KEPT == 2
    _poison(root)
    assert _run(root, home, first)[0] == POISON  # used: now the most recent
    _run(root, home, third)  # a third output pushes the least recently used out
    assert len(_kept(root)) == 2
    assert _run(root, home, first)[0] == POISON
    assert _run(root, home, second)[0] == _cold(root, home, second)


def _swap(root: Path) -> None:
    """Each kept file's content moved to another's name (a key at the wrong digest)."""
    paths = _kept(root)
    assert len(paths) == 2
    contents = [path.read_bytes() for path in paths]
    for path, data in zip(paths, [*contents[1:], contents[0]], strict=True):
        path.write_bytes(data)


def _rewrite(change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    """Each kept file's bytes changed by ``change``."""

    def damage(root: Path) -> None:
        for path in _kept(root):
            path.write_bytes(change(path.read_bytes()))

    return damage


def _folders_instead(root: Path) -> None:
    for path in _kept(root):
        path.unlink()
        path.mkdir()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "garbage": _rewrite(lambda data: b"\x93garbage"),
    "empty": _rewrite(lambda data: b""),
    "a key cut short": _rewrite(lambda data: data[:20]),
    "a huge key length": _rewrite(lambda data: b"\xff" * 8 + data[8:]),
    "another key at its name": _swap,
    "a folder at its name": _folders_instead,
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_memo_is_made_again_silently(
    root: Path, home: Path, damage: Callable[[Path], None]
) -> None:
    """Two outputs kept (the default query and two columns: other bytes), both damaged
    alike."""
    cold, picked = _cold(root, home), _cold(root, home, COLUMNS)
    assert cold != picked
    for argv in ((), COLUMNS):
        _settle(root, home, argv)
    damage(root)
    out, err = _run(root, home)
    assert (out, err) == (cold, "")
    assert _run(root, home)[0] == cold
    assert _run(root, home, COLUMNS)[0] == picked


def test_a_broken_file_is_still_warned_about_when_replayed(root: Path, home: Path) -> None:
    broken = root / "tasks" / "050-broken.md"
    broken.write_text("---\nid: '050'\ntitle: [unclosed\n---\n", encoding="utf-8")
    _age(root / "tasks")
    _settle(root, home)
    _poison(root)
    out, err = _run(root, home)
    assert out == POISON
    assert "050-broken.md" in err


def test_an_output_that_fails_part_way_keeps_nothing(root: Path, home: Path) -> None:
    """A write that raises (a closed pipe) ends the block: no memo, no temporary file."""
    _settle(root, home)
    for path in _kept(root):
        path.unlink()
    repo = load_context(cwd=root, env={}, home=home)

    def fail_part_way() -> None:
        with output_memo.recording(repo, "list-json", ()) as write:
            write(b"[\n")
            raise BrokenPipeError

    with pytest.raises(BrokenPipeError):
        fail_part_way()
    assert list((root / "tasks" / ".tasktool" / "output").iterdir()) == []


def _child(root: Path, home: Path, stdout: Any, limit: int | None = None) -> bytes:
    """``list --format json`` as its own process (the console script's entry point),
    printing to ``stdout`` (captured when ``subprocess.PIPE``: returned), the files it
    writes capped at ``limit`` bytes."""

    def cap() -> None:
        if limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-m", "tasktool", "-d", str(root / "tasks"), "list", "--format", "json"],
        cwd=root,
        env={"HOME": str(home), "PATH": os.environ["PATH"]},
        stdout=stdout,
        stderr=subprocess.PIPE,
        preexec_fn=cap,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    return done.stdout or b""


@pytest.fixture
def many(tmp_path: Path, home: Path) -> Path:
    """A repository with 300 tasks (a JSON list of about 200 KB)."""
    root = tmp_path / "many"
    (root / ".git").mkdir(parents=True)
    (root / ".tasktool.yaml").write_text("dir: tasks\n", encoding="utf-8")
    for n in range(300):
        path = root / "tasks" / f"{n:04d}-task.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nid: '{n:04d}'\ntitle: Task number {n}\n---\n", encoding="utf-8")
    _age(root)
    return root


@pytest.mark.parametrize("mode", ["pipe", "r+b", "ab"])
def test_a_replay_reaches_any_kind_of_output(many: Path, home: Path, mode: str) -> None:
    """``sendfile`` to a pipe or a file, after what it already holds; a file opened to
    append (``ab``) refuses ``sendfile``: the bytes are copied."""
    cold = _cold(many, home)
    out = many.parent / "out.json"
    for _ in range(3):  # the first run makes and keeps the output, the others replay it
        if mode == "pipe":
            assert _child(many, home, subprocess.PIPE) == cold
            continue
        out.write_bytes(b"before\n")
        with out.open(mode) as handle:
            handle.seek(len(b"before\n"))
            _child(many, home, handle)
        assert out.read_bytes() == b"before\n" + cold
    assert len(_kept(many)) == 1


def test_a_memo_that_cannot_be_written_in_full_is_dropped(many: Path, home: Path) -> None:
    """Files capped below the output's size (as on a full disk): the output is whole,
    the command succeeds, and no memo or temporary file is left."""
    cold = _cold(many, home)
    _child(many, home, subprocess.PIPE)  # the parse cache, written without a cap
    for path in _kept(many):
        path.unlink()
    assert _child(many, home, subprocess.PIPE, limit=len(cold) // 2) == cold
    assert _kept(many) == []
    assert list((many / "tasks" / ".tasktool" / "output").iterdir()) == []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=8))
def test_warm_output_always_equals_cold_output(ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        (base / "home").mkdir()
        root = base / "repo"
        (root / ".git").mkdir(parents=True)
        _project(root)
        for op in [("run",), *ops]:
            _step(root, base / "home", None, op)
            for argv in QUERIES:
                cold = _cold(root, base / "home", argv)
                assert _run(root, base / "home", argv)[0] == cold
                assert _run(root, base / "home", argv)[0] == cold  # from what that run kept
