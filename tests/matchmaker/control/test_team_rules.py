"""/admin validates teams, balance and regions: types, bounds, sizes, auto only."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

P0 = "$.policies[0]"
WIDE = {"everyMs": 1, "by": 1, "max": 1}
TEAMS = [{"name": "red", "size": 2}, {"name": "blue", "size": 2}]
BALANCE = {
    "attribute": "rating",
    "maxDifference": 50,
    "widen": {"everyMs": 1000, "by": 10, "max": 200},
}
REGIONS = {"maxLatencyMs": 80, "widen": {"everyMs": 5000, "by": 20, "max": 150}}


def policy(**fields: Any) -> dict[str, Any]:
    return {"name": "duo", "mode": "auto", "groupSize": 4, **fields}


def test_a_team_policy_round_trips(admin: httpx.Client) -> None:
    duo = policy(teams=TEAMS, balance=BALANCE, regions=REGIONS)
    created = admin.post("/admin/projects", json={"id": "g", "policies": [duo]})
    assert created.status_code == 201, created.text
    assert admin.get("/admin/projects/g").json()["policies"] == [duo]


INVALID = [
    ("sizes-sum", policy(teams=[{"name": "a", "size": 3}]), P0 + ".teams", "add up to groupSize"),
    ("names-repeat", policy(teams=[{"name": "a", "size": 2}] * 2), P0 + ".teams", "unique"),
    ("no-teams", policy(teams=[]), P0 + ".teams", "at least one"),
    ("size-zero", policy(teams=[{"name": "a", "size": 0}]), P0 + ".teams[0].size", ">= 1"),
    ("bad-name", policy(teams=[{"name": "a b", "size": 4}]), P0 + ".teams[0].name", "regex"),
    ("on-claim", policy(mode="claim", teams=TEAMS), P0 + ".teams", "mode auto"),
    ("with-min", policy(teams=TEAMS, minGroupSize=2, fillTimeoutMs=1), P0 + ".teams",
     "minGroupSize"),
    ("balance-alone", policy(balance=BALANCE), P0 + ".balance", "two or more"),
    ("balance-max", policy(teams=TEAMS, balance={**BALANCE, "widen": WIDE}),
     P0 + ".balance.widen.max", "at least maxDifference"),
    ("balance-extra", policy(teams=TEAMS, balance={**BALANCE, "x": 1}), P0 + ".balance.x",
     "unknown"),
    ("regions-negative", policy(regions={"maxLatencyMs": -1}), P0 + ".regions.maxLatencyMs",
     ">= 0"),
    ("regions-max", policy(regions={**REGIONS, "widen": {**WIDE, "max": 10}}),
     P0 + ".regions.widen.max", "at least maxLatencyMs"),
    ("regions-on-mutual", policy(mode="mutual", regions=REGIONS), P0 + ".regions", "mode auto"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "field", "words"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_bad_team_rules_are_400_naming_the_field(
    admin: httpx.Client, body: dict[str, Any], field: str, words: str
) -> None:
    created = admin.post("/admin/projects", json={"id": "g", "policies": [body]})
    assert created.status_code == 400, created.text
    error = created.json()["error"]
    assert error["code"] == "request.invalid"
    assert error["details"]["field"] == field
    assert words in error["message"]
