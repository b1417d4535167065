"""The sibling index: trusted only while every folder and file keeps its signature, rebuilt
(parsing only what changed) otherwise, and the overlay through it equal to a fresh read."""

from __future__ import annotations

import os
import time
from pathlib import Path

import msgspec

from tasktool.files.caches.sibling_index import SiblingIndex, index_path, read_index
from tests.tasktool.conftest import edit_in_place, task_text

from .conftest import Repo, Run, as_json, git


def _age(folder: Path) -> None:
    """Date every file and folder an hour back: entries changed in the last moments are
    never trusted (racy timestamps), and a real sibling's files are older than that."""
    past = time.time() - 3600
    for path in (folder, *folder.rglob("*")):
        os.utime(path, (past, past))


def _tasks(folder: Path) -> Path:
    (folder / "archive").mkdir(parents=True)
    (folder / "1-a.md").write_text(task_text("1", "A", status="in-progress"))
    (folder / "2-b.md").write_text(task_text("2", "B", status="blocked"))
    (folder / "archive" / "3-c.md").write_text(task_text("3", "C", status="completed"))
    (folder / "archive" / "2-old.md").write_text(task_text("2", "B old", status="completed"))
    (folder / "notes.md").write_text("# not a task\n")
    (folder / "9-broken.md").write_text("---\nid: '9'\ntitle: [unclosed\n---\n")
    _age(folder)
    return folder


def _store(tmp_path: Path, folder: Path) -> Path:
    """The index file of ``folder`` as a task directory ``here`` keeps it."""
    (tmp_path / "here").mkdir()
    return index_path(tmp_path / "here", folder, ())


def _read(folder: Path, store: Path) -> tuple[SiblingIndex, dict[str, str], int]:
    """The index, its statuses, and the stored file's inode (a rebuild writes a new one)."""
    index = read_index(folder, (), store)
    return index, dict(zip(index.ids, index.statuses, strict=True)), store.stat().st_ino


def test_the_index_answers_while_nothing_changed_and_sees_every_change(tmp_path: Path) -> None:
    folder = _tasks(tmp_path / "tasks")
    store = _store(tmp_path, folder)
    index, statuses, built = _read(folder, store)
    # The first copy of an id wins (the active 2 over the archived one); 9 is taken though broken.
    assert statuses == {"1": "in-progress", "2": "blocked", "3": "completed"}
    assert index.taken == {"1", "2", "3", "9"}
    three = index.copy(index.ids.index("3"))
    assert (three.archived, three.file_path) == (
        True,
        str(folder / "archive" / "3-c.md"),
    )
    assert _read(folder, store)[2] == built  # warm: read, not rebuilt

    # An edit in place, same size, the mtime put back: only the file's ctime tells.
    path = folder / "2-b.md"
    before = path.stat()
    with path.open("r+") as handle:
        handle.write(path.read_text().replace("status: blocked", "status: pending"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    _, statuses, rebuilt = _read(folder, store)
    assert statuses["2"] == "pending"
    assert rebuilt != built

    _age(folder)
    _, _, warm = _read(folder, store)
    assert _read(folder, store)[2] == warm
    (folder / "group").mkdir()
    (folder / "group" / "4-d.md").write_text(task_text("4", "D", status="in-review"))
    assert _read(folder, store)[1]["4"] == "in-review"  # a new file in a new folder
    _age(folder)
    _read(folder, store)
    (folder / "group" / "4-d.md").unlink()
    (folder / "1-a.md").rename(folder / "archive" / "1-a.md")
    _, statuses, _ = _read(folder, store)
    assert "4" not in statuses
    index = read_index(folder, (), store)
    assert index.copy(index.ids.index("1")).archived is True


def test_a_file_changed_a_moment_ago_is_looked_at_again(tmp_path: Path) -> None:
    folder = _tasks(tmp_path / "tasks")
    store = _store(tmp_path, folder)
    _read(folder, store)
    (folder / "2-b.md").write_text(task_text("2", "B", status="cancelled"))
    _, statuses, first = _read(folder, store)
    assert statuses["2"] == "cancelled"
    # Same size, same timestamp tick: only the racy rule catches this second write.
    (folder / "2-b.md").write_text(task_text("2", "B", status="completed"))
    _, statuses, second = _read(folder, store)
    assert statuses["2"] == "completed"
    assert second != first


def test_the_overlay_through_warm_sibling_indexes(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a", branch="feature-a")
    repo.worktree("wt-b", branch="feature-b")
    run(a, "set", "001", "--status", "in-progress")
    Repo.write(a, "005", "Only in A", priority="high", tags=["x"])
    _age(a / "tasks")
    first = as_json(run(repo.main, "list", "--format", "json"))  # builds the index
    indexes = repo.main / "tasks" / ".tasktool" / "worktrees"
    assert len(list(indexes.iterdir())) == 2
    second = as_json(run(repo.main, "list", "--format", "json"))  # reads it
    assert first == second
    only = next(task for task in second if task["id"] == "005")
    assert (only["title"], only["tags"], only["sibling_only"]) == ("Only in A", ["x"], True)
    assert next(task for task in second if task["id"] == "001")["status"] == "in-progress"
    # An edit in the sibling after the index was written shows at once.
    run(a, "set", "005", "--status", "completed")
    third = as_json(run(repo.main, "list", "--format", "json"))
    assert next(task for task in third if task["id"] == "005")["status"] == "completed"
    # A removed worktree's index is dropped.
    git(repo.main, "worktree", "remove", "--force", str(a))
    run(repo.main, "list")
    assert len(list(indexes.iterdir())) == 1


def _status(listed: list[dict[str, object]], task_id: str) -> tuple[object, object]:
    task = next(task for task in listed if task["id"] == task_id)
    return task["status"], task["branch"]


def test_warm_indexes_see_edits_in_place_and_new_worktrees(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a", branch="feature-a")
    _age(a / "tasks")
    run(repo.main, "list")  # builds the index of wt-a
    indexes = repo.main / "tasks" / ".tasktool" / "worktrees"
    (stored,) = indexes.iterdir()
    built = stored.stat().st_ino
    assert _status(as_json(run(repo.main, "list", "--format", "json")), "003") == ("pending", None)
    assert stored.stat().st_ino == built  # the warm path: read, not rebuilt

    # An editor saving in place: no folder changes, only the file's own stat.
    edit_in_place(a / "tasks" / "003-task.md", "priority: medium", "status:  blocked")
    listed = as_json(run(repo.main, "list", "--format", "json"))
    assert _status(listed, "003") == ("blocked", "feature-a")

    # A worktree added after the indexes were written is read at once.
    b = repo.worktree("wt-b", branch="feature-b")
    Repo.write(b, "009", "Only in B")
    listed = as_json(run(repo.main, "list", "--format", "json"))
    assert next(task for task in listed if task["id"] == "009")["sibling_only"] is True
    assert _status(listed, "003") == ("blocked", "feature-a")
    assert len(list(indexes.iterdir())) == 2


def test_an_index_this_version_cannot_read_is_rebuilt(repo: Repo, run: Run) -> None:
    a = repo.worktree("wt-a", branch="feature-a")
    run(a, "set", "002", "--status", "in-review")
    _age(a / "tasks")
    expected = as_json(run(repo.main, "list", "--format", "json"))
    assert _status(expected, "002") == ("in-review", "feature-a")
    (stored,) = (repo.main / "tasks" / ".tasktool" / "worktrees").iterdir()
    for foreign in (b"not msgpack", msgspec.msgpack.encode(["sibling-index-1", str(a)])):
        stored.write_bytes(foreign)
        assert as_json(run(repo.main, "list", "--format", "json")) == expected
        assert stored.read_bytes() != foreign  # rewritten in this version's format


def test_an_index_damaged_past_what_a_warm_read_checks_is_rebuilt(tmp_path: Path) -> None:
    """A warm read checks the signatures and decodes the columns only when asked: columns
    that do not decode, or do not fit the rows, are rebuilt from the files then."""
    folder = _tasks(tmp_path / "tasks")
    store = _store(tmp_path, folder)
    _, expected, _ = _read(folder, store)
    stored = msgspec.msgpack.decode(store.read_bytes())
    ids, statuses, *rest = msgspec.msgpack.decode(stored[-1])  # the columns, the last field
    for columns in ([ids[:1], statuses, *rest], ["not", "columns"]):
        stored[-1] = msgspec.msgpack.encode(columns)
        store.write_bytes(msgspec.msgpack.encode(stored))
        index = read_index(folder, (), store)
        assert dict(zip(index.ids, index.statuses, strict=True)) == expected
        assert index.taken == {"1", "2", "3", "9"}
        index.save()
        assert _read(folder, store)[1] == expected  # and written back whole
