"""The five ``/admin`` endpoints over real HTTP: the seed's rules and the decided gaps."""

from __future__ import annotations

import urllib.parse
from typing import Any

import httpx
import pytest

from matchmaker.directory import ProjectDirectory

from .conftest import KEY

DUEL = {"name": "duel", "mode": "auto", "groupSize": 2, "default": True, "filter": {"r": "@self"}}
FULL = {
    "id": "game",
    "displayName": "The Game",
    "lockdown": True,
    "keys": [{"type": "shared-secret", "secret": "s3cret"}],
    "policies": [DUEL],
}


def error_code(response: httpx.Response) -> str:
    body = response.json()
    assert set(body) == {"error"}
    assert isinstance(body["error"]["message"], str)
    code: str = body["error"]["code"]
    return code


def test_create_returns_201_with_the_stored_config(admin: httpx.Client) -> None:
    response = admin.post("/admin/projects", json=FULL)
    assert response.status_code == 201
    assert response.json() == FULL
    assert response.headers["location"] == "/admin/projects/game"
    assert admin.get("/admin/projects/game").json() == FULL


def test_create_normalises_keys_policies_lockdown(admin: httpx.Client) -> None:
    response = admin.post("/admin/projects", json={"id": "bare"})
    assert response.status_code == 201
    assert response.json() == {
        "id": "bare",
        "displayName": None,
        "lockdown": False,
        "keys": [],
        "policies": [],
    }


def test_create_existing_id_is_409(admin: httpx.Client) -> None:
    assert admin.post("/admin/projects", json={"id": "p"}).status_code == 201
    response = admin.post("/admin/projects", json={"id": "p", "lockdown": True})
    assert response.status_code == 409
    assert error_code(response) == "project.exists"
    assert admin.get("/admin/projects/p").json()["lockdown"] is False


def test_reserved_id_default_is_400(admin: httpx.Client) -> None:
    response = admin.post("/admin/projects", json={"id": "default"})
    assert response.status_code == 400
    assert error_code(response) == "project.reserved_id"
    assert admin.get("/admin/projects/default").status_code == 404


@pytest.mark.parametrize(
    "body",
    [b"{", b"", b"{'id': 1}", b'{"id": "a",}', b"\xff\xfe", b'{"id": "\\ud800"}'],
    ids=["truncated", "empty", "single-quotes", "trailing-comma", "not-utf8", "lone-surrogate"],
)
def test_malformed_json_is_400(admin: httpx.Client, body: bytes) -> None:
    response = admin.post(
        "/admin/projects", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert error_code(response) == "request.malformed_json"


def with_policy(**fields: Any) -> dict[str, Any]:
    return {"id": "a", "policies": [{**DUEL, **fields}]}


def with_key(**fields: Any) -> dict[str, Any]:
    return {"id": "a", "keys": [{"type": "shared-secret", "secret": "s", **fields}]}


P0, P1 = "$.policies[0].", "$.policies[1]."
GS = P0 + "groupSize"
INVALID: list[tuple[str, Any, str]] = [
    ("not-an-object", [], "$"),
    ("missing-id", {"lockdown": True}, "$.id"),
    ("empty-id", {"id": ""}, "$.id"),
    ("long-id", {"id": "x" * 129}, "$.id"),
    ("control-char-id", {"id": "a\nb"}, "$.id"),
    ("numeric-id", {"id": 7}, "$.id"),
    ("unknown-field", {"id": "a", "colour": "red"}, "$.colour"),
    ("display-name-number", {"id": "a", "displayName": 3}, "$.displayName"),
    ("lockdown-string", {"id": "a", "lockdown": "yes"}, "$.lockdown"),
    ("lockdown-null", {"id": "a", "lockdown": None}, "$.lockdown"),
    ("keys-object", {"id": "a", "keys": {}}, "$.keys"),
    ("key-type", with_key(type="jwt"), "$.keys[0].type"),
    ("key-empty-secret", with_key(secret=""), "$.keys[0].secret"),
    ("key-extra", with_key(x=1), "$.keys[0].x"),
    ("policy-no-name", {"id": "a", "policies": [{"mode": "auto", "groupSize": 2}]}, P0 + "name"),
    ("policy-mode", with_policy(mode="random"), "$.policies[0].mode"),
    ("group-size-zero", with_policy(groupSize=0), GS),
    ("group-size-bool", with_policy(groupSize=True), GS),
    ("group-size-string", with_policy(groupSize="2"), GS),
    ("group-size-float", with_policy(groupSize=2.5), GS),
    ("group-size-huge", with_policy(groupSize=10**30), GS),
    ("default-string", with_policy(default="true"), "$.policies[0].default"),
    ("filter-list", with_policy(filter=["@self"]), "$.policies[0].filter"),
    ("filter-null-value", with_policy(filter={"r": None}), "$.policies[0].filter[...]"),
    ("filter-object-value", with_policy(filter={"r": {}}), "$.policies[0].filter[...].within"),
    ("duplicate-policy", {"id": "a", "policies": [DUEL, {**DUEL, "default": False}]}, P1 + "name"),
    ("two-defaults", {"id": "a", "policies": [DUEL, {**DUEL, "name": "b"}]}, P1 + "default"),
    ("duplicate-secret", {"id": "a", "keys": with_key()["keys"] * 2}, "$.keys[1].secret"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "field"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_body_is_400_naming_the_field(admin: httpx.Client, body: Any, field: str) -> None:
    response = admin.post("/admin/projects", json=body)
    assert response.status_code == 400, response.text
    assert error_code(response) == "request.invalid"
    assert response.json()["error"]["details"]["field"] == field
    assert admin.get("/admin/projects").json()["projects"] == []


def test_filter_values_may_be_scalars_or_self(admin: httpx.Client) -> None:
    policy = {**DUEL, "filter": {"a": "@self", "b": "eu", "c": 3, "d": 2.5, "e": False}}
    response = admin.post("/admin/projects", json={"id": "f", "policies": [policy]})
    assert response.status_code == 201
    assert response.json()["policies"] == [policy]


def test_every_mode_is_accepted(admin: httpx.Client) -> None:
    modes = ["auto", "claim", "mutual", "propose", "delegated"]
    policies = [{"name": m, "mode": m, "groupSize": 2} for m in modes]
    response = admin.post("/admin/projects", json={"id": "modes", "policies": policies})
    assert response.status_code == 201
    assert [p["mode"] for p in response.json()["policies"]] == modes


def test_id_is_opaque_up_to_128_chars(admin: httpx.Client) -> None:
    odd = "ü/日本?#% " + "x" * 120
    assert len(odd) == 128
    created = admin.post("/admin/projects", json={"id": odd})
    assert created.status_code == 201
    path = "/admin/projects/" + urllib.parse.quote(odd, safe="")
    assert created.headers["location"] == path
    assert admin.get(path).json()["id"] == odd
    assert admin.delete(path).status_code == 204


def test_get_unknown_is_404(admin: httpx.Client) -> None:
    response = admin.get("/admin/projects/nope")
    assert response.status_code == 404
    assert error_code(response) == "project.not_found"


def test_patch_merges_updatable_fields(admin: httpx.Client) -> None:
    admin.post("/admin/projects", json=FULL)
    claim = {"name": "room", "mode": "claim", "groupSize": 4}
    response = admin.patch("/admin/projects/game", json={"policies": [claim], "lockdown": False})
    assert response.status_code == 200
    expected = {**FULL, "policies": [claim], "lockdown": False}
    assert response.json() == expected
    assert admin.get("/admin/projects/game").json() == expected


def test_patch_null_display_name_removes_it(admin: httpx.Client) -> None:
    admin.post("/admin/projects", json=FULL)
    response = admin.patch("/admin/projects/game", json={"displayName": None})
    assert response.json() == {**FULL, "displayName": None}


def test_patch_empty_body_changes_nothing(admin: httpx.Client) -> None:
    admin.post("/admin/projects", json=FULL)
    assert admin.patch("/admin/projects/game", json={}).json() == FULL


def test_patch_accepts_merge_patch_media_type(admin: httpx.Client) -> None:
    admin.post("/admin/projects", json=FULL)
    response = admin.patch(
        "/admin/projects/game",
        content=b'{"lockdown": false}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200
    assert response.json()["lockdown"] is False


def test_patch_cannot_change_the_id(admin: httpx.Client) -> None:
    admin.post("/admin/projects", json=FULL)
    response = admin.patch("/admin/projects/game", json={"id": "other", "lockdown": False})
    assert response.status_code == 400
    assert error_code(response) == "request.invalid"
    assert response.json()["error"]["details"]["field"] == "$.id"
    assert admin.get("/admin/projects/game").json() == FULL
    assert admin.get("/admin/projects/other").status_code == 404
    same = admin.patch("/admin/projects/game", json={"id": "game", "lockdown": False})
    assert same.status_code == 200


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"policies": [DUEL, {**DUEL, "name": "second"}]}, "$.policies[1].default"),
        ({"policies": [DUEL, DUEL]}, "$.policies[1].name"),
        ({"lockdown": None}, "$.lockdown"),
        ({"keys": None}, "$.keys"),
        ({"unknown": 1}, "$.unknown"),
        ({"policies": [{**DUEL, "groupSize": 0}]}, "$.policies[0].groupSize"),
    ],
)
def test_invalid_patch_is_400_and_changes_nothing(
    admin: httpx.Client, patch: dict[str, Any], field: str
) -> None:
    admin.post("/admin/projects", json=FULL)
    response = admin.patch("/admin/projects/game", json={"lockdown": False, **patch})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["field"] == field
    assert admin.get("/admin/projects/game").json() == FULL


def test_patch_unknown_is_404(admin: httpx.Client) -> None:
    response = admin.patch("/admin/projects/nope", json={"lockdown": True})
    assert response.status_code == 404
    assert error_code(response) == "project.not_found"


def test_delete_is_204_without_body_then_404(admin: httpx.Client) -> None:
    admin.post("/admin/projects", json=FULL)
    response = admin.delete("/admin/projects/game")
    assert response.status_code == 204
    assert response.content == b""
    assert admin.get("/admin/projects/game").status_code == 404
    again = admin.delete("/admin/projects/game")
    assert again.status_code == 404
    assert error_code(again) == "project.not_found"


def test_a_secret_binds_to_one_project(admin: httpx.Client) -> None:
    admin.post("/admin/projects", json=FULL)
    response = admin.post("/admin/projects", json={**FULL, "id": "other"})
    assert response.status_code == 409
    assert error_code(response) == "project.secret_in_use"
    admin.post("/admin/projects", json={"id": "other"})
    stolen = admin.patch("/admin/projects/other", json={"keys": FULL["keys"]})
    assert stolen.status_code == 409
    assert admin.get("/admin/projects/other").json()["keys"] == []


def test_the_management_key_cannot_be_a_client_secret(admin: httpx.Client) -> None:
    keys = [{"type": "shared-secret", "secret": "fine"}, {"type": "shared-secret", "secret": KEY}]
    created = admin.post("/admin/projects", json={"id": "p", "keys": keys})
    assert created.status_code == 400
    assert created.json()["error"]["details"]["field"] == "$.keys[1].secret"
    admin.post("/admin/projects", json={"id": "p"})
    patched = admin.patch("/admin/projects/p", json={"keys": keys})
    assert patched.status_code == 400
    assert admin.get("/admin/projects/p").json()["keys"] == []


def test_writes_update_the_directory(admin: httpx.Client, directory: ProjectDirectory) -> None:
    admin.post("/admin/projects", json=FULL)
    game = directory.get("game")
    assert game is not None
    assert game.lockdown
    assert directory.project_for_secret("s3cret") == game
    admin.patch("/admin/projects/game", json={"keys": [{"type": "shared-secret", "secret": "n"}]})
    assert directory.project_for_secret("s3cret") is None
    patched = directory.project_for_secret("n")
    assert patched is not None
    assert patched.id == "game"
    admin.patch("/admin/projects/game", json={"policies": []})  # a failed write...
    admin.patch("/admin/projects/game", json={"lockdown": "no"})  # ...leaves it alone
    assert directory.get("game") == patched.__class__(**{**_fields(patched), "policies": ()})
    admin.delete("/admin/projects/game")
    assert directory.get("game") is None
    assert directory.project_for_secret("n") is None


def _fields(project: Any) -> dict[str, Any]:
    return {f: getattr(project, f) for f in project.__struct_fields__}


@pytest.mark.parametrize(
    ("scopes", "status", "field"),
    [
        (["delegate"], 201, None),
        ([], 201, None),
        (["admin"], 400, "$.keys[0].scopes[0]"),
        (["delegate", "delegate"], 400, "$.keys[0].scopes"),
        ("delegate", 400, "$.keys[0].scopes"),
    ],
)
def test_key_scopes_are_validated(
    admin: httpx.Client, scopes: Any, status: int, field: str | None
) -> None:
    key = {"type": "shared-secret", "secret": "delegate-key", "scopes": scopes}
    response = admin.post("/admin/projects", json={"id": "scoped", "keys": [key]})
    assert response.status_code == status, response.text
    if status == 201:
        # an empty list is the default: the stored key omits it
        stored = admin.get("/admin/projects/scoped").json()["keys"]
        assert stored == [key if scopes else {"type": "shared-secret", "secret": "delegate-key"}]
    else:
        assert error_code(response) == "request.invalid"
        assert response.json()["error"]["details"]["field"] == field
        assert admin.get("/admin/projects/scoped").status_code == 404
