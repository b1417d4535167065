"""/admin is as strict as the data plane: bytes, filters, per-Project limits, slow bodies."""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
import threading
from typing import Any

import httpx
import pytest

from matchmaker.config import ControlLimits, ServerConfig
from matchmaker.server import Bound
from tests.matchmaker.polling import wait_until

from .conftest import KEY, ServerThread

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def config() -> ServerConfig:
    control = ControlLimits(
        max_policies_per_project=2, max_keys_per_project=1, max_body_bytes=4096, body_timeout_s=0.5
    )
    return ServerConfig(
        port=0, management_port=0, management_key=KEY, store_url="memory://", control=control
    )


def policy(**fields: Any) -> dict[str, Any]:
    return {"name": "p", "mode": "auto", "groupSize": 2, **fields}


def test_invalid_utf8_inside_a_string_is_malformed_json(
    admin: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    for body in (b'{"id": "a\xff"}', b'{"id": "ok", "displayName": "\xc3"}'):
        response = admin.post("/admin/projects", content=body, headers=JSON)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "request.malformed_json"
    patched = admin.patch(
        "/admin/projects/x", content=b'{"displayName": "\xed\xa0\x80"}', headers=JSON
    )
    assert patched.json()["error"]["code"] == "request.malformed_json"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    ("filter", "mode", "field", "words"),
    [
        ({"bad key": 1}, "auto", "$.policies[0].filter.bad key", "attribute name"),
        ({"k" * 65: 1}, "auto", "$.policies[0].filter." + "k" * 65, "attribute name"),
        ({"band": "x" * 257}, "auto", "$.policies[0].filter.band", "256 characters"),
        ({"band": 10**40}, "auto", "$.policies[0].filter.band", "2^53"),
        ({f"k{i}": 1 for i in range(33)}, "auto", "$.policies[0].filter", "32 filter keys"),
        ({"band": "@self"}, "claim", "$.policies[0].filter", "mode auto only"),
    ],
)
def test_policy_filters_follow_the_data_plane_rules(
    admin: httpx.Client, filter: dict[str, Any], mode: str, field: str, words: str
) -> None:
    body = {"id": "f", "policies": [policy(mode=mode, filter=filter)]}
    created = admin.post("/admin/projects", json=body)
    assert created.status_code == 400
    error = created.json()["error"]
    assert error["code"] == "request.invalid"
    assert error["details"]["field"] == field
    assert words in error["message"]
    assert admin.post("/admin/projects", json={"id": "f"}).status_code == 201
    patched = admin.patch("/admin/projects/f", json={"policies": body["policies"]})
    assert patched.json()["error"]["details"]["field"] == field
    assert admin.get("/admin/projects/f").json()["policies"] == []


def test_self_and_long_enough_values_are_accepted(admin: httpx.Client) -> None:
    filter = {"band": "@self", "region": "x" * 256, "ranked": True, "level": 3}
    body = {"id": "ok", "policies": [policy(filter=filter), policy(name="q", mode="claim")]}
    assert admin.post("/admin/projects", json=body).status_code == 201


@pytest.mark.parametrize(
    ("body", "limit"),
    [
        ({"policies": [policy(name=f"p{i}") for i in range(3)]}, "max_policies_per_project"),
        (
            {"keys": [{"type": "shared-secret", "secret": f"s{i}"} for i in range(2)]},
            "max_keys_per_project",
        ),
    ],
)
def test_per_project_limits_name_the_limit(
    admin: httpx.Client, body: dict[str, Any], limit: str
) -> None:
    response = admin.post("/admin/projects", json={"id": "big", **body})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "project.limit"
    assert error["details"]["limit"] == limit
    assert "--" + limit.replace("_", "-") in error["message"]


def test_the_body_limit_is_configurable(admin: httpx.Client) -> None:
    response = admin.post("/admin/projects", json={"id": "x", "displayName": "y" * 5000})
    assert response.status_code == 413
    assert "--max-body-bytes" in response.json()["error"]["message"]


def _raw_request(server: Bound, body_sent: bytes, declared: int) -> socket.socket:
    assert server.management is not None
    sock = socket.create_connection(server.management, timeout=10)
    head = (
        f"POST /admin/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    )
    sock.sendall(head.encode() + body_sent)
    return sock


def test_a_partial_body_times_out_with_408(server: Bound, admin: httpx.Client) -> None:
    body = b'{"id": "slow"}'
    with _raw_request(server, body[:5], len(body)) as sock:
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            chunk = sock.recv(65536)  # the server answers after body_timeout_s (0.5 s)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408")
    assert b'"request.timeout"' in answer
    assert admin.get("/admin/projects/slow").status_code == 404


def test_a_client_leaving_mid_body_is_logged_at_debug(
    server: Bound, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="matchmaker.control")
    body = b'{"id": "gone"}'
    _raw_request(server, body[:5], len(body)).close()
    wait_until(
        lambda: any("disconnected before sending" in r.getMessage() for r in caplog.records),
        what="the debug line",
    )
    # The control plane's own loggers and its server's (hypercorn) stay quiet.
    ours = ("matchmaker", "hypercorn")
    assert not [
        r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith(ours)
    ]


def test_defaults_are_the_documented_ones() -> None:
    defaults = dataclasses.asdict(ControlLimits())
    assert defaults == {
        "max_policies_per_project": 256,
        "max_keys_per_project": 64,
        "max_body_bytes": 1024 * 1024,
        "body_timeout_s": 10.0,
    }


def _one_response(sock: socket.socket) -> bytes:
    """One whole HTTP/1.1 response (headers, then Content-Length bytes) off a kept-alive socket."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536)
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_a_request_cut_off_by_the_shutdown_grace_gets_the_error_body(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="matchmaker.control")
    control = ControlLimits(body_timeout_s=60)
    config = ServerConfig(
        port=0,
        management_port=0,
        management_key=KEY,
        store_url="memory://",
        control=control,
        shutdown_grace_s=1.0,
    )
    running = ServerThread(config)
    bound = running.start()
    assert bound.management is not None
    stopping = threading.Thread(target=running.stop)
    auth = f"Host: x\r\nAuthorization: Bearer {KEY}\r\n"
    with socket.create_connection(bound.management, timeout=10) as sock:
        # One whole request first: the connection is accepted and served before the stop.
        sock.sendall(f"GET /admin/projects HTTP/1.1\r\n{auth}\r\n".encode())
        assert _one_response(sock).startswith(b"HTTP/1.1 200")
        head = f"POST /admin/projects HTTP/1.1\r\n{auth}Content-Type: {JSON['Content-Type']}\r\n"
        sock.sendall(f"{head}Content-Length: 100\r\n\r\n".encode() + b'{"id"')
        # The request waits for the rest of its body when the graceful stop begins.
        stopping.start()
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    stopping.join()
    head_bytes, _, body = answer.partition(b"\r\n\r\n")
    assert head_bytes.startswith(b"HTTP/1.1 503"), answer
    assert json.loads(body)["error"]["code"] == "server.shutting_down"
    assert "control POST /admin/projects -> 503" in caplog.messages
