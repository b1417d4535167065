"""The browser playground at ``GET /`` on the data port, driven in real Chromium."""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
import pytest

from matchmaker.server import Bound
from tests.matchmaker.control.conftest import KEY
from tests.matchmaker.observe.conftest import Serve

# Where the screenshots go (to look at them); the test's tmp_path without it.
SHOTS = os.environ.get("MATCHMAKER_PLAYGROUND_SHOTS")


@pytest.fixture
def running(serve: Serve) -> Bound:
    """A server with the ``chess`` Project (a default 1-v-1 policy) and a locked-down one."""
    bound = serve()
    assert bound.management is not None
    admin = "http://{}:{}".format(*bound.management)
    headers = {"Authorization": f"Bearer {KEY}"}
    policy = {
        "name": "duel",
        "mode": "auto",
        "groupSize": 2,
        "default": True,
        "filter": {"band": "@self"},
    }
    for project in ({"id": "chess", "policies": [policy]}, {"id": "vault", "lockdown": True}):
        response = httpx.post(f"{admin}/admin/projects", json=project, headers=headers)
        assert response.status_code == 201
    return bound


def page_url(bound: Bound) -> str:
    return "http://{}:{}/".format(*bound.data)


def test_the_page_is_self_contained(running: Bound) -> None:
    response = httpx.get(page_url(running))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert "connect-src 'self'" in policy
    assert "script-src 'self' 'unsafe-inline';" in policy
    assert "src=" not in response.text  # no script, image or frame from anywhere
    assert "<link" not in response.text
    assert 'import { connect } from "/js/index.js";' in response.text


def test_the_page_runs_the_javascript_client_served_here(running: Bound) -> None:
    """The client module and every module it imports come from this port, as JavaScript."""
    wanted, served = ["index.js"], set()
    while wanted:
        name = wanted.pop()
        served.add(name)
        response = httpx.get(page_url(running) + f"js/{name}")
        assert response.status_code == 200, name
        assert response.headers["content-type"].startswith("text/javascript")
        assert response.headers["x-content-type-options"] == "nosniff"
        imports = re.findall(r'from "\./([\w.]+)"', response.text)
        wanted += [module for module in imports if module not in served]
    assert {"index.js", "client.js", "errors.js", "socket.js"} <= served
    for missing in ("nothing.js", ".hidden.js", "index.d.ts", "__init__.py"):
        response = httpx.get(page_url(running) + f"js/{missing}")
        assert response.status_code == 404, missing
        assert response.json()["error"]["code"] == "route.not_found"


def test_no_playground_turns_it_off(serve: Serve) -> None:
    bound = serve(management_key=None, no_playground=True)
    for path in ("", "js/index.js"):
        response = httpx.get(page_url(bound) + path)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "route.not_found"


def shot_dir(tmp_path: Path) -> Path:
    path = Path(SHOTS) if SHOTS else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.browser
def test_two_pages_are_matched_and_talk(running: Bound, browser: object, tmp_path: Path) -> None:
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    pages = []
    for name in ("alice", "bob"):
        page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
        page.goto(page_url(running))
        page.fill("#project", "chess")
        page.fill("#name", name)
        page.fill("#attributes", '{"band": "1200-1400"}')  # the policy's @self filter
        page.click("#connect")
        expect(page.locator("#policies")).to_contain_text("duel · auto · groups of 2")
        page.click("button[data-policy=duel]")
        pages.append(page)
    alice, bob = pages
    for page in pages:
        expect(page.locator("#session")).to_contain_text("2 members")
        expect(page.locator("#session")).to_contain_text("alice")
        expect(page.locator("#session")).to_contain_text("bob")
    alice.fill("#message", "good luck, have fun")
    alice.press("#message", "Enter")
    expect(bob.locator("#messages .msg")).to_contain_text("good luck, have fun")
    expect(alice.locator("#messages .msg.mine")).to_contain_text("good luck, have fun")
    bob.fill("#message", "you too")
    bob.click("#send")
    expect(alice.locator("#messages .msg").last).to_contain_text("you too")
    alice.screenshot(path=str(shot_dir(tmp_path) / "matched.png"), full_page=True)
    bob.click("#leave-session")
    expect(alice.locator("#messages")).to_contain_text("left")
    expect(bob.locator("#session")).to_contain_text("No session")


@pytest.mark.browser
def test_a_locked_down_project_shows_project_lockdown(
    running: Bound, browser: object, tmp_path: Path
) -> None:
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    page = browser.new_page()
    page.goto(page_url(running))
    page.fill("#project", "vault")
    page.click("#connect")
    expect(page.locator("#lockdown")).to_contain_text("lockdown")
    # Ad-hoc entry is off under lockdown, and the page says why.
    expect(page.locator("#enter-adhoc")).to_be_disabled()
    expect(page.locator("#pool")).to_be_disabled()
    expect(page.locator("#adhoc-note")).to_contain_text("locked down")
    # The server refuses it all the same (a page that did not disable it).
    page.evaluate("document.getElementById('enter-adhoc').disabled = false")
    page.evaluate("document.getElementById('pool').disabled = false")
    page.fill("#pool", "my-own-pool")
    page.click("#enter-adhoc")
    expect(page.locator("#error")).to_be_visible()
    expect(page.locator("#error code")).to_have_text("project.lockdown")
    page.screenshot(path=str(shot_dir(tmp_path) / "lockdown.png"), full_page=True)
