"""The get index: a warm ``get`` answers from the kept index of ids and the one row it
needs, and prints exactly what the full path (every task decoded) prints, for every id
and format, errors included, after any edit.

The full path is what ``get`` takes when the parse cache cannot name the tasks: here the
task directory's ``.tasktool`` is a file, so no cache (and no index) is ever written.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasktool.files.caches import cache
from tasktool.files.caches.cache import ParseCache
from tasktool.files.caches.id_columns import IdColumns
from tasktool.model.errors import TaskToolError
from tasktool.planning.get_index import lookup
from tasktool.planning.repository import Repository, load_context
from tasktool.present.documents import get_document
from tests.tasktool.conftest import edit_in_place, task_text
from tests.tasktool.test_cli import tasktool_group
from tests.tasktool.test_scan import columns_kept, columns_named
from tests.tasktool.worktrees.conftest import Repo

PAST_NS = (time.time_ns() // 1_000_000_000 - 3600) * 1_000_000_000  # outside the racy window
#: (file below the task directory, id, fields): duplicates (active twice, active and
#: archived), children (active, archived, of a duplicated id), dependencies met, unmet,
#: missing, cancelled, repeated and on a duplicated id, natural order (9 < 10).
TASKS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("001-a.md", "001", {"status": "completed", "body": "Done.\n\n## Notes\nsome"}),
    ("002-a.md", "002", {"dependencies": ["'001'", "'404'"], "priority": "high"}),
    ("g/003-a.md", "003", {"parent": "'002'", "status": "in-progress"}),
    ("004-a.md", "004", {"parent": "'002'", "dependencies": ["'003'", "'003'", "'002'"]}),
    ("005-a.md", "005", {"dependencies": ["'001'"]}),
    ("g/005-b.md", "005", {"dependencies": ["'002'"], "parent": "'002'"}),
    ("006-a.md", "006", {}),
    ("archive/006-b.md", "006", {"status": "completed"}),
    ("007-a.md", "007", {"dependencies": ["'005'", "'008'"], "parent": "'005'"}),
    (
        "archive/008-a.md",
        "008",
        {"status": "completed", "parent": "'002'", "dependencies": ["'002'"]},
    ),
    ("g/archive/9-a.md", "9", {"status": "cancelled"}),
    ("10-a.md", "10", {"dependencies": ["'9'", "'006'"], "parent": "'9'"}),
    ("h/T-2-a.md", "T-2", {"parent": "'10'", "dependencies": ["'10'"]}),
    ("h/T-10-a.md", "T-10", {"parent": "'10'", "status": "blocked"}),
    ("h/017-a.md", "017", {"dependencies": ["'T-2'"]}),
)
#: Files that cannot be read: one names an id no task holds, one an id a task holds.
BROKEN = {
    "g/014-bad.md": "---\nid: '014'\ntitle: [unclosed\n---\n",
    "h/017-bad.md": "---\nid: '017'\nstatus: [oops\n---\n",
}
IDS = ("001", "002", "003", "004", "005", "006", "007", "008", "9", "10", "T-2", "T-10")
ASKED = (*IDS, "014", "017", "404", "", "t-2", "00")


def _age(folder: Path) -> None:
    for path in (folder, *folder.rglob("*")):
        os.utime(path, ns=(PAST_NS, PAST_NS))


def _write(tasks: Path, relative: str, task_id: str, fields: dict[str, object]) -> None:
    path = tasks / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(task_text(task_id, f"Task {task_id}", **fields), encoding="utf-8")


def _project(root: Path) -> Path:
    tasks = root / "tasks"
    for relative, task_id, fields in TASKS:
        _write(tasks, relative, task_id, fields)
    for relative, text in BROKEN.items():
        (tasks / relative).write_text(text, encoding="utf-8")
    (tasks / "README.md").write_text("# not a task\n", encoding="utf-8")
    (tasks / ".worklogs").mkdir()
    (tasks / ".worklogs" / "002.md").write_text(
        "## 2026-01-02T03:04:05Z\n\nstarted\n\n## 2026-01-03T03:04:05Z\n\nmore\n"
    )
    (tasks / "h" / ".worklogs").mkdir()
    (tasks / "h" / ".worklogs" / "T-2.md").write_text("## 2026-02-01T00:00:00Z\n\nhere\n")
    (root / ".tasktool.yaml").write_text("dir: tasks\n", encoding="utf-8")
    _age(root)
    return tasks


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    for name in [name for name in os.environ if name.startswith("TASKTOOL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path / "repo")
    _project(tmp_path / "repo")
    return tmp_path / "repo"


def _load(root: Path, *, use_cache: bool = True) -> Repository:
    """The repository as ``get`` loads it (a scan that parsed a file writes that folder's
    rows file anew, and its columns with it)."""
    return load_context(cwd=root, env={}, home=root.parent / "home", use_cache=use_cache)


def _answer(repo: Repository, task_id: str) -> Any:
    """``get``'s document, or its error's code and message."""
    try:
        return get_document(repo, task_id)
    except TaskToolError as error:
        return (error.code, error.message)


def _cold(root: Path, ids: tuple[str, ...]) -> dict[str, Any]:
    """The full path's answers: no cache, so no identity and no index."""
    repo = _load(root, use_cache=False)
    assert repo.cache.identity is None
    return {task_id: _answer(repo, task_id) for task_id in ids}


def _warm(root: Path, ids: tuple[str, ...]) -> dict[str, Any]:
    repo = _load(root)
    assert repo.cache.identity is not None
    return {task_id: _answer(repo, task_id) for task_id in ids}


def _named(root: Path) -> set[str]:
    """The names of the columns of each rows file the cache's head names."""
    head = ParseCache.open(root / "tasks").head
    assert head is not None
    return columns_named(head.files)


@pytest.mark.parametrize("fmt", ["json", "yaml", "table"])
def test_every_id_prints_what_the_full_path_prints(root: Path, fmt: str) -> None:
    group = tasktool_group()

    def outputs() -> dict[str, tuple[int, str, str]]:
        found = {}
        for task_id in ASKED:
            result = CliRunner().invoke(group, ["get", task_id, "--format", fmt])
            found[task_id] = (result.exit_code, result.stdout, result.stderr)
        return found

    state = root / "tasks" / ".tasktool"
    state.write_text("not a directory: nothing is cached\n", encoding="utf-8")
    cold = outputs()
    state.unlink()
    first = outputs()  # the first run parses and writes the cache with its columns...
    kept = columns_kept(root / "tasks")
    assert set(kept) == _named(root)
    assert outputs() == first == cold  # ...which every later run reads
    assert columns_kept(root / "tasks") == kept
    codes = {task_id: cold[task_id][0] for task_id in ASKED}
    assert {task_id for task_id, code in codes.items() if code == 0} == {*IDS, "017"} - {
        "005",
        "006",
    }
    errors = {task_id: cold[task_id][2] for task_id in ("005", "006", "014", "404", "")}
    assert "[task.ambiguous_id]" in errors["005"]
    assert "g/005-b.md" in errors["005"]
    assert "[task.ambiguous_id]" in errors["006"]
    assert "archive/006-b.md" in errors["006"]
    assert "[task.broken]" in errors["014"]
    assert "[task.not_found]" in errors["404"]
    assert "[task.not_found]" in errors[""]
    assert all("014-bad.md" in err and "017-bad.md" in err for _, _, err in cold.values())


def test_the_answers_hold_what_get_shows(root: Path) -> None:
    """The fixture exercises every part of the document (a comparison of two empty
    answers would prove nothing)."""
    _warm(root, ())
    found = _warm(root, IDS)
    assert found == _cold(root, IDS)
    detail = found["002"]
    assert detail["dependents"] == ["004"]  # not 005: its first copy depends on 001
    assert found["001"]["dependents"] == ["002", "005"]
    assert found["003"]["dependents"] == ["004"]
    assert [child["id"] for child in detail["children"]] == ["003", "004"]
    assert detail["unmet_dependencies"] == ["404"]
    assert detail["blocked"]
    assert detail["worklog"]["entries"] == 2
    assert found["10"]["children"][0] == {"id": "T-2", "title": "Task T-2", "status": "pending"}
    assert found["10"]["unmet_dependencies"] == ["9", "006"]
    assert found["T-2"]["worklog"]["path"].endswith("h/.worklogs/T-2.md")
    assert found["001"]["body"].startswith("Done.")
    assert found["004"]["unmet_dependencies"] == ["003", "003", "002"]


def test_a_warm_get_decodes_no_row_but_its_own(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the index kept, ``get`` never decodes the cache's rows as a whole (the
    broken files' warnings included: their rows are read alone too)."""
    asked = tuple(task_id for task_id in ASKED if task_id)  # "" is looked up in full
    _warm(root, ())
    expected = _warm(root, asked)

    def refuse(*args: object) -> None:
        raise AssertionError("every row decoded")

    monkeypatch.setattr(cache, "read_rows", refuse)
    repo = _load(root)
    with pytest.raises(AssertionError, match="every row decoded"):
        repo.tasks  # noqa: B018 (the refusal works: decoding them all is refused)
    repo = _load(root)
    assert [problem.file for problem in repo.broken] == [
        str(root / "tasks" / name) for name in sorted(BROKEN)
    ]
    assert {task_id: _answer(repo, task_id) for task_id in asked} == expected


def _folder_index(root: Path, folder: str) -> Path:
    """The columns kept for the task directory's subfolder ``folder``."""
    cache = ParseCache.open(root / "tasks")
    assert cache.head is not None
    paths = [Path(f.path) for f in cache.head.folders]
    name = cache.head.files[paths.index(root / "tasks" / folder)]
    return root / "tasks" / ".tasktool" / "cache" / columns_named([name]).pop()


def test_a_folders_columns_are_trusted_until_its_rows_change(root: Path) -> None:
    """Wrong columns beside a rows file show (the columns do answer); a change to a file
    of that folder writes a new rows file with new columns, and a change elsewhere leaves
    them be."""
    _warm(root, ())
    _warm(root, ("002",))
    path = _folder_index(root, "g")
    index = msgspec.msgpack.decode(path.read_bytes(), type=IdColumns)
    parents = "\0".join("" if parent == "002" else parent for parent in index.parents.split("\0"))
    path.write_bytes(msgspec.msgpack.encode(msgspec.structs.replace(index, parents=parents)))
    poisoned = [child["id"] for child in _warm(root, ("002",))["002"]["children"]]
    assert poisoned == ["004"]  # 003, in g, is not found: the poisoned columns answered
    edit_in_place(root / "tasks" / "h" / "T-10-a.md", "status: blocked", "status: pending")
    _warm(root, ())
    assert [child["id"] for child in _warm(root, ("002",))["002"]["children"]] == poisoned
    edit_in_place(root / "tasks" / "g" / "003-a.md", "status: in-progress", "status: pending")
    assert _warm(root, ASKED) == _cold(root, ASKED)
    assert _warm(root, ASKED) == _cold(root, ASKED)
    assert [child["id"] for child in _warm(root, ("002",))["002"]["children"]] == ["003", "004"]


def test_no_index_with_sibling_worktrees(tmp_path: Path) -> None:
    """With the overlay, ``get`` shows the sibling's status (the full path): the cache's
    rows are not what it shows."""
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "repos").mkdir()
    repo = Repo(tmp_path / "repos", home)
    repo.completed_sibling("wt", "feature", _age)
    for _ in range(2):
        loaded = load_context(cwd=repo.main, env={}, home=home)
        assert loaded.worktrees is not None
        assert lookup(loaded, "001") is None
        assert get_document(loaded, "001")["status"] == "completed"


def test_an_id_that_cannot_be_indexed_is_looked_up_in_full(root: Path) -> None:
    _load(root)  # parses the files; the next run reads them from the cache
    repo = _load(root)
    assert repo.cache.identity is not None
    assert lookup(repo, "002") is not None
    assert lookup(repo, "0\x000") is None
    assert lookup(repo, "") is None
    assert lookup(repo, "0\x010") is None


# -- random edits between runs ------------------------------------------------------------

FOLDERS = ("", "g", "h", "archive", "g/archive")
operation = st.one_of(
    st.tuples(st.just("status"), st.integers(0, 30), st.sampled_from(("completed", "pending"))),
    st.tuples(st.just("depend"), st.integers(0, 30), st.lists(st.integers(0, 20), max_size=3)),
    st.tuples(st.just("parent"), st.integers(0, 30), st.integers(0, 20)),
    st.tuples(st.just("add"), st.integers(0, 20), st.sampled_from(FOLDERS)),
    st.tuples(st.just("copy"), st.integers(0, 30), st.sampled_from(FOLDERS)),
    st.tuples(st.just("move"), st.integers(0, 30), st.sampled_from(FOLDERS)),
    st.tuples(st.just("remove"), st.integers(0, 30)),
    st.tuples(st.just("break"), st.integers(0, 30)),
    st.tuples(st.just("worklog"), st.integers(0, 20)),
)


def _files(tasks: Path) -> list[Path]:
    return sorted(path for path in tasks.rglob("*.md") if ".worklogs" not in path.parts)


def _fields(path: Path) -> dict[str, object]:
    """The fields a test-written task file holds (``_write``'s shape), body aside."""
    fields: dict[str, object] = {}
    for line in path.read_text(encoding="utf-8").split("---")[1].strip().splitlines():
        key, _, value = line.partition(": ")
        fields[key] = value
    return fields


def _rewrite(path: Path, **changed: object) -> None:
    fields = {**_fields(path), **changed}
    task_id, title = str(fields.pop("id")).strip("'"), str(fields.pop("title"))
    path.write_text(task_text(task_id, title, **fields), encoding="utf-8")


def _apply(tasks: Path, op: tuple[Any, ...], counter: Iterator[int]) -> None:
    files = _files(tasks)
    kind, pick = op[0], op[1]
    path = files[pick % len(files)] if files else None
    readable = path is not None and "title: [" not in path.read_text(encoding="utf-8")
    if kind == "add":
        _write(tasks, f"{op[2]}/{pick:03d}-new-{next(counter)}.md", f"{pick:03d}", {})
    elif kind == "worklog":
        (tasks / ".worklogs").mkdir(exist_ok=True)
        (tasks / ".worklogs" / f"{pick:03d}.md").write_text(
            f"## 2026-01-0{pick % 9 + 1}T00:00:00Z\n\nx\n"
        )
    elif path is None or (kind in ("status", "depend", "parent") and not readable):
        return
    elif kind == "status":
        _rewrite(path, status=op[2])
    elif kind == "depend":
        _rewrite(path, dependencies="[" + ", ".join(f"'{n:03d}'" for n in op[2]) + "]")
    elif kind == "parent":
        _rewrite(path, parent=f"'{op[2]:03d}'")
    elif kind in ("copy", "move"):
        target = tasks / op[2] / f"{path.stem}-{next(counter)}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copy if kind == "copy" else shutil.move)(path, target)
    elif kind == "remove":
        path.unlink()
    elif kind == "break":
        task_id = str(_fields(path).get("id", "'000'")) if readable else "'000'"
        path.write_text(f"---\nid: {task_id}\ntitle: [broken\n---\n", encoding="utf-8")
    for item in (tasks, *tasks.rglob("*")):  # settled (not racy), each time another mtime
        os.utime(item, ns=(PAST_NS + next(counter), PAST_NS + next(counter)))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=st.lists(operation, min_size=1, max_size=6), seed=st.integers(0, 2**16))
def test_after_random_edits_warm_answers_equal_cold_ones(
    ops: list[tuple[Any, ...]], seed: int
) -> None:
    asked = (*(f"{n:03d}" for n in random.Random(seed).sample(range(21), 8)), "404")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "repo"
        (root / ".git").mkdir(parents=True)
        (Path(folder) / "home").mkdir()
        for number in range(12):
            fields: dict[str, object] = (
                {"dependencies": [f"'{number - 1:03d}'"]} if number % 3 else {}
            )
            _write(
                root / "tasks",
                f"{'g/' if number % 2 else ''}{number:03d}-a.md",
                f"{number:03d}",
                fields,
            )
        (root / ".tasktool.yaml").write_text("dir: tasks\n", encoding="utf-8")
        _age(root)
        counter = iter(range(10**9))
        for op in ops:
            _apply(root / "tasks", op, counter)
            cold = _cold(root, asked)
            before = columns_kept(root / "tasks")
            assert _warm(root, asked) == cold  # the run that parses the edit: the full path
            # It wrote the new rows files' columns, and no others.
            kept = columns_kept(root / "tasks")
            assert set(kept) >= _named(root)
            assert {name: kept[name] for name in before if name in kept}.items() <= before.items()
            assert _warm(root, asked) == cold  # the next reads them
            assert columns_kept(root / "tasks") == kept


def test_a_task_directory_without_a_task_has_an_index_too(root: Path) -> None:
    """Only files that cannot be read: ``get`` names them (``task.broken``), from an
    index of no task."""
    for path in _files(root / "tasks"):
        if str(path.relative_to(root / "tasks")) not in BROKEN:
            path.unlink()
    _age(root)
    _load(root)
    for _ in range(2):
        with pytest.raises(TaskToolError, match="no task with id '001'"):
            lookup(_load(root), "001")
        assert set(columns_kept(root / "tasks")) == _named(root) != set()
    kept = columns_kept(root / "tasks")
    asked = ("001", "014", "017")
    assert _warm(root, asked) == _cold(root, asked)
    assert _warm(root, asked)["014"][0] == "task.broken"
    assert columns_kept(root / "tasks") == kept


def test_a_value_holding_a_separator_is_looked_up_in_full(root: Path) -> None:
    """A dependency that holds a separator (YAML escapes can write one) leaves its folder's
    columns unable to answer: ``get`` takes the full path, with the same answers."""
    (root / "tasks" / "h" / "018-a.md").write_text(
        '---\nid: "018"\ntitle: Task 018\ndependencies: ["0\\x010", "0\\x000"]\n---\n',
        encoding="utf-8",
    )
    _age(root)
    _load(root)
    repo = _load(root)
    table = repo.cache.id_table()
    assert table is not None
    assert not table.clean
    assert lookup(repo, "018") is None
    assert _warm(root, ASKED) == _cold(root, ASKED)
    assert _warm(root, ("018",))["018"]["dependencies"] == ("0\x010", "0\x000")
