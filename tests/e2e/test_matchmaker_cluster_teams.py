"""Teams, balance and regions across two ``--cluster`` processes over the real Redis: the
fields travel with the entries, so a group split over two processes forms as on one."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cluster_client import Client, cluster, pool_owned_by

pytestmark = pytest.mark.redis

RULES = {
    "mode": "auto",
    "groupSize": 4,
    "create": True,
    "teams": [{"name": "red", "size": 2}, {"name": "blue", "size": 2}],
    "balance": {"attribute": "rating", "maxDifference": 50},
    "regions": {"maxLatencyMs": 80},
}


def test_a_balanced_2v2_with_a_region_forms_across_two_processes(tmp_path: Path) -> None:
    with cluster(tmp_path, 2) as (a, b):
        ratings = (1000, 2000, 1010, 2010)
        clients = [Client((a, b)[i % 2], attributes={"rating": r}) for i, r in enumerate(ratings)]
        name = pool_owned_by(b, [a, b], clients[0].project, "teams")
        for client in clients:
            latencies = {"eu": 40, "us": 70}
            reply = client.request("pool.enter", {"pool": name, **RULES, "latencies": latencies})
            assert reply["ok"], reply
        created = [client.event("session.created") for client in clients]
        assert len({c["session_id"] for c in created}) == 1
        teams = created[0]["teams"]
        assert all(c["teams"] == teams and c["region"] == "eu" for c in created)
        rating = {c.client_id: r for c, r in zip(clients, ratings, strict=True)}
        means = [sum(rating[m] for m in team) / 2 for team in teams.values()]
        assert abs(means[0] - means[1]) <= 50
        for client in clients:
            client.close()
