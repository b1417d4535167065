"""The Host, Origin and content-type rules and the bind banner, as plain functions."""

from __future__ import annotations

import pytest

from tasktool.config import load_config
from tasktool.model.errors import http_status
from tasktool.web.security import RequestGuard, allowed_hosts, is_loopback
from tasktool.web.server import exposure_banner
from tests.tasktool.conftest import Project


async def _app(scope: object, receive: object, send: object) -> None:
    raise AssertionError("not reached")


GUARD = RequestGuard(_app, hosts=allowed_hosts("127.0.0.1", 8080))


@pytest.mark.parametrize(
    ("method", "headers", "expected"),
    [
        ("GET", {"host": "127.0.0.1:8080"}, None),
        ("GET", {"host": "localhost:8080"}, None),
        ("GET", {"host": "[::1]:8080"}, None),
        ("GET", {"host": "attacker.example:8080"}, "web.host_forbidden"),
        ("GET", {"host": "127.0.0.1:9999"}, "web.host_forbidden"),
        ("GET", {}, "web.host_forbidden"),
        ("PUT", {"host": "127.0.0.1:8080", "content-type": "application/json"}, None),
        ("PUT", {"host": "127.0.0.1:8080", "content-type": "application/json; charset=utf-8",
                 "origin": "http://127.0.0.1:8080"}, None),
        ("PUT", {"host": "127.0.0.1:8080", "content-type": "application/json",
                 "origin": "http://localhost:8080"}, "web.origin_forbidden"),
        ("POST", {"host": "127.0.0.1:8080", "content-type": "application/json",
                  "sec-fetch-site": "cross-site"}, "web.origin_forbidden"),
        ("PUT", {"host": "127.0.0.1:8080", "content-type": "text/plain"},
         "web.unsupported_media_type"),
        ("DELETE", {"host": "127.0.0.1:8080"}, "web.unsupported_media_type"),
    ],
)  # fmt: skip
def test_guard_rules(method: str, headers: dict[str, str], expected: str | None) -> None:
    refusal = GUARD.check(method, headers, "http")
    assert (refusal[1].code if refusal else None) == expected


def test_allowed_hosts() -> None:
    assert allowed_hosts("0.0.0.0", 8080) is None
    assert allowed_hosts("::", 8080) is None
    assert allowed_hosts("192.168.1.5", 8080) == frozenset({"192.168.1.5:8080"})
    assert "localhost" in (allowed_hosts("127.0.0.1", 80) or ())
    assert "[fe80::1]:81" in (allowed_hosts("fe80::1", 81) or ())
    assert allowed_hosts("::1", 8080) == frozenset(
        {"127.0.0.1:8080", "localhost:8080", "[::1]:8080"}
    )


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.0.1", True), ("::1", True), ("localhost", True),
     ("0.0.0.0", False), ("192.168.1.5", False), ("example.com", False)],
)  # fmt: skip
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_banner_names_what_is_exposed() -> None:
    assert exposure_banner("127.0.0.1", readonly=False) is None
    editing = exposure_banner("0.0.0.0", readonly=False) or ""
    assert "every task, and editing them" in editing
    assert "--readonly" in editing
    viewing = exposure_banner("192.168.1.5", readonly=True) or ""
    assert "read-only" in viewing
    assert "--readonly" not in viewing


def test_web_host_from_the_environment(project: Project) -> None:
    """The container image's TASKTOOL_WEB_HOST=0.0.0.0 works without a config file."""
    loaded = load_config(
        cwd=project.root, env={**project.env, "TASKTOOL_WEB_HOST": "0.0.0.0"}, home=project.home
    )
    assert loaded.config.web_host == "0.0.0.0"
    assert loaded.sources["web.host"] == "env"


@pytest.mark.parametrize(
    ("code", "status"),
    [("task.not_found", 404), ("task.conflict", 409), ("web.read_only", 403),
     ("task.invalid_fields", 400), ("filter.field", 400), ("config.next.unphased", 500),
     ("web.unsupported_media_type", 415), ("web.host_forbidden", 403)],
)  # fmt: skip
def test_http_status(code: str, status: int) -> None:
    assert http_status(code) == status
