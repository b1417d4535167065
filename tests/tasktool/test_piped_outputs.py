"""Read commands' piped outputs kept from one run to the next: a repeated ``list``,
``next``, ``board``, ``stats``, ``graph``, ``tracks``, ``tags`` or ``search`` replays what
the run before printed, and any change to what that was made from (a task file edited,
added, removed or renamed; the config; the command's arguments) prints what a cold run
prints.

As in test_output_memo.py, each test *poisons* the kept outputs (the right key, other
bytes): a run that wrongly replayed one would print the poison."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tasktool.cli.main import main
from tests.tasktool.conftest import Project
from tests.tasktool.planning.test_derived_memo import CHANGES, _age, _project
from tests.tasktool.test_output_memo import POISON, _kept, _poison

#: Each kept command with arguments whose output depends on the tasks.
COMMANDS: dict[str, tuple[str, ...]] = {
    "list": ("list",),
    "list grouped, json": ("list", "--group-by", "phase", "--format", "json"),
    "next": ("next", "--limit", "0"),
    "board": ("board",),
    "stats": ("stats",),
    "graph": ("graph", "--exclude-status", "cancelled"),
    "tracks": ("tracks",),
    "tags": ("tags", "--archived"),
    "search": ("search", "task"),
}


def _run(root: Path, home: Path, argv: tuple[str, ...]) -> bytes:
    """``tasktool ARGV`` in process, its stdout (exit 0, nothing on stderr)."""
    with contextlib.chdir(root):  # where the config is found
        done = CliRunner().invoke(main, list(argv), env={"HOME": str(home)})
    assert done.exit_code == 0, done.output
    assert done.stderr == ""
    return done.stdout_bytes


def _cold(root: Path, home: Path, argv: tuple[str, ...]) -> bytes:
    """What ``argv`` prints with nothing kept (the kept outputs and caches moved aside)."""
    state = root / "tasks" / ".tasktool"
    aside = root.parent / "aside"
    if state.exists():
        state.rename(aside)
    try:
        return _run(root, home, argv)
    finally:
        if state.exists():
            shutil.rmtree(state)
        if aside.exists():
            aside.rename(state)


@pytest.fixture
def repo(project: Project) -> Project:
    """The derived memo's ten tasks (dependencies, priorities, phases), every file aged."""
    _project(project.root)
    return project


@pytest.mark.parametrize("argv", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_repeated_command_replays_and_a_change_is_seen(
    repo: Project, argv: tuple[str, ...]
) -> None:
    root, home = repo.root, repo.home
    cold = _cold(root, home, argv)
    for _ in range(2):  # the first run writes the parse cache; then every file is settled
        assert _run(root, home, argv) == cold
    assert _kept(root)
    _poison(root)
    assert _run(root, home, argv) == POISON  # replayed, not computed
    for change in CHANGES.values():
        change(root)
        fresh = _cold(root, home, argv)
        assert _run(root, home, argv) == fresh  # not the poison
        _poison(root)


def test_other_arguments_are_not_answered_from_the_kept_output(repo: Project) -> None:
    root, home = repo.root, repo.home
    _run(root, home, ("next", "--limit", "1"))
    _run(root, home, ("next", "--limit", "1"))
    _poison(root)
    assert _run(root, home, ("next", "--limit", "2")) == _cold(root, home, ("next", "--limit", "2"))
    assert _run(root, home, ("next", "--limit", "2", "--format", "json")) != POISON


def test_graph_keeps_its_warnings_and_replays_them(repo: Project) -> None:
    """``graph`` warns about a cycle on stderr, which depends only on the tasks: the
    warning is kept with the drawing and a replay says it again."""
    root, home = repo.root, repo.home
    (root / "tasks" / "003-task.md").write_text(
        "---\nid: '003'\ntitle: Task 003\ndependencies: ['004']\n---\n", encoding="utf-8"
    )
    (root / "tasks" / "004-task.md").write_text(
        "---\nid: '004'\ntitle: Task 004\ndependencies: ['003']\n---\n", encoding="utf-8"
    )
    _age(root)  # the next runs are settled: they keep their output
    for _ in range(2):
        with contextlib.chdir(root):
            done = CliRunner().invoke(main, ["graph"], env={"HOME": str(home)})
        assert "dependency cycle" in done.stderr
    assert [path for path in _kept(root) if path.name.startswith("graph~notes-")]
    _poison(root)
    with contextlib.chdir(root):
        done = CliRunner().invoke(main, ["graph"], env={"HOME": str(home)})
    assert (done.stdout_bytes, done.stderr_bytes) == (POISON, POISON)


def test_commands_that_read_other_files_are_not_kept(repo: Project) -> None:
    """``get`` (worklogs), ``validate`` (exit status, temporary files) and ``todos``
    (source files) compute every time."""
    root, home = repo.root, repo.home
    for argv in (("get", "002"), ("validate",), ("todos",)):
        with contextlib.chdir(root):
            for _ in range(2):
                CliRunner().invoke(main, list(argv), env={"HOME": str(home)})
    assert _kept(root) == []


def test_kept_outputs_are_pruned_per_command(repo: Project) -> None:
    """Each command keeps its last two outputs: one command's never push another's out."""
    root, home = repo.root, repo.home
    for limit in ("1", "2", "3"):
        for _ in range(2):
            _run(root, home, ("next", "--limit", limit))
    _run(root, home, ("stats",))
    _run(root, home, ("stats",))
    names = [path.name.partition("-")[0] for path in _kept(root)]
    assert sorted(names) == ["next", "next", "stats"]
