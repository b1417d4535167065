"""The HTTP API over each store backend: same answers, including for ids no Project can have."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from matchmaker.config import ServerConfig
from matchmaker.model import MatchmakingPolicy, Project, ProjectKey
from matchmaker.store import open_store

from .conftest import KEY


@pytest.fixture
def config(store_url: str) -> ServerConfig:
    return ServerConfig(port=0, management_port=0, management_key=KEY, store_url=store_url)


def test_round_trip_on_every_store(admin: httpx.Client) -> None:
    body = {
        "id": "日本/\u0000-free",
        "keys": [
            {"type": "shared-secret", "secret": "nul\u0000inside"},
            {"type": "shared-secret", "secret": "for-the-delegate", "scopes": ["delegate"]},
        ],
        "policies": [{"name": "p", "mode": "auto", "groupSize": 3, "filter": {"k": 2**40}}],
    }
    created = admin.post("/admin/projects", json=body)
    assert created.status_code == 400  # the NUL in the id is refused before any store sees it
    body["id"] = "日本/ok"
    created = admin.post("/admin/projects", json=body)
    assert created.status_code == 201
    location = created.headers["location"]
    assert admin.get(location).json()["keys"] == body["keys"]
    patched = admin.patch(location, json={"displayName": "\u0000 label"})
    assert patched.json()["displayName"] == "\u0000 label"
    assert admin.get("/admin/projects").json()["projects"] == [patched.json()]
    assert admin.delete(location).status_code == 204


@pytest.mark.parametrize("raw", ["%00", "a%0Ab", "%ED%A0%80", "x" * 129, "%FF"])
def test_impossible_ids_in_the_path_are_404(admin: httpx.Client, raw: str) -> None:
    for method in ("GET", "DELETE"):
        response = admin.request(method, f"/admin/projects/{raw}")
        assert response.status_code == 404, (method, raw, response.text)
        # A newline never matches the route at all; the others reach it and find nothing.
        assert response.json()["error"]["code"] in ("project.not_found", "route.not_found")
    patched = admin.patch(f"/admin/projects/{raw}", json={"lockdown": True})
    assert patched.status_code == 404


@pytest.mark.parametrize("cursor", ["AA", "%%%", "_w", "YQ=x"])
def test_forged_cursors_are_400_on_every_store(admin: httpx.Client, cursor: str) -> None:
    response = admin.get("/admin/projects", params={"cursor": cursor})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["field"] == "cursor"


@pytest.fixture
def stored_before_the_rules(store_url: str) -> None:
    """A Project written before names and secrets were capped, as an older server stored it."""

    async def write() -> None:
        async with await open_store(store_url) as store:
            await store.create(
                Project(
                    "old",
                    keys=(ProjectKey("shared-secret", "s" * 2000),),
                    policies=(MatchmakingPolicy("x" * 300, "auto", 2),),
                )
            )

    asyncio.run(write())


@pytest.mark.parametrize(
    "store_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True
)
@pytest.mark.usefixtures("stored_before_the_rules")
def test_projects_stored_before_the_name_rule_still_load(admin: httpx.Client) -> None:
    (old,) = admin.get("/admin/projects").json()["projects"]
    assert old["policies"][0]["name"] == "x" * 300
    refused = admin.patch("/admin/projects/old", json={"lockdown": True})
    assert refused.json()["error"]["details"]["field"] == "$.policies[0].name"
    fixed = {"policies": [{"name": "x", "mode": "auto", "groupSize": 2}]}
    assert admin.patch("/admin/projects/old", json=fixed).json()["error"]["details"] == {
        "field": "$.keys[0].secret"
    }
    fixed["keys"] = [{"type": "shared-secret", "secret": "short"}]
    assert admin.patch("/admin/projects/old", json=fixed).status_code == 200
