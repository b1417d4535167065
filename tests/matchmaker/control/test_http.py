"""Authentication, routing, media types, body limits, paging and concurrency over HTTP."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from matchmaker.config import ControlLimits
from matchmaker.server import Bound

from .conftest import KEY

JSON = {"Content-Type": "application/json"}
WRONG_KEYS = [
    None,
    "",
    "Bearer",
    f"Bearer {KEY}x",
    f"Bearer {KEY[:-1]}",
    f"Basic {KEY}",
    KEY,
    f"Bearer  {KEY}",
]


@pytest.mark.parametrize("authorization", WRONG_KEYS)
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/admin/projects"),
        ("POST", "/admin/projects"),
        ("GET", "/admin/projects/unknown"),
        ("DELETE", "/admin/projects/unknown"),
        ("PUT", "/admin/projects"),
        ("GET", "/admin/nowhere"),
        ("GET", "/admin/openapi.json"),
    ],
)
def test_missing_or_wrong_key_is_401_before_routing(
    anonymous: httpx.Client, authorization: str | None, method: str, path: str
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = anonymous.request(method, path, headers=headers, json={"id": "x"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "auth.unauthorized"
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_refusing_an_unread_body_closes_the_connection(anonymous: httpx.Client) -> None:
    response = anonymous.post("/admin/projects", json={"id": "x"})
    assert response.status_code == 401
    assert response.headers["connection"] == "close"
    assert anonymous.get("/healthz").status_code == 200  # a new connection is opened


def test_unauthorised_create_stores_nothing(anonymous: httpx.Client, admin: httpx.Client) -> None:
    anonymous.post("/admin/projects", json={"id": "x"}, headers={"Authorization": "Bearer no"})
    assert admin.get("/admin/projects/x").status_code == 404


def test_the_bearer_scheme_is_case_insensitive(anonymous: httpx.Client) -> None:
    response = anonymous.get("/admin/projects", headers={"Authorization": f"bearer {KEY}"})
    assert response.status_code == 200


def test_healthz_needs_no_key(anonymous: httpx.Client) -> None:
    response = anonymous.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/admin/projects", "GET, POST, HEAD"),
        ("DELETE", "/admin/projects", "GET, POST, HEAD"),
        ("POST", "/admin/projects/x", "GET, PATCH, DELETE, HEAD"),
        ("PUT", "/admin/projects/x", "GET, PATCH, DELETE, HEAD"),
        ("OPTIONS", "/admin/projects/x", "GET, PATCH, DELETE, HEAD"),
        ("POST", "/admin/openapi.json", "GET, HEAD"),
    ],
)
def test_unsupported_method_is_405_with_allow(
    admin: httpx.Client, method: str, path: str, allow: str
) -> None:
    response = admin.request(method, path)
    assert response.status_code == 405
    assert response.headers["allow"] == allow
    assert response.json()["error"]["code"] == "method.not_allowed"


@pytest.mark.parametrize("path", ["/admin", "/admin/", "/admin/project", "/", "/projects"])
def test_unknown_path_is_404_json(admin: httpx.Client, path: str) -> None:
    response = admin.get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "route.not_found"


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "application/jsonx", "json"],
)
def test_post_needs_a_json_content_type(admin: httpx.Client, content_type: str | None) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    response = admin.post("/admin/projects", content=b'{"id": "a"}', headers=headers)
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "request.unsupported_media_type"
    assert admin.get("/admin/projects/a").status_code == 404


def test_json_with_charset_is_accepted(admin: httpx.Client) -> None:
    headers = {"Content-Type": "Application/JSON; charset=utf-8"}
    response = admin.post("/admin/projects", content=b'{"id": "a"}', headers=headers)
    assert response.status_code == 201


def test_patch_needs_a_json_content_type(admin: httpx.Client) -> None:
    admin.post("/admin/projects", json={"id": "a"})
    response = admin.patch("/admin/projects/a", content=b"{}", headers={"Content-Type": "text/x"})
    assert response.status_code == 415


def test_body_of_exactly_1_mib_is_accepted(admin: httpx.Client) -> None:
    head, tail = b'{"id": "a", "displayName": "', b'"}'
    body = head + b"x" * (ControlLimits().max_body_bytes - len(head) - len(tail)) + tail
    assert len(body) == ControlLimits().max_body_bytes
    assert admin.post("/admin/projects", content=body, headers=JSON).status_code == 201


def test_body_over_1_mib_is_413(admin: httpx.Client) -> None:
    body = b'{"id": "a", "displayName": "' + b"x" * ControlLimits().max_body_bytes + b'"}'
    response = admin.post("/admin/projects", content=body, headers=JSON)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request.too_large"
    assert admin.get("/admin/projects/a").status_code == 404


def test_chunked_body_over_1_mib_is_413(admin: httpx.Client) -> None:
    def chunks() -> object:
        yield b'{"id": "a", "displayName": "'
        for _ in range(20):
            yield b"x" * 65536
        yield b'"}'

    response = admin.post("/admin/projects", content=chunks(), headers=JSON)  # type: ignore[arg-type]
    assert response.status_code == 413


def test_413_is_answered_without_reading_the_rest(server: Bound) -> None:
    """A declared 100 MiB body is refused after the headers; the client never sends it."""
    assert server.management is not None
    with socket.create_connection(server.management, timeout=5) as sock:
        sock.sendall(
            b"POST /admin/projects HTTP/1.1\r\nHost: x\r\n"
            + f"Authorization: Bearer {KEY}\r\n".encode()
            + b"Content-Type: application/json\r\nContent-Length: 104857600\r\n\r\n{"
        )
        started = time.monotonic()
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = sock.recv(65536)
            if not chunk:
                break
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 413")
        assert b"\r\nconnection: close\r\n" in reply.lower()  # the unread rest is not awaited
        assert time.monotonic() - started < 5


THREE_MB = b'{"id": "a", "displayName": "' + b"x" * 3_000_000 + b'"}'


def _send_whole_body_then_read(sock: socket.socket, body: bytes) -> tuple[bytes, bytes]:
    """A client that writes its entire request before reading (as most do): the status
    line and the body of the answer, read to its Content-Length."""
    sock.sendall(
        b"POST /admin/projects HTTP/1.1\r\nHost: x\r\n"
        + f"Authorization: Bearer {KEY}\r\nContent-Type: application/json\r\n".encode()
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )
    sock.sendall(body)  # a reset here (or below) is what the server must not cause
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += sock.recv(65536)
    head, _, rest = reply.partition(b"\r\n\r\n")
    length = int(
        next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))[15:]
    )
    while len(rest) < length:
        rest += sock.recv(65536)
    return head.split(b"\r\n")[0], rest


def test_a_3_mb_body_is_answered_413_with_its_coded_body_every_time(server: Bound) -> None:
    """The rest of a too-large body is read and dropped before the answer, so a client
    still writing it never meets a reset: the same connection then serves the next one."""
    assert server.management is not None
    with socket.create_connection(server.management, timeout=10) as sock:
        for _ in range(10):
            status, body = _send_whole_body_then_read(sock, THREE_MB)
            assert status == b"HTTP/1.1 413 "
            assert json.loads(body)["error"]["code"] == "request.too_large"
        status, body = _send_whole_body_then_read(sock, b'{"id": "kept"}')
        assert status == b"HTTP/1.1 201 "


def test_a_3_mb_body_sent_by_httpx_is_413_every_time(admin: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        for start in range(0, len(THREE_MB), 65536):
            yield THREE_MB[start : start + 65536]

    for content in [THREE_MB] * 10 + [chunks() for _ in range(10)]:
        response = admin.post("/admin/projects", content=content, headers=JSON)
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "request.too_large"
    assert admin.get("/admin/projects/a").status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"id": "a", "id": "b"}', "$.id"),
        (
            b'{"id": "b", "policies": [{"name": "x", "mode": "auto", "groupSize": 2, '
            b'"name": "y"}]}',
            "$.policies[0].name",
        ),
        (
            b'{"id": "b", "keys": [{"type": "shared-secret", "secret": "s1", "secret": "s2"}]}',
            "$.keys[0].secret",
        ),
    ],
)
def test_a_key_repeated_in_one_object_is_a_coded_400(
    admin: httpx.Client, body: bytes, field: str
) -> None:
    """One body, one meaning: a proxy whose parser keeps the first value and this server
    must not act on two different requests."""
    response = admin.post("/admin/projects", content=body, headers=JSON)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["details"]) == ("request.duplicate_key", {"field": field})
    assert admin.get("/admin/projects").json()["projects"] == []
    admin.post("/admin/projects", json={"id": "p"})
    patched = admin.patch(
        "/admin/projects/p", content=b'{"lockdown": true, "lockdown": false}', headers=JSON
    )
    assert patched.status_code == 400
    assert patched.json()["error"]["details"] == {"field": "$.lockdown"}
    assert admin.get("/admin/projects/p").json()["lockdown"] is False


def test_list_is_ordered_by_id_and_paged(admin: httpx.Client) -> None:
    ids = [f"p{i:03d}" for i in range(25)]
    for project_id in reversed(ids):
        assert admin.post("/admin/projects", json={"id": project_id}).status_code == 201
    everything = admin.get("/admin/projects").json()
    assert [p["id"] for p in everything["projects"]] == ids
    assert everything["next_cursor"] is None
    seen: list[str] = []
    params: dict[str, str | int] = {"limit": 10}
    while True:
        page = admin.get("/admin/projects", params=params).json()
        assert len(page["projects"]) <= 10
        seen += [p["id"] for p in page["projects"]]
        if page["next_cursor"] is None:
            break
        params = {"limit": 10, "cursor": page["next_cursor"]}
    assert seen == ids


def test_list_entries_are_full_configs(admin: httpx.Client) -> None:
    etag = admin.post("/admin/projects", json={"id": "a", "lockdown": True}).headers["ETag"]
    assert admin.get("/admin/projects").json() == {
        "projects": [
            {"id": "a", "displayName": None, "lockdown": True, "keys": [], "policies": []}
        ],
        "next_cursor": None,
        "etags": {"a": etag},
    }


def test_list_limit_bounds(admin: httpx.Client) -> None:
    for project_id in ("a", "b"):
        admin.post("/admin/projects", json={"id": project_id})
    assert len(admin.get("/admin/projects", params={"limit": 1}).json()["projects"]) == 1
    assert admin.get("/admin/projects", params={"limit": 1000}).status_code == 200
    for bad in ("0", "1001", "-1", "x", "1.5", ""):
        response = admin.get("/admin/projects", params={"limit": bad})
        assert response.status_code == 400, bad
        assert response.json()["error"]["details"]["field"] == "limit"


def test_list_rejects_a_forged_cursor(admin: httpx.Client) -> None:
    response = admin.get("/admin/projects", params={"cursor": "%%%"})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["field"] == "cursor"


def test_openapi_document_is_served_behind_the_key(admin: httpx.Client) -> None:
    document = admin.get("/admin/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) >= {"/admin/projects", "/admin/projects/{id}"}
    assert "Project" in document["components"]["schemas"]


async def test_concurrent_creates_of_one_id_give_one_201(base_url: str) -> None:
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=10) as client:
        responses = await asyncio.gather(
            *(
                client.post("/admin/projects", json={"id": "race", "displayName": str(i)})
                for i in range(20)
            )
        )
    codes = sorted(r.status_code for r in responses)
    assert codes == [201] + [409] * 19


async def test_concurrent_patches_lose_no_update(base_url: str) -> None:
    """Concurrent PATCHes of different fields of one Project all land."""
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=10) as client:
        await client.post("/admin/projects", json={"id": "p"})
        for round_ in range(8):
            patches: list[dict[str, Any]] = [
                {"displayName": f"name {round_}"},
                {"lockdown": round_ % 2 == 0},
                {"keys": [{"type": "shared-secret", "secret": f"s{round_}"}]},
                {"policies": [{"name": f"n{round_}", "mode": "auto", "groupSize": 2}]},
            ]
            responses = await asyncio.gather(
                *(client.patch("/admin/projects/p", json=patch) for patch in patches)
            )
            assert [r.status_code for r in responses] == [200] * 4
            final = (await client.get("/admin/projects/p")).json()
            assert final == {"id": "p", **{k: v for patch in patches for k, v in patch.items()}}
