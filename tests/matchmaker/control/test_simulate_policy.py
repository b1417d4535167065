"""``matchmaker simulate --policy`` refuses a bad policy with the error ``/admin`` gives it
in a Project (the same code and rule; the path starts at the policy, not the Project)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.matchmaker.simulate.traces import simulate, write_lines

BAD = [
    {"name": "p", "mode": "auto", "groupSize": 1000},
    {"name": "p", "mode": "auto", "groupSize": 2, "colour": "red"},
    {"name": "p", "mode": "auto"},
    {"name": "p", "mode": "auto", "groupSize": 2, "minGroupSize": 1},
    {"name": "p", "mode": "claim", "groupSize": 2, "filter": {"r": {"within": 5}}},
    {
        "name": "p",
        "mode": "auto",
        "groupSize": 2,
        "filter": {"r": {"within": 5, "widen": {"everyMs": 10, "by": 1, "max": 4}}},
    },
    {"name": "", "mode": "auto", "groupSize": 2},
]


@pytest.mark.parametrize("policy", BAD)
def test_a_bad_policy_gets_the_admin_error(
    admin: httpx.Client, tmp_path: Path, policy: dict[str, Any]
) -> None:
    answer = admin.post("/admin/projects", json={"id": "game", "policies": [policy]})
    assert answer.status_code == 400
    error = answer.json()["error"]
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy))
    arrivals = write_lines(tmp_path / "a.jsonl", [{"at_ms": 0, "attributes": {"r": 1}}])
    result = simulate("--policy", path, "--arrivals", arrivals)
    assert result.exit_code == 1
    assert result.stdout == ""
    # msgspec names no path for the top level, where the policy is here.
    expected = error["message"].replace("$.policies[0]", "$").removesuffix(" - at `$`")
    assert result.stderr.strip() == f"error: {expected} [{error['code']}]"


def test_malformed_json_is_the_admin_code(admin: httpx.Client, tmp_path: Path) -> None:
    answer = admin.post(
        "/admin/projects", content=b"{nope", headers={"content-type": "application/json"}
    )
    path = tmp_path / "policy.json"
    path.write_text("{nope")
    arrivals = write_lines(tmp_path / "a.jsonl", [])
    result = simulate("--policy", path, "--arrivals", arrivals)
    code = answer.json()["error"]["code"]
    assert code == "request.malformed_json"
    assert result.stderr.strip().endswith(f"[{code}]")
