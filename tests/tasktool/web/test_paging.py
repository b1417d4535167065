"""A dashboard too large to send whole: the API, the table, the board and the graph page.

250 tasks are more than a page of the API or the table (100), a board column
(40) and the graph page (200), so each of them must cut, say the total and
link to the rest.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tasktool.config import Overrides
from tasktool.planning.repository import Repository, loader
from tasktool.web.app import WebConfig
from tests.matchmaker.polling import wait_until
from tests.tasktool.conftest import Project, task_text
from tests.tasktool.web.conftest import CONFIG, Dashboard, ServerThread

COUNT = 250
STATUSES = ("pending", "in-progress", "completed", "blocked", "pending")
PRIORITIES = ("low", "medium", "high", "critical")


def many_tasks(project: Project, count: int = COUNT) -> Path:
    """``count`` tasks, each but every tenth depending on the one before it."""
    project.config(CONFIG)
    for number in range(1, count + 1):
        task_id = f"{number:03d}"
        fields: dict[str, Any] = {
            "status": STATUSES[number % len(STATUSES)],
            "priority": PRIORITIES[number % len(PRIORITIES)],
            "tags": ["even" if number % 2 == 0 else "odd"],
        }
        if number % 10 != 1:
            fields["dependencies"] = [f"{number - 1:03d}"]
        title = f"Task number {number}" + (" about zebras" if number % 50 == 0 else "")
        project.write(f"tasks/{task_id}-task.md", task_text(task_id, title, **fields))
    return project.root / "tasks"


def serve(project: Project, tasks: Path, **options: Any) -> tuple[Dashboard, ServerThread]:
    load = options.pop("load", None) or loader(
        Overrides(config=str(project.root / ".tasktool.yaml"))
    )
    server = ServerThread(WebConfig(load=load, task_dir=tasks, **options))
    bound = server.start()
    return Dashboard(bound.url.rstrip("/"), bound.host, bound.port, tasks, project), server


@pytest.fixture
def large(project: Project) -> Iterator[Dashboard]:
    running, server = serve(project, many_tasks(project))
    try:
        yield running
    finally:
        server.stop()


def ids(answer: httpx.Response) -> list[str]:
    return [task["id"] for task in answer.json()]


def row_ids(page: str) -> list[str]:
    return re.findall(r'<tr data-status="[^"]*"[^>]* data-id="([^"]+)"', page)


def test_api_tasks_pages_by_default_and_links_the_rest(large: Dashboard) -> None:
    everything = [f"{n:03d}" for n in range(1, COUNT + 1)]
    with large.client() as client:
        first = client.get("/api/tasks")
        assert len(first.json()) == 100
        assert first.headers["X-Total-Count"] == str(COUNT)
        collected, answer = ids(first), first
        while "next" in answer.links:
            answer = client.get(answer.links["next"]["url"])
            assert answer.headers["X-Total-Count"] == str(COUNT)
            collected += ids(answer)
        assert collected == everything
        assert answer.links["prev"]["url"].endswith("offset=100&limit=100")
        assert ids(client.get("/api/tasks", params={"limit": "all"})) == everything
        assert ids(client.get("/api/tasks", params={"limit": "0"})) == everything
        window = client.get("/api/tasks", params={"offset": "240", "limit": "5"})
        assert ids(window) == ["241", "242", "243", "244", "245"]
        pending = client.get("/api/tasks", params={"filter": "status=pending", "limit": "10"})
        assert pending.headers["X-Total-Count"] == str(COUNT * 2 // len(STATUSES))
        found = client.get("/api/tasks", params={"q": "zebras", "limit": "2"})
        assert ids(found) == ["050", "100"]
        assert found.headers["X-Total-Count"] == "5"
        too_many = client.get("/api/tasks", params={"limit": "1001"})
        bad_offset = client.get("/api/tasks", params={"offset": "-1"})
    for bad in (too_many, bad_offset):
        assert bad.status_code == 400
        assert bad.json()["error"]["code"] == "web.invalid_parameter"


def test_api_board_pages_each_column(large: Dashboard) -> None:
    with large.client() as client:
        board = client.get("/api/board").json()
        whole = client.get("/api/board", params={"limit": "all"}).json()
        second = client.get("/api/board", params={"limit": "50", "offset": "50"}).json()
    pending = next(c for c in board["columns"] if c["name"] == "pending")
    assert pending["count"] == COUNT * 2 // len(STATUSES) == 100
    assert len(pending["tasks"]) == 100
    assert all(len(column["tasks"]) <= 100 for column in board["columns"])
    assert all(len(c["tasks"]) == c["count"] for c in whole["columns"])
    whole_pending = next(c for c in whole["columns"] if c["name"] == "pending")["tasks"]
    second_pending = next(c for c in second["columns"] if c["name"] == "pending")["tasks"]
    assert second_pending == whole_pending[50:100]


def test_api_graph_pages_tasks_with_the_edges_into_them(large: Dashboard) -> None:
    with large.client() as client:
        whole = client.get("/api/graph", params={"limit": "all"}).json()
        pages, answer = [], client.get("/api/graph", params={"limit": "95"})
        pages.append(answer.json())
        while "next" in answer.links:
            answer = client.get(answer.links["next"]["url"])
            pages.append(answer.json())
        fits = client.get("/api/graph", params={"root": "125"})
    assert answer.headers["X-Total-Count"] == str(COUNT)
    assert [len(page["nodes"]) for page in pages] == [95, 95, 60]
    assert [n for page in pages for n in page["nodes"]] == whole["nodes"]
    assert [e for page in pages for e in page["edges"]] == whole["edges"]  # each edge once
    assert {"from": "095", "to": "096"} not in pages[0]["edges"]
    assert {"from": "095", "to": "096"} in pages[1]["edges"]  # on its dependent's page
    assert "Link" not in fits.headers
    assert [n["id"] for n in fits.json()["nodes"]] == [f"{n}" for n in range(121, 131)]


def test_table_page_is_paged_filtered_and_sorted_on_the_server(large: Dashboard) -> None:
    with large.client() as client:
        first = client.get("/").text
        third = client.get("/", params={"offset": "200"}).text
        pending = client.get("/", params={"status": "pending", "sort": "-id"}).text
        searched = client.get("/", params={"q": "zebras"}).text
        bad = client.get("/", params={"limit": "5000"})
    assert row_ids(first) == [f"{n:03d}" for n in range(1, 101)]
    assert "1–100 of 250 tasks" in first
    assert 'href="/?offset=100" data-page="next"' in first
    assert 'href="/?offset=200" data-page="last"' in first
    assert row_ids(third) == [f"{n:03d}" for n in range(201, 251)]
    assert "page 3 of 3" in third
    shown = row_ids(pending)
    assert shown == sorted(shown, reverse=True)
    assert len(shown) == 100
    assert set(re.findall(r'<tr data-status="([^"]+)"', pending)) == {"pending"}
    assert "of 100 tasks (250 in all)" in pending
    assert '<option value="pending" selected>' in pending
    assert 'aria-sort="descending"' in pending
    assert 'href="/?status=pending&amp;sort=-id&amp;offset=' not in pending  # one page only
    assert row_ids(searched) == ["050", "100", "150", "200", "250"]
    assert 'value="zebras"' in searched
    assert bad.status_code == 400


def test_board_shows_the_first_cards_of_each_column_and_more(large: Dashboard) -> None:
    with large.client() as client:
        board = client.get("/board").text
        more = re.search(r'href="([^"]+)" data-more>Show (\d+) more', board)
        assert more is not None
        wider = client.get(more.group(1).replace("&amp;", "&")).text
        bad = client.get("/board", params={"show": "pending"})
    pending = board.split('aria-label="pending"')[1].split("</section>")[0]
    assert pending.count('class="card ') == 40
    assert '<span class="muted" data-column-count>100</span>' in pending
    assert "60 more:" in pending
    assert 'href="/?status=pending">all 100 in the table' in pending
    widened = wider.split('aria-label="pending"')[1].split("</section>")[0]
    assert widened.count('class="card ') == 100
    assert "more:" not in widened
    assert bad.status_code == 400


def nodes(page: str) -> list[str]:
    return re.findall(r'<a href="/tasks/([^"]+)" class="node', page)


def test_graph_page_opens_on_a_part_and_widens(large: Dashboard) -> None:
    with large.client() as client:
        opening = client.get("/graph").text
        chain = client.get("/graph", params={"root": "125"}).text
        root = client.get("/graph", params={"root": "125", "depth": "2"}).text
        widen = re.search(r'href="([^"]+)" data-widen>', root)
        assert widen is not None
        wider = client.get(widen.group(1).replace("&amp;", "&")).text
        alone = client.get("/graph", params={"root": "125", "depth": "0"}).text
        whole = client.get("/graph", params={"limit": "2000"}).text
        missing = client.get("/graph", params={"root": "999"})
    assert "250 tasks in the graph: showing" in opening
    assert 0 < len(nodes(opening)) <= 200
    # The opening starts from the actionable tasks: 121 (in progress, its chain met) is one.
    assert "121" in nodes(opening)
    assert nodes(chain) == [f"{n}" for n in range(121, 131)]  # fits: drawn whole
    assert "data-graph-part" not in chain
    assert nodes(root) == ["123", "124", "125", "126", "127"]
    assert nodes(wider) == ["122", "123", "124", "125", "126", "127", "128"]
    assert nodes(alone) == ["125"]
    assert len(nodes(whole)) == COUNT
    assert "data-graph-part" not in whole
    assert missing.status_code == 404


def test_a_kept_repository_follows_the_disk_and_the_writes(project: Project) -> None:
    """``keep_from=1``: the load is kept, and still every change shows."""
    tasks = many_tasks(project, 20)
    inner = loader(Overrides(config=str(project.root / ".tasktool.yaml")))
    loads: list[float] = []

    def counting(*, tolerant: bool = False) -> Repository:
        loads.append(time.monotonic())
        return inner(tolerant=tolerant)

    running, server = serve(project, tasks, load=counting, keep_from=1)
    try:
        with running.client() as client:
            assert client.get("/api/tasks", params={"limit": "5"}).json()[4]["title"] == (
                "Task number 5"
            )
            before = len(loads)
            for _ in range(3):
                assert client.get("/api/tasks/005").json()["title"] == "Task number 5"
            assert len(loads) == before  # answered from the kept load
            path = tasks / "005-task.md"
            path.write_text(path.read_text().replace("Task number 5", "Renamed on disk"))
            wait_until(lambda: client.get("/api/tasks/005").json()["title"] == "Renamed on disk")
            listed = client.get("/api/tasks", params={"limit": "5"}).json()  # not a stale list
            assert listed[4]["title"] == "Renamed on disk"
            edited = client.put(
                "/api/tasks/006", json={"title": "Renamed by PUT"}, headers={"Origin": running.url}
            )
            assert edited.status_code == 200
            assert client.get("/api/tasks/006").json()["title"] == "Renamed by PUT"  # at once
    finally:
        server.stop()
