"""Issue 31 end to end in the playground, in real Chromium: a Project made through
``/admin`` with a ``jwt`` key (its rating claim a trusted attribute) and a policy with a
widening rating window, ``minGroupSize`` and a fill timeout; players paste their tokens,
two are matched as a group of two, one asks for a backfill, and the newcomer the window
admits is seated while the player beyond it keeps waiting."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from matchmaker.server import Bound
from tests.matchmaker.control.conftest import KEY
from tests.matchmaker.jwtkeys import AUDIENCE, ISSUER, signer
from tests.matchmaker.observe.conftest import Serve
from tests.matchmaker.observe.test_playground import page_url, shot_dir

POLICY = {
    "name": "ranked",
    "mode": "auto",
    "groupSize": 3,
    "minGroupSize": 2,
    "fillTimeoutMs": 300,
    "default": True,
    "filter": {"rating": {"within": 50, "widen": {"everyMs": 200, "by": 50, "max": 200}}},
}


@pytest.fixture
def ranked(serve: Serve) -> Bound:
    bound = serve()
    assert bound.management is not None
    admin = "http://{}:{}".format(*bound.management)
    key = {
        "type": "jwt",
        "algorithm": "EdDSA",
        "key": signer("EdDSA").verifying,
        "issuer": ISSUER,
        "audience": AUDIENCE,
        "claims": {"mmr": "attributes.rating"},
    }
    project = {"id": "game", "keys": [key], "policies": [POLICY]}
    headers = {"Authorization": f"Bearer {KEY}"}
    response = httpx.post(f"{admin}/admin/projects", json=project, headers=headers)
    assert response.status_code == 201, response.text
    return bound


@pytest.mark.browser
def test_a_ranked_game_in_the_playground(ranked: Bound, browser: object, tmp_path: Path) -> None:
    from playwright.sync_api import Browser, Page, expect

    assert isinstance(browser, Browser)

    def player(sub: str, mmr: int) -> Page:
        page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
        page.goto(page_url(ranked))
        page.fill("#project", "game")
        page.fill("#name", sub)
        token = signer("EdDSA").token(sub=sub, iss=ISSUER, aud=AUDIENCE, mmr=mmr)
        page.fill("#credential", token)
        page.click("#connect")
        expect(page.locator("#status")).to_contain_text(f"Player {sub}")
        expect(page.locator("#policies")).to_contain_text("ranked · auto · groups of 3")
        page.click("button[data-policy=ranked]")
        expect(page.locator("#status")).to_contain_text("Waiting in ranked")
        return page

    ana, bo = player("ana", 1500), player("bo", 1580)  # 80 apart: once the windows widened
    far = player("far", 1900)  # beyond the widest window of anyone here
    for page in (ana, bo):  # a group of two, after the fill timeout
        expect(page.locator("#session")).to_contain_text("2 members")
        expect(page.locator("#session")).to_contain_text("player ana")
        expect(page.locator("#session")).to_contain_text("player bo")
    ana.fill("#backfill-seats", "1")
    ana.click("#backfill")
    expect(ana.locator("#messages")).to_contain_text("Backfill: 0 seated, 1 open.")
    cy = player("cy", 1560)
    for page in (ana, bo, cy):
        expect(page.locator("#session")).to_contain_text("3 members")
        expect(page.locator("#session")).to_contain_text("player cy")
    cy.fill("#message", "glhf")
    cy.press("#message", "Enter")
    expect(ana.locator("#messages .msg")).to_contain_text("glhf")
    expect(far.locator("#session")).to_contain_text("No session")
    expect(far.locator("#status")).to_contain_text("Waiting in ranked")
    ana.screenshot(path=str(shot_dir(tmp_path) / "ranked.png"), full_page=True)
