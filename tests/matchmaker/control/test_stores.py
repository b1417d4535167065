"""The HTTP API over each store backend: same answers, including for ids no Project can have."""

from __future__ import annotations

import httpx
import pytest

from matchmaker.config import ServerConfig

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
