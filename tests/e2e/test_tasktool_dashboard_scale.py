"""The dashboard at 100,000 tasks in real Chromium: every page a few thousand elements.

One repository of 100,000 small task files (written from one template, dated
an hour back so the parse cache takes them; about 10 s with its first load) is
served for the whole module. Each page must show the total and stay under
:data:`MOST_ELEMENTS` elements, which a page that rendered every task (at
least one element per task) could not.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tasktool.config import Overrides
from tasktool.planning.repository import loader
from tasktool.web.app import WebConfig
from tests.e2e.browser_page import open_page
from tests.tasktool.conftest import Project
from tests.tasktool.web.conftest import CONFIG, Dashboard, ServerThread

pytestmark = [pytest.mark.browser, pytest.mark.slow]
COUNT = 100_000
MOST_ELEMENTS = 5_000
TIMEOUT_MS = 30_000
STATUSES = ("pending", "in-progress", "completed", "blocked", "pending", "in-review")
PRIORITIES = ("low", "medium", "high", "critical")
TEMPLATE = """---
id: '{id}'
title: Task {id} of the large repository
status: {status}
priority: {priority}
tags: [{tag}]
dependencies: [{dependencies}]
---
Step {id}.
"""


def write_repository(root: Path) -> Path:
    """100,000 tasks in ten folders, in chains of ten (each depends on the one before)."""
    (root / ".git").mkdir(parents=True)
    (root / ".tasktool.yaml").write_text(CONFIG, encoding="utf-8")
    tasks = root / "tasks"
    past = time.time() - 3600
    for folder in range(10):
        (tasks / f"g{folder}").mkdir(parents=True)
    for number in range(1, COUNT + 1):
        task_id = f"{number:03d}"
        path = tasks / f"g{number % 10}" / f"{task_id}-task.md"
        path.write_text(
            TEMPLATE.format(
                id=task_id,
                status=STATUSES[number % len(STATUSES)],
                priority=PRIORITIES[number % len(PRIORITIES)],
                tag="even" if number % 2 == 0 else "odd",
                dependencies="" if number % 10 == 1 else f"'{number - 1:03d}'",
            ),
            encoding="utf-8",
        )
        os.utime(path, (past, past))
    return tasks


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    base = tmp_path_factory.mktemp("large")
    root, home = base / "repo", base / "home"
    home.mkdir()
    tasks = write_repository(root)
    load = loader(Overrides(config=str(root / ".tasktool.yaml")))
    assert len(load().tasks) == COUNT  # the cold parse, once, before any page
    server = ServerThread(WebConfig(load=load, task_dir=tasks))
    bound = server.start()
    try:
        yield Dashboard(bound.url.rstrip("/"), bound.host, bound.port, tasks, Project(root, home))
    finally:
        server.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with open_page(browser, TIMEOUT_MS) as opened:
        yield opened


def elements(page: Any) -> int:
    return int(page.evaluate("document.getElementsByTagName('*').length"))


def test_table_pages_at_100k(page: Any, large: Dashboard) -> None:
    page.goto(large.url + "/")
    expect(page.locator("[data-count]")).to_have_text("1–100 of 100,000 tasks")
    assert page.locator("table.tasks tbody tr").count() == 100
    assert elements(page) <= MOST_ELEMENTS
    page.select_option('select[data-filter="status"]', "blocked")  # asks the server
    page.wait_for_url("**/?status=blocked")
    expect(page.locator("[data-count]")).to_have_text("1–100 of 16,667 tasks (100,000 in all)")
    statuses = page.locator("table.tasks tbody tr").evaluate_all(
        "rows => rows.map(row => row.dataset.status)"
    )
    assert set(statuses) == {"blocked"}
    page.locator("[data-page=next]").click()
    page.wait_for_url("**/?status=blocked&offset=100")
    expect(page.locator("[data-count]")).to_contain_text("101–200 of 16,667")
    page.locator("table.tasks [data-sort=id]").click()  # sorted on the server
    page.wait_for_url("**/?status=blocked&sort=id")
    page.locator("table.tasks [data-sort=id]").click()
    page.wait_for_url("**/?status=blocked&sort=-id")
    expect(page.locator("table.tasks tbody tr").first).to_have_attribute("data-id", "99999")
    assert elements(page) <= MOST_ELEMENTS


def test_board_shows_first_cards_at_100k(page: Any, large: Dashboard) -> None:
    page.goto(large.url + "/board")
    counts = page.locator("[data-column-count]").all_inner_texts()
    assert sum(int(count) for count in counts) == COUNT
    assert elements(page) <= MOST_ELEMENTS
    pending = page.locator('section.column[aria-label="pending"]')
    expect(pending.locator("li.card")).to_have_count(40)
    pending.locator("[data-more]").click()
    expect(pending.locator("li.card")).to_have_count(240)
    assert elements(page) <= MOST_ELEMENTS


def test_graph_opens_on_a_part_at_100k(page: Any, large: Dashboard) -> None:
    page.goto(large.url + "/graph")
    expect(page.locator("[data-graph-part]")).to_contain_text("100,000 tasks in the graph")
    drawn = page.locator("svg.graph a.node").count()
    assert 0 < drawn <= 200
    assert elements(page) <= MOST_ELEMENTS
    page.fill('input[name="root"]', "50005")
    page.locator("[data-graph-part] button[type=submit]").click()
    page.wait_for_url("**/graph?root=50005&depth=1")  # the steps the opening shows
    expect(page.locator("svg.graph a.node")).to_have_count(3)  # 50004 -> 50005 -> 50006
    page.locator("[data-widen]").click()
    page.wait_for_url("**/graph?root=50005&depth=2")
    expect(page.locator("svg.graph a.node")).to_have_count(5)
    assert elements(page) <= MOST_ELEMENTS
