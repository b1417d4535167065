from __future__ import annotations

from typing import Any

import pytest

from matchmaker.core import EnterPool, PoolSpec, resolve_pool
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, Project

DUEL = MatchmakingPolicy(name="duel", mode="auto", group_size=2, default=True)
REGIONAL = MatchmakingPolicy(
    name="regional", mode="auto", group_size=3, filter={"region": "@self", "ranked": True}
)
PROJECT = Project(id="p", policies=(DUEL, REGIONAL))
LOCKED = Project(id="l", lockdown=True, policies=(REGIONAL,))
BARE = Project(id="b")


def enter(**fields: Any) -> EnterPool:
    return EnterPool(**fields)


@pytest.mark.parametrize(
    ("project", "request_", "expected"),
    [
        (PROJECT, {}, ("duel", PoolSpec("auto", 2), True)),
        (
            PROJECT,
            {"policy": "regional"},
            ("regional", PoolSpec.of("auto", 3, REGIONAL.filter), True),
        ),
        (PROJECT, {"pool": "duel"}, ("duel", PoolSpec("auto", 2), True)),
        (PROJECT, {"pool": "duel", "create": True}, ("duel", PoolSpec("auto", 2), True)),
        (PROJECT, {"pool": "x"}, ("x", None, False)),
        (
            BARE,
            {"pool": "x", "create": True, "mode": "auto", "group_size": 4},
            ("x", PoolSpec("auto", 4), False),
        ),
        (LOCKED, {"pool": "regional"}, ("regional", PoolSpec.of("auto", 3, REGIONAL.filter), True)),
    ],
)
def test_resolves(project: Project, request_: dict[str, Any], expected: tuple[Any, ...]) -> None:
    assert resolve_pool(project, enter(**request_)) == expected


@pytest.mark.parametrize(
    ("project", "request_", "code"),
    [
        (PROJECT, {"policy": "nope"}, "pool.policy_not_found"),
        (BARE, {}, "pool.policy_required"),
        (PROJECT, {"policy": "duel", "group_size": 3}, "pool.conflict"),
        (PROJECT, {"pool": "duel", "mode": "claim"}, "pool.conflict"),
        (PROJECT, {"policy": "regional", "filter": {}}, "pool.conflict"),
        (
            LOCKED,
            {"pool": "x", "create": True, "mode": "auto", "group_size": 2},
            "project.lockdown",
        ),
        (LOCKED, {"pool": "x"}, "pool.policy_not_found"),
        (BARE, {"pool": "x", "create": True}, "protocol.bad_request"),
    ],
)
def test_refuses(project: Project, request_: dict[str, Any], code: str) -> None:
    with pytest.raises(MatchmakerError) as caught:
        resolve_pool(project, enter(**request_))
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("attributes", "bucket_or_code"),
    [
        ({"region": "eu", "ranked": True}, (("string", "eu"),)),
        ({"region": "us", "ranked": True, "extra": 1}, (("string", "us"),)),
        ({"ranked": True}, "pool.attribute_missing"),
        ({"region": "eu"}, "pool.attribute_missing"),
        ({"region": "eu", "ranked": False}, "pool.filter_mismatch"),
        ({"region": "eu", "ranked": 1}, "pool.filter_mismatch"),
    ],
)
def test_filter_admission(attributes: dict[str, Any], bucket_or_code: Any) -> None:
    spec = PoolSpec.of("auto", 3, REGIONAL.filter)
    if isinstance(bucket_or_code, tuple):
        assert spec.bucket_for(attributes) == bucket_or_code
    else:
        with pytest.raises(MatchmakerError) as caught:
            spec.bucket_for(attributes)
        assert caught.value.code == bucket_or_code
