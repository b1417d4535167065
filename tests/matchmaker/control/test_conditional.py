"""``ETag`` on every read and write of a Project, ``If-Match`` on PATCH and DELETE."""

from __future__ import annotations

import httpx
import pytest


def create(admin: httpx.Client, project_id: str = "p") -> str:
    response = admin.post("/admin/projects", json={"id": project_id})
    assert response.status_code == 201
    etag: str = response.headers["ETag"]
    return etag


def test_reads_and_writes_carry_the_etag_and_every_write_changes_it(admin: httpx.Client) -> None:
    created = create(admin)
    assert created.startswith('"')
    assert created.endswith('"')
    assert admin.get("/admin/projects/p").headers["ETag"] == created
    assert admin.head("/admin/projects/p").headers["ETag"] == created
    patched = admin.patch("/admin/projects/p", json={"lockdown": True}).headers["ETag"]
    assert patched != created
    assert admin.get("/admin/projects").json()["etags"] == {"p": patched}


def test_a_patch_with_a_stale_etag_is_412_and_changes_nothing(admin: httpx.Client) -> None:
    stale = create(admin)
    current = admin.patch("/admin/projects/p", json={"displayName": "new"}).headers["ETag"]
    refused = admin.patch("/admin/projects/p", json={"lockdown": True}, headers={"If-Match": stale})
    assert refused.status_code == 412
    assert refused.json()["error"]["code"] == "project.conflict"
    assert refused.json()["error"]["details"] == {"etag": current}
    assert admin.get("/admin/projects/p").json()["lockdown"] is False
    for form in ("{}", '"x", {}', "*"):
        if_match = form.format(current)
        response = admin.patch("/admin/projects/p", json={}, headers={"If-Match": if_match})
        assert response.status_code == 200, if_match
        current = response.headers["ETag"]


def test_a_delete_with_a_stale_etag_is_412_and_with_the_current_one_204(
    admin: httpx.Client,
) -> None:
    stale = create(admin)
    current = admin.patch("/admin/projects/p", json={"lockdown": True}).headers["ETag"]
    refused = admin.delete("/admin/projects/p", headers={"If-Match": stale})
    assert refused.status_code == 412
    assert refused.json()["error"]["code"] == "project.conflict"
    assert admin.get("/admin/projects/p").status_code == 200
    assert admin.delete("/admin/projects/p", headers={"If-Match": current}).status_code == 204


def test_a_weak_etag_never_matches(admin: httpx.Client) -> None:
    current = create(admin)
    response = admin.patch("/admin/projects/p", json={}, headers={"If-Match": f"W/{current}"})
    assert response.status_code == 412


@pytest.mark.parametrize("header", ["abc", '"unterminated', '"a"b"', ""])
def test_an_if_match_that_is_no_entity_tag_is_400(admin: httpx.Client, header: str) -> None:
    create(admin)
    response = admin.patch("/admin/projects/p", json={}, headers={"If-Match": header})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "request.invalid"
    assert response.json()["error"]["details"] == {"header": "If-Match"}
