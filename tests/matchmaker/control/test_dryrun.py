"""``?dryRun=true`` answers what the write would answer, on every store, and writes nothing."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from matchmaker.config import ServerConfig
from matchmaker.directory import ProjectDirectory
from tests.matchmaker.polling import wait_until

from .conftest import KEY

DRY = {"dryRun": "true"}


@pytest.fixture
def config(store_url: str) -> ServerConfig:
    return ServerConfig(port=0, management_port=0, management_key=KEY, store_url=store_url)


def key(secret: str) -> dict[str, str]:
    return {"type": "shared-secret", "secret": secret}


def policy(**fields: Any) -> dict[str, Any]:
    return {"name": "p", "mode": "auto", "groupSize": 2, **fields}


def answer(response: httpx.Response) -> tuple[int, Any]:
    """What a caller learns: the status and the body (an error's code and field)."""
    if response.status_code == 204:
        return 204, None
    body = response.json()
    if "error" in body:
        return response.status_code, (body["error"]["code"], body["error"].get("details"))
    return response.status_code, body


def projects(admin: httpx.Client) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = admin.get("/admin/projects").json()["projects"]
    return found


@pytest.mark.parametrize(
    "body",
    [
        {"id": "new", "keys": [key("fresh")], "policies": [policy(default=True)]},
        {"id": "taken"},
        {"id": "new", "keys": [key("held")]},
        {"id": "default"},
        {"id": "new", "policies": [policy(), policy()]},
        {"id": "new", "policies": [policy(default=True), policy(name="q", default=True)]},
        {"id": "new", "policies": [policy(mode="claim", filter={"band": "@self"})]},
        {"id": "new", "policies": [policy(groupSize=65)]},
        {"id": "new", "keys": [key(KEY)]},
        {"id": "new", "keys": [key("x" * 1025)]},
        {"id": "new", "policies": [policy(name="a\nb")]},
    ],
)
def test_a_dry_run_create_answers_what_the_create_answers(
    admin: httpx.Client, directory: ProjectDirectory, body: dict[str, Any]
) -> None:
    assert admin.post("/admin/projects", json={"id": "taken", "keys": [key("held")]}).is_success
    before = projects(admin)
    dry = admin.post("/admin/projects", json=body, params=DRY)
    assert projects(admin) == before
    assert directory.get("new") is None
    real = admin.post("/admin/projects", json=body)
    assert answer(dry) == answer(real)
    if dry.status_code == 201:
        assert dry.headers["location"] == real.headers["location"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("a", {"lockdown": True, "keys": [key("a-2")]}),
        ("a", {"keys": [key("held-by-b")]}),
        ("a", {"policies": [policy(), policy()]}),
        ("a", {"id": "b"}),
        ("missing", {"lockdown": True}),
        ("a", {"keys": [key("a-1"), key("a-1")]}),
    ],
)
def test_a_dry_run_patch_answers_what_the_patch_answers(
    admin: httpx.Client, directory: ProjectDirectory, path: str, body: dict[str, Any]
) -> None:
    assert admin.post("/admin/projects", json={"id": "a", "keys": [key("a-1")]}).is_success
    assert admin.post("/admin/projects", json={"id": "b", "keys": [key("held-by-b")]}).is_success
    before = projects(admin)
    seen = directory.get("a")
    dry = admin.patch(f"/admin/projects/{path}", json=body, params=DRY)
    assert projects(admin) == before
    assert directory.get("a") == seen
    assert answer(dry) == answer(admin.patch(f"/admin/projects/{path}", json=body))


def test_a_dry_run_delete_deletes_nothing(
    admin: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="matchmaker.control")
    assert admin.post("/admin/projects", json={"id": "a"}).is_success
    assert admin.delete("/admin/projects/a", params=DRY).status_code == 204
    # The audit line (written once the answer is sent) must not read as a deletion.
    line = "control DELETE /admin/projects/a -> 204 (dry run, nothing changed)"
    wait_until(lambda: line in caplog.messages, within_s=10, what="the audit line")
    assert [p["id"] for p in projects(admin)] == ["a"]
    assert answer(admin.delete("/admin/projects/b", params=DRY)) == answer(
        admin.delete("/admin/projects/b")
    )


@pytest.mark.parametrize("value", ["yes", "1", "True", ""])
def test_dry_run_is_true_or_false(admin: httpx.Client, value: str) -> None:
    response = admin.post("/admin/projects", json={"id": "a"}, params={"dryRun": value})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["field"] == "dryRun"
    assert projects(admin) == []
    assert admin.post("/admin/projects", json={"id": "a"}, params={"dryRun": "false"}).is_success


def test_a_dry_run_honours_if_match(admin: httpx.Client) -> None:
    created = admin.post("/admin/projects", json={"id": "a"})
    assert "etag" not in admin.post("/admin/projects", json={"id": "b"}, params=DRY).headers
    stale = created.headers["etag"]
    assert admin.patch("/admin/projects/a", json={"lockdown": True}).is_success
    for method, body in (("PATCH", {"displayName": "A"}), ("DELETE", None)):
        headers = {"If-Match": stale}
        dry = admin.request(method, "/admin/projects/a", json=body, headers=headers, params=DRY)
        real = admin.request(method, "/admin/projects/a", json=body, headers=headers)
        assert answer(dry)[0] == answer(real)[0] == 412
        assert dry.json()["error"]["code"] == "project.conflict"
    dry = admin.patch("/admin/projects/a", json={"displayName": "A"}, params=DRY)
    assert dry.status_code == 200
    assert "etag" not in dry.headers  # nothing was written, so there is no new revision
