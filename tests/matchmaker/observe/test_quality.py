"""Match quality per policy on ``/metrics`` and in the live view, over real sockets."""

from __future__ import annotations

import httpx
import pytest

from matchmaker.client import Client
from matchmaker.server import Bound
from tests.matchmaker.control.conftest import KEY
from tests.matchmaker.observe.conftest import Serve
from tests.matchmaker.observe.test_metrics import scrape, value
from tests.matchmaker.polling import eventually
from tests.matchmaker.servers import SERVERS

POLICIES = [
    {"name": "duo", "mode": "auto", "groupSize": 4,
     "teams": [{"name": "red", "size": 2}, {"name": "blue", "size": 2}],
     "balance": {"attribute": "rating", "maxDifference": 50},
     "filter": {"rating": {"within": 2000}}},
]  # fmt: skip


@pytest.fixture(params=SERVERS)
def running(request: pytest.FixtureRequest, serve: Serve) -> Bound:
    return serve(server=request.param, metrics_port=0)


async def test_wait_spread_and_imbalance_are_series_per_policy(running: Bound) -> None:
    assert running.management is not None
    assert running.metrics is not None
    management = "http://{}:{}".format(*running.management)
    auth = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=management, headers=auth) as admin:
        project = {"id": "game", "policies": POLICIES}
        assert (await admin.post("/admin/projects", json=project)).status_code == 201
        ws = "ws://{}:{}/ws".format(*running.data)
        ratings = (1000, 1010, 2000, 2010)
        players = [
            await Client.connect(ws, project="game", attributes={"rating": r}) for r in ratings
        ]
        try:
            for player in players:
                await player.enter("duo")
            for player in players:
                await player.next_event("session.created")
            url = "http://{}:{}/metrics".format(*running.metrics)

            def scraped() -> dict[tuple[str, tuple[tuple[str, str], ...]], float] | None:
                found = scrape(url)
                wait = value(
                    found, "matchmaker_match_wait_seconds_count", project="game", policy="duo"
                )
                return found if wait == 4 else None

            samples = await eventually(scraped, what="four waits observed")
            labels = {"project": "game", "policy": "duo"}
            spread = value(samples, "matchmaker_match_spread_sum", attribute="rating", **labels)
            assert spread == 1010
            assert (
                value(samples, "matchmaker_match_spread_count", attribute="rating", **labels) == 1
            )
            assert value(samples, "matchmaker_team_imbalance_count", **labels) == 1
            assert value(samples, "matchmaker_team_imbalance_sum", **labels) == 0
            live = (await admin.get("/admin/projects/game/live")).json()
            (quality,) = live["project"]["quality"]
            assert quality["policy"] == "duo"
            assert quality["matches"] == 1
            assert quality["meanSpread"] == {"rating": 1010}
            assert quality["meanImbalance"] == 0
            assert quality["meanWaitMs"] >= 0
        finally:
            for player in players:
                await player.close()
