"""Issue 43 in the playground, in real Chromium: each policy lists its rules, four pages
with latencies are matched into a balanced 2v2 in the region they share, and each page
shows its team and the region."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from matchmaker.server import Bound
from tests.matchmaker.control.conftest import KEY
from tests.matchmaker.observe.conftest import Serve
from tests.matchmaker.observe.test_playground import page_url, shot_dir

DUO = {
    "name": "duo",
    "mode": "auto",
    "groupSize": 4,
    "default": True,
    "teams": [{"name": "red", "size": 2}, {"name": "blue", "size": 2}],
    "balance": {"attribute": "rating", "maxDifference": 50},
    "regions": {"maxLatencyMs": 80},
}
LOBBY = {
    "name": "lobby",
    "mode": "auto",
    "groupSize": 4,
    "minGroupSize": 2,
    "fillTimeoutMs": 20000,
    "filter": {"rating": {"within": 100, "widen": {"everyMs": 5000, "by": 50, "max": 400}}},
}


@pytest.fixture
def arena(serve: Serve) -> Bound:
    bound = serve()
    assert bound.management is not None
    admin = "http://{}:{}".format(*bound.management)
    project = {"id": "arena", "policies": [DUO, LOBBY]}
    headers = {"Authorization": f"Bearer {KEY}"}
    response = httpx.post(f"{admin}/admin/projects", json=project, headers=headers)
    assert response.status_code == 201, response.text
    return bound


@pytest.mark.browser
def test_a_balanced_2v2_in_a_region_in_the_playground(
    arena: Bound, browser: object, tmp_path: Path
) -> None:
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    pages = []
    for name, rating in (("ann", 1000), ("bo", 1010), ("cy", 2000), ("di", 2010)):
        page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
        page.goto(page_url(arena))
        page.fill("#project", "arena")
        page.fill("#name", name)
        page.fill("#attributes", f'{{"rating": {rating}}}')
        page.click("#connect")
        policies = page.locator("#policies")
        expect(policies).to_contain_text("teams red (2) v blue (2)")
        expect(policies).to_contain_text("rating means within 50")
        expect(policies).to_contain_text("regions under 80 ms")
        expect(policies).to_contain_text("2 to 4 players")
        expect(policies).to_contain_text("fill after 20000 ms")
        expect(policies).to_contain_text("rating within ±100, +50 every 5000 ms up to ±400")
        pages.append(page)
    first = pages[0]
    first.click("button[data-policy=duo]")  # no latencies: refused with its code
    expect(first.locator("#error code")).to_have_text("pool.latencies_required")
    for page in pages:
        page.fill("#latencies", '{"eu": 40, "us": 120}')
        page.click("button[data-policy=duo]")
    for page in pages:
        expect(page.locator("#session")).to_contain_text("4 members")
        expect(page.locator("#region")).to_have_text("Region: eu")
        expect(page.locator("#session .team")).to_have_count(2)
    # {ann 1000, di 2010} against {bo 1010, cy 2000}: both means 1505.
    red = first.locator("#session .team[data-team=red]")
    blue = first.locator("#session .team[data-team=blue]")
    expect(red).to_contain_text("ann")
    expect(red).to_contain_text("di")
    expect(blue).to_contain_text("bo")
    expect(blue).to_contain_text("cy")
    first.screenshot(path=str(shot_dir(tmp_path) / "teams.png"), full_page=True)
