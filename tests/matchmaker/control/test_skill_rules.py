"""/admin validates range rules and variable group sizes: types, bounds, auto only."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

RANGE = {"within": 100, "widen": {"everyMs": 5000, "by": 50, "max": 400}}
P0 = "$.policies[0]"
F = P0 + ".filter[...]"
MIN = P0 + ".minGroupSize"


def policy(**fields: Any) -> dict[str, Any]:
    return {"name": "ranked", "mode": "auto", "groupSize": 4, **fields}


def widen(**fields: Any) -> dict[str, Any]:
    return {"within": 100, "widen": {**RANGE["widen"], **fields}}  # type: ignore[dict-item]


def test_a_skill_policy_round_trips(admin: httpx.Client) -> None:
    ranked = policy(
        filter={"region": "@self", "queue": "ranked", "rating": RANGE},
        minGroupSize=2,
        fillTimeoutMs=10_000,
    )
    fractional = policy(name="f", filter={"mmr": {"within": 0.5}})
    body = {"id": "g", "policies": [ranked, fractional]}
    created = admin.post("/admin/projects", json=body)
    assert created.status_code == 201, created.text
    assert admin.get("/admin/projects/g").json()["policies"] == [ranked, fractional]


INVALID = [
    ("within-negative", policy(filter={"r": {"within": -1}}), F + ".within", ">= 0"),
    ("within-bool", policy(filter={"r": {"within": True}}), F + ".within", "bool"),
    ("within-string", policy(filter={"r": {"within": "9"}}), F + ".within", "str"),
    ("within-huge", policy(filter={"r": {"within": 1e12}}), F + ".within", "<="),
    ("range-extra", policy(filter={"r": {"within": 1, "x": 1}}), F + ".x", "unknown"),
    ("widen-every-zero", policy(filter={"r": widen(everyMs=0)}), F + ".widen.everyMs", ">= 1"),
    ("widen-by-zero", policy(filter={"r": widen(by=0)}), F + ".widen.by", "Expected"),
    ("no-every", policy(filter={"r": {"within": 1, "widen": {}}}), F + ".widen.everyMs", "missing"),
    ("max-below", policy(filter={"r": widen(max=50)}), P0 + ".filter.r.widen.max", "at least"),
    ("two-ranges", policy(filter={"a": RANGE, "b": RANGE}), P0 + ".filter.b", "one range rule"),
    ("range-on-claim", policy(mode="claim", filter={"r": RANGE}), P0 + ".filter", "mode auto only"),
    ("min-above-max", policy(minGroupSize=5, fillTimeoutMs=1), MIN, "at most group"),
    ("min-zero", policy(minGroupSize=0, fillTimeoutMs=1), MIN, ">= 1"),
    ("min-alone", policy(minGroupSize=2), P0 + ".fillTimeoutMs", "together"),
    ("fill-alone", policy(fillTimeoutMs=1000), MIN, "together"),
    ("fill-negative", policy(minGroupSize=2, fillTimeoutMs=-1), P0 + ".fillTimeoutMs", ">= 0"),
    ("fill-float", policy(minGroupSize=2, fillTimeoutMs=1.5), P0 + ".fillTimeoutMs", "int"),
    ("min-on-mutual", policy(mode="mutual", minGroupSize=2, fillTimeoutMs=9), MIN, "mode auto"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "field", "words"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_bad_rules_are_400_naming_the_field(
    admin: httpx.Client, body: dict[str, Any], field: str, words: str
) -> None:
    created = admin.post("/admin/projects", json={"id": "g", "policies": [body]})
    assert created.status_code == 400, created.text
    error = created.json()["error"]
    assert error["code"] == "request.invalid"
    assert error["details"]["field"] == field
    assert words in error["message"]
    assert admin.post("/admin/projects", json={"id": "g"}).status_code == 201
    patched = admin.patch("/admin/projects/g", json={"policies": [body]})
    assert patched.status_code == 400
    assert patched.json()["error"]["details"]["field"] == field
    assert admin.get("/admin/projects/g").json()["policies"] == []


def test_a_dry_run_checks_the_same_rules(admin: httpx.Client) -> None:
    dry = {"dryRun": "true"}
    bad = {"id": "g", "policies": [policy(filter={"r": widen(max=50)})]}
    refused = admin.post("/admin/projects", json=bad, params=dry)
    assert refused.status_code == 400
    assert refused.json()["error"]["details"]["field"] == "$.policies[0].filter.r.widen.max"
    good = {"id": "g", "policies": [policy(filter={"r": RANGE}, minGroupSize=2, fillTimeoutMs=1)]}
    assert admin.post("/admin/projects", json=good, params=dry).status_code == 201
    assert admin.get("/admin/projects").json()["projects"] == []
