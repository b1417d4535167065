"""The dashboard in real Chromium (Debian's ``chromium``, driven by Playwright)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tasktool.config import Overrides
from tasktool.planning.repository import loader
from tasktool.web.export import export_site
from tests.e2e.browser_page import open_page
from tests.e2e.tasktool_process import git_repository
from tests.tasktool.conftest import Project
from tests.tasktool.web.conftest import Dashboard, start_dashboard

pytestmark = pytest.mark.browser
TIMEOUT_MS = 15_000


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with open_page(browser, TIMEOUT_MS) as opened:
        yield opened


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Dashboard]:
    root = git_repository(tmp_path)
    running, server = start_dashboard(Project(root, tmp_path / "home"))
    try:
        yield running
    finally:
        server.stop()


def eventually(check: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def rows(page: Any) -> Any:
    return page.locator("table.tasks tbody tr:not([hidden])")


def test_table_filters_search_and_keyboard(page: Any, site: Dashboard) -> None:
    page.goto(site.url + "/")
    expect(rows(page)).to_have_count(5)
    page.keyboard.press("/")
    page.keyboard.type("server")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("Write the server")
    expect(page.locator("[data-count]")).to_have_text("1 of 5 tasks")
    page.keyboard.press("Escape")
    expect(rows(page)).to_have_count(5)
    page.select_option('select[data-filter="status"]', "pending")
    expect(rows(page)).to_have_count(3)
    assert "status=pending" in page.url
    page.locator("main h1").click()
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url("**/tasks/003")
    expect(page.locator("h1")).to_contain_text("Document it")


def test_edit_form_writes_the_file(page: Any, site: Dashboard) -> None:
    page.goto(site.url + "/tasks/003")
    page.select_option("#edit-status", "in-review")
    page.fill("#edit-tags", "docs, web")
    page.locator("#edit-tags").press("Control+Enter")
    path = site.task_file("003")
    eventually(lambda: "status: in-review" in path.read_text())
    text = path.read_text()
    assert "tags: [docs, web]" in text or "- docs" in text
    assert "custom_key: kept" in text
    expect(page.locator("h1 .status-in-review")).to_have_text("in-review")


def test_edit_form_shows_field_errors(page: Any, site: Dashboard) -> None:
    before = site.task_file("002").read_bytes()
    page.goto(site.url + "/tasks/002")
    page.fill("#edit-title", "")
    page.fill("#edit-dependencies", "001, 404")
    page.click("button[type=submit]")
    expect(page.locator('[data-error-for="title"]')).to_contain_text("cannot be cleared")
    expect(page.locator('[data-error-for="dependencies"]')).to_contain_text("404")
    expect(page.locator("[data-form-status]")).to_contain_text("Not saved")
    assert site.task_file("002").read_bytes() == before


def test_on_disk_edit_appears_without_reload(page: Any, site: Dashboard) -> None:
    page.goto(site.url + "/")
    expect(page.locator("body")).to_have_attribute("data-live", "connected")
    path = site.task_file("004")
    path.write_text(path.read_text().replace("Fix the flaky test", "Renamed on disk"))
    expect(page.locator("table.tasks")).to_contain_text("Renamed on disk")


def test_static_export_loads_from_file_url(page: Any, site: Dashboard, tmp_path: Path) -> None:
    load = loader(Overrides(config=str(site.project.root / ".tasktool.yaml")))
    out = tmp_path / "export"
    export_site(load, out)
    page.goto((out / "index.html").as_uri())
    expect(rows(page)).to_have_count(5)
    page.fill("[data-search]", "document")
    expect(rows(page)).to_have_count(1)
    page.click("text=Document it")
    expect(page.locator("h1")).to_contain_text("Document it")
    expect(page.locator("div.markdown h3")).to_have_text("Docs")  # rendered, offline too
    expect(page.locator("div.markdown p")).to_contain_text("Every endpoint.")
    page.keyboard.press("g")
    expect(page.locator("svg.graph")).to_be_visible()
    page.keyboard.press("n")
    expect(page.locator("table.tasks")).to_contain_text("Design the API")


def test_create_form_writes_a_task_and_opens_it(page: Any, site: Dashboard) -> None:
    page.goto(site.url + "/")
    page.locator("main h1").click()
    page.keyboard.press("c")
    create = page.locator("[data-create-form]")
    expect(create.locator("#new-title")).to_be_focused()
    create.locator("button[type=submit]").click()
    expect(create.locator('[data-error-for="title"]')).to_contain_text("cannot be empty")
    expect(create.locator("[data-form-status]")).to_contain_text("Not saved")
    page.fill("#new-title", "Ship the <b>release</b>")
    page.select_option("#new-priority", "high")
    page.fill("#new-tags", "release, ops")
    page.fill("#new-dependencies", "001")
    page.fill("#new-body", "Steps:\n\n1. **tag** it\n2. <script>alert(1)</script>\n")
    page.locator("#new-body").press("Control+Enter")
    page.wait_for_url("**/tasks/006")
    expect(page.locator("h1")).to_contain_text("Ship the <b>release</b>")
    expect(page.locator("div.markdown ol li strong")).to_have_text("tag")
    expect(page.locator("div.markdown")).to_contain_text("<script>alert(1)</script>")
    text = (site.tasks / "006-ship-the-b-release-b.md").read_text()
    assert "priority: high" in text
    assert "created_at:" in text


def test_search_box_finds_words_in_descriptions(page: Any, site: Dashboard) -> None:
    page.goto(site.url + "/")
    expect(rows(page)).to_have_count(5)
    page.keyboard.press("/")
    page.keyboard.type("endpoint")  # only in 003's description ("Every endpoint.")
    expect(rows(page)).to_have_count(1)
    expect(rows(page).first).to_contain_text("Document it")
    assert "q=endpoint" in page.url
    page.keyboard.press("Escape")
    expect(rows(page)).to_have_count(5)
    page.goto(site.url + "/?q=every+endpoint")  # a shared link searches again
    expect(rows(page)).to_have_count(1)
