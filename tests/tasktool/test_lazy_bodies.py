"""Bodies are read when asked for (``repo.bodies.read``: the load that decoded a task
reads its body), never decided up front: every reader of a body gets the real one, cold
or warm, after another file changed, and a body is never mixed with fields from another
version of its file."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import msgspec
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.types import TextContent

from tasktool.config import Overrides
from tasktool.files.caches import bodies
from tasktool.files.caches.bodies import Bodies
from tasktool.files.caches.cache import ParseCache
from tasktool.files.caches.cache_files import FORMAT
from tasktool.files.scanning.scan import scan_source, scan_tasks
from tasktool.mcp.server import create_server
from tasktool.model.errors import TaskToolError
from tasktool.model.task import KEPT, Task
from tasktool.planning.repository import Repository, load_context, loader
from tasktool.planning.search import search_tasks
from tasktool.web.app import WebConfig
from tasktool.web.export import export_site
from tests.tasktool.conftest import Project, task_text
from tests.tasktool.test_cli import tasktool_group
from tests.tasktool.web.conftest import ServerThread

PAST = time.time() - 3600  # settled: cached for good
#: Task id -> (folder under tasks/, body). Each body holds a word no title holds.
TASKS = {
    "001": ("a", "## Notes\n\nzebra001 first, ünïcode ✓\n\n- [ ] a step\n"),
    "002": ("a", "zebra002 in folder a\nsecond line\n"),
    "003": ("a", ""),
    "004": ("b", "zebra004 in folder b\n"),
    "005": ("b/archive", "zebra005 archived\n"),
}
WITH_BODIES = [task_id for task_id, (_, body) in TASKS.items() if body]


def _write(project: Project) -> Path:
    project.config("dir: tasks\n")
    for task_id, (folder, body) in TASKS.items():
        status = "completed" if "archive" in folder else "pending"
        path = project.write(
            f"tasks/{folder}/{task_id}-task.md",
            task_text(task_id, f"Task {task_id}", status=status, body=body.rstrip("\n")),
        )
        os.utime(path, (PAST, PAST))
    return project.root / "tasks"


def _load(project: Project) -> Repository:
    return load_context(cwd=project.root, env=project.env, home=project.home)


def _file_body(path: str) -> str:
    return Path(path).read_text(encoding="utf-8").split("---\n", 2)[2]


def _cold(tasks: Path) -> None:
    shutil.rmtree(tasks / ".tasktool", ignore_errors=True)


def _warm(tasks: Path) -> None:
    scan_tasks(tasks)
    assert ParseCache.open(tasks).rows() is not None


def _other_file_edited(tasks: Path) -> None:
    """The cache warm, then another file of folder a edited: the next scan keeps 001's and
    002's rows (their bodies in the old store) and writes folder a's rows again."""
    _warm(tasks)
    path = tasks / "a" / "003-task.md"
    path.write_text(path.read_text(encoding="utf-8").replace("pending", "blocked"))
    os.utime(path, (PAST + 1, PAST + 1))


def _warm_after_edit(tasks: Path) -> None:
    _other_file_edited(tasks)
    _warm(tasks)  # folder a's new rows and store


STATES: dict[str, Callable[[Path], None]] = {
    "cold": _cold,
    "warm": _warm,
    "another file edited": _other_file_edited,
    "warm after an edit": _warm_after_edit,
}


@pytest.fixture(params=list(STATES))
def tasks(request: pytest.FixtureRequest, project: Project) -> Path:
    folder = _write(project)
    _cold(folder)
    STATES[request.param](folder)
    return folder


def _cli(project: Project, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.setenv("HOME", str(project.home))
    monkeypatch.chdir(project.root)
    result = CliRunner().invoke(tasktool_group(), list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_task_of_a_load_has_its_files_body(project: Project, tasks: Path) -> None:
    repo = _load(project)
    every = [*repo.tasks, *repo.archived]
    assert sorted(task.id for task in every) == sorted(TASKS)
    for task in every:
        assert repo.bodies.read(task) == _file_body(task.file_path)
        assert repo.bodies.read(task) == repo.bodies.read(task)  # read again: the same
    assert repo.bodies.read(repo.get("001")).startswith("## Notes\n\nzebra001 first, ünïcode ✓")


def test_the_cli_readers_show_the_bodies(
    project: Project, tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for task_id in WITH_BODIES:
        body = TASKS[task_id][1]
        assert body.strip("\n") in _cli(project, monkeypatch, "get", task_id)
        shown = msgspec.json.decode(_cli(project, monkeypatch, "get", task_id, "--format", "json"))
        assert shown["body"] == body
        found = _cli(
            project, monkeypatch, "search", f"zebra{task_id}", "--archived", "--format", "json"
        )
        assert [hit["id"] for hit in msgspec.json.decode(found)] == [task_id]
    # A write rewrites the file from the file: its body stays byte for byte.
    _cli(project, monkeypatch, "set", "002", "--title", "Renamed")
    assert _file_body(str(tasks / "a" / "002-task.md")) == TASKS["002"][1]
    assert _cli(project, monkeypatch, "get", "002").count("zebra002") == 1


async def test_mcp_shows_the_bodies(project: Project, tasks: Path) -> None:
    server = create_server(loader(Overrides(config=str(project.root / ".tasktool.yaml"))))
    async with Client(server) as client:
        for task_id in WITH_BODIES:
            result = await client.call_tool("get", {"id": task_id})
            content = result.content[0]
            assert isinstance(content, TextContent)
            assert msgspec.json.decode(content.text)["body"] == TASKS[task_id][1]


def test_the_dashboard_and_the_export_show_the_bodies(
    project: Project, tasks: Path, tmp_path: Path
) -> None:
    load = loader(Overrides(config=str(project.root / ".tasktool.yaml")))
    server = ServerThread(WebConfig(load=load, task_dir=tasks, readonly=True))
    bound = server.start()
    try:
        with httpx.Client(base_url=bound.url.rstrip("/"), timeout=10) as client:
            for task_id in WITH_BODIES:
                detail = client.get(f"/api/tasks/{task_id}").json()
                assert detail["body"] == TASKS[task_id][1]
                query = {"q": f"zebra{task_id}", "archived": "true"}
                found = client.get("/api/tasks", params=query).json()
                assert [task["id"] for task in found] == [task_id]
                assert f"zebra{task_id}" in client.get(f"/tasks/{task_id}").text
    finally:
        server.stop()
    export_site(load, tmp_path / "site")
    for task_id in WITH_BODIES:
        page = (tmp_path / "site" / "tasks" / f"{task_id}.html").read_text(encoding="utf-8")
        assert f"zebra{task_id}" in page


def _open_stores(tasks: Path) -> list[str]:
    """The body stores of ``tasks``' cache this process holds open (its descriptors)."""
    cache = str(tasks / ".tasktool")
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the listing's own descriptor, closed already
        if target.startswith(cache) and target.endswith(".bodies"):
            held.append(target)
    return held


def _stores_opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The body stores this process opens from now on (every ``os.open`` watched)."""
    opened: list[str] = []
    real_open = os.open

    def watched(path: str, flags: int, *args: int, **kwargs: int) -> int:
        if str(path).endswith(".bodies"):
            opened.append(str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", watched)
    return opened


def test_a_listing_reads_no_body(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = _write(project)
    _warm(tasks)
    opened = _stores_opened(monkeypatch)
    listed = msgspec.json.decode(_cli(project, monkeypatch, "list", "--format", "json"))
    assert len(listed) == 4
    assert "body" not in listed[0]
    _cli(project, monkeypatch, "next")
    _cli(project, monkeypatch, "board")
    _cli(project, monkeypatch, "stats")
    assert not opened
    assert "002" in _cli(project, monkeypatch, "search", "zebra002")
    assert opened  # search reads them
    assert not _open_stores(tasks)  # and closes them with the load that owned them


def test_only_a_few_stores_stay_open(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader of every body (search) opens each folder's store in turn and keeps only
    the last ``OPEN_STORES``: the bodies are never all held."""
    monkeypatch.setattr(bodies, "OPEN_STORES", 1)
    tasks = _write(project)
    _warm(tasks)
    repo = _load(project)
    read = set()
    for task in [*repo.tasks, *repo.archived]:
        assert repo.bodies.read(task) == _file_body(task.file_path)
        held = _open_stores(tasks)
        assert len(held) <= 1
        read.update(held)
    assert len(read) > 1  # several stores, read one after the other


def _kept(project: Project) -> tuple[Repository, dict[str, Task]]:
    """A warm load and its tasks by id (each body kept in a store, not read yet; the
    tasks find their stores while the load is held)."""
    repo = _load(project)
    found = {task.id: task for task in [*repo.tasks, *repo.archived]}
    assert all(found[task_id].raw_body == KEPT for task_id in WITH_BODIES)
    return repo, found


def test_a_body_read_after_its_file_changed_is_the_one_loaded_with_the_fields(
    project: Project,
) -> None:
    """The store is written with the rows: a file edited after the load still gives the
    body its loaded fields came with, not the new one."""
    tasks = _write(project)
    _warm(tasks)
    repo, loaded = _kept(project)
    path = tasks / "a" / "002-task.md"
    path.write_text(
        task_text("002", "Task 002 renamed", status="blocked", body="a new body"),
        encoding="utf-8",
    )
    assert loaded["002"].title == "Task 002"
    assert repo.bodies.read(loaded["002"]) == TASKS["002"][1]


def test_without_its_store_a_body_comes_only_with_the_same_fields(project: Project) -> None:
    """The store gone (a later run replaced the folder's rows and a minute passed): the
    file is read again; its body is taken when its fields are still the loaded ones (then
    the pair is the file as it is now), else ``task.changed``, never a mix."""
    tasks = _write(project)
    _warm(tasks)
    repo, loaded = _kept(project)
    read = repo.bodies.read
    assert not _open_stores(tasks)  # none read yet: deleted now, none can be read
    for store in (tasks / ".tasktool" / "cache").glob("*.bodies"):
        store.unlink()
    assert read(loaded["004"]) == TASKS["004"][1]  # the file unchanged
    body_only = tasks / "a" / "001-task.md"
    body_only.write_text(
        body_only.read_text(encoding="utf-8").replace("zebra001", "okapi001"), encoding="utf-8"
    )
    assert "okapi001" in read(loaded["001"])
    fields = tasks / "a" / "002-task.md"
    fields.write_text(
        fields.read_text(encoding="utf-8").replace("status: pending", "status: blocked"),
        encoding="utf-8",
    )
    with pytest.raises(TaskToolError) as changed:
        read(loaded["002"])
    assert changed.value.code == "task.changed"
    (tasks / "b" / "archive" / "005-task.md").unlink()
    with pytest.raises(TaskToolError) as gone:
        read(loaded["005"])
    assert gone.value.code == "task.changed"


def test_a_damaged_store_is_not_read(project: Project) -> None:
    """A store of another length than its head says is damaged: the bodies come from the
    files."""
    tasks = _write(project)
    _warm(tasks)
    for store in (tasks / ".tasktool" / "cache").glob("*.bodies"):
        store.write_bytes(b"\xffgarbage" + store.read_bytes())
    assert not _open_stores(tasks)  # each is opened damaged
    repo = _load(project)
    for task in [*repo.tasks, *repo.archived]:
        assert repo.bodies.read(task) == _file_body(task.file_path)


def test_another_versions_cache_is_never_read(project: Project) -> None:
    """The head's name carries the format: an older tasktool's head (here a current head
    under the old name, which a reader would misread if it opened it) is never opened,
    and the first write removes it and its body file. A head under the current name of
    another format, or of the older layout, counts as no cache."""
    tasks = _write(project)
    cold = scan_tasks(tasks, use_cache=False)
    _warm(tasks)
    cache = tasks / ".tasktool" / "cache"
    head = cache / f"{FORMAT}.msgpack"
    assert FORMAT == "tasks-9"
    shutil.copy(head, cache / "tasks-8.msgpack")
    (cache / "bodies-tasks-8.msgpack").write_bytes(b"\x93")
    decoded = msgspec.msgpack.decode(head.read_bytes())
    for damaged in (
        ["tasks-8", *decoded[1:]],  # another format's name inside
        [*decoded[:5], *decoded[6:]],  # version 7's layout: no store lengths
    ):
        head.write_bytes(msgspec.msgpack.encode(damaged))
        assert ParseCache.open(tasks).head is None
        rebuilt = scan_tasks(tasks)  # rewrites the cache
        assert rebuilt == cold  # parsed: the bodies inline
        warm = scan_source(tasks)
        bodies = [warm.bodies.read(task) for task in warm.result.tasks]
        assert bodies == [task.raw_body for task in cold.tasks]
    assert not (cache / "tasks-8.msgpack").exists()
    assert not (cache / "bodies-tasks-8.msgpack").exists()


def test_a_task_outliving_its_load_or_shown_with_another_status_has_its_body(
    project: Project,
) -> None:
    """A task kept after its load was dropped reads its file through any other load's
    bodies (unchanged: its body); one the overlay shows with a sibling worktree's status
    still finds its row's store."""
    tasks = _write(project)
    _warm(tasks)
    alone = _load(project).get("002")
    assert alone.raw_body == KEPT
    assert Bodies().read(alone) == TASKS["002"][1]
    repo, loaded = _kept(project)
    shown = msgspec.structs.replace(
        loaded["004"], status="completed", completed_at="2024-01-01", worktree="/b", branch="b"
    )
    (tasks / "b" / "004-task.md").unlink()  # so only the store can give the body
    assert repo.bodies.read(shown) == TASKS["004"][1]
    with pytest.raises(TaskToolError) as other:
        Bodies().read(shown)  # another load does not hold its rows: the file is gone
    assert other.value.code == "task.changed"


def test_search_reads_the_bodies_a_store_at_a_time_as_if_inline(
    project: Project, tasks: Path
) -> None:
    """``search`` reads the kept bodies grouped by store (most of a store at once, a few
    alone): the same hits, scores and order as over the same tasks with their bodies
    inline."""
    repo = _load(project)
    every = [*repo.tasks, *repo.archived]
    inline = [msgspec.structs.replace(task, raw_body=repo.bodies.read(task)) for task in every]
    for query in ("zebra", "zebra002", "in folder", "task", "ünïcode", "nothing"):
        assert [(hit.task.id, hit.score) for hit in search_tasks(every, query, repo.bodies)] == [
            (hit.task.id, hit.score) for hit in search_tasks(inline, query, Bodies())
        ]
    assert [hit.task.id for hit in search_tasks(every[:1], "zebra001", repo.bodies)] == ["001"]


def test_a_body_that_is_one_nul_is_read_from_its_file(project: Project) -> None:
    """A body that is the marker of a kept one (one NUL) is not taken for a row of the
    cache (whose fields it may share): its file gives it."""
    tasks = _write(project)
    _warm(tasks)
    repo, loaded = _kept(project)  # the cache's rows, in repo.bodies
    path = tasks / "a" / "002-task.md"
    path.write_text(task_text("002", "Task 002", status="pending")[:-1] + KEPT)
    reread = scan_tasks(tasks, use_cache=False).tasks
    (nul,) = [task for task in reread if task.id == "002"]
    assert nul.raw_body == KEPT
    assert repo.bodies.read(nul) == KEPT
    assert repo.bodies.read(loaded["002"]) == TASKS["002"][1]  # the kept one: its store's
