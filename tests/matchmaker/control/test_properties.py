"""Generated requests against a real server: never a 5xx, never an invalid stored Project."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from matchmaker.config import ControlLimits, Limits, ServerConfig
from matchmaker.control.validation import check_project
from matchmaker.model import RESERVED_PROJECT_ID, Project

from .conftest import KEY, ServerThread

LIMITS = Limits()

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["@self", "default", "shared-secret", "auto", "claim", ""]),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ids = st.one_of(
    st.sampled_from(["a", "b", "default", "x" * 128, "x" * 129, "", "a/b", "é"]),
    st.text(max_size=12),
)
keys = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["shared-secret", "jwt"]),
            "secret": st.sampled_from(["s1", "s2", ""]),
        }
    )
    | json_values,
    max_size=3,
)
policies = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.sampled_from(["p", "q", ""]) | json_values,
            "mode": st.sampled_from(["auto", "claim", "mutual", "propose", "delegated", "x"]),
            "groupSize": st.integers(-1, 70) | json_values,
        },
        optional={
            "default": st.booleans() | json_values,
            "filter": st.dictionaries(st.text(max_size=4), scalars, max_size=3) | json_values,
        },
    )
    | json_values,
    max_size=3,
)
project_like = st.fixed_dictionaries(
    {},
    optional={
        "id": ids | json_values,
        "displayName": st.text(max_size=10) | json_values,
        "lockdown": st.booleans() | json_values,
        "keys": keys | json_values,
        "policies": policies | json_values,
        "extra": json_values,
    },
)
# Mostly-valid Projects, so that the success paths (and what they store) are explored too.
plain_text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=12)
valid_projects = st.fixed_dictionaries(
    {"id": plain_text},
    optional={
        "displayName": st.none() | plain_text,
        "lockdown": st.booleans(),
        "keys": st.lists(
            st.fixed_dictionaries({"type": st.just("shared-secret"), "secret": plain_text}),
            max_size=2,
        ),
        "policies": st.lists(
            st.fixed_dictionaries(
                {
                    "name": plain_text,
                    "mode": st.sampled_from(["auto", "claim", "mutual", "propose", "delegated"]),
                    "groupSize": st.integers(1, 64),
                },
                optional={
                    "default": st.booleans(),
                    "filter": st.dictionaries(plain_text, scalars.filter(lambda v: v is not None)),
                },
            ),
            max_size=2,
        ),
    },
)
bodies = st.one_of(
    valid_projects.map(lambda v: json.dumps(v).encode()),
    project_like.map(lambda v: json.dumps(v).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=64),
)
paths = st.one_of(
    st.just("/admin/projects"),
    ids.map(lambda i: "/admin/projects/" + urllib.parse.quote(i, safe="")),
    st.sampled_from(["/admin", "/admin/projects/a/b", "/healthz", "/admin/openapi.json", "/x"]),
)
methods = st.sampled_from(["GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS"])
content_types = st.sampled_from(
    ["application/json", "application/merge-patch+json", "text/plain", None]
)
queries = st.dictionaries(
    st.sampled_from(["limit", "cursor", "other"]), st.text(max_size=6), max_size=2
)


json_bodies = st.one_of(valid_projects, project_like).map(lambda v: json.dumps(v).encode())
requests = st.one_of(
    st.fixed_dictionaries(
        {
            "method": methods,
            "path": paths,
            "body": bodies,
            "content_type": content_types,
            "query": queries,
        }
    ),
    # Weighted towards writes that may succeed, so that what gets stored is explored.
    st.fixed_dictionaries(
        {
            "method": st.sampled_from(["POST", "PATCH"]),
            "path": st.just("/admin/projects") | st.sampled_from(["/admin/projects/a"]),
            "body": json_bodies,
            "content_type": st.just("application/json"),
            "query": st.just({}),
        }
    ),
)


@pytest.fixture(scope="module")
def admin_client() -> Iterator[httpx.Client]:
    config = ServerConfig(port=0, management_port=0, management_key=KEY, store_url="memory://")
    server = ServerThread(config)
    bound = server.start()
    assert bound.management is not None
    host, port = bound.management
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=f"http://{host}:{port}", headers=headers, timeout=10) as client:
        yield client
    server.stop()


def assert_valid(project: Project) -> None:
    assert project.id != RESERVED_PROJECT_ID
    check_project(project, LIMITS, ControlLimits())


def stored_projects(client: httpx.Client) -> list[Project]:
    response = client.get("/admin/projects", params={"limit": 1000})
    assert response.status_code == 200
    # Decoding with the Project type re-applies every per-field constraint.
    return msgspec.json.decode(json.dumps(response.json()["projects"]).encode(), type=list[Project])


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(request=requests)
def test_generated_requests_never_5xx_nor_store_invalid_projects(
    admin_client: httpx.Client, request: dict[str, Any]
) -> None:
    method = request["method"]
    headers = {} if request["content_type"] is None else {"Content-Type": request["content_type"]}
    response = admin_client.request(
        method, request["path"], content=request["body"], headers=headers, params=request["query"]
    )
    assert response.status_code < 500, response.text
    if response.status_code >= 400 and method != "HEAD":
        assert response.json()["error"]["code"]
    if method in ("POST", "PATCH") and response.status_code in (200, 201):
        assert_valid(msgspec.json.decode(response.content, type=Project))
    projects = stored_projects(admin_client)
    secrets = [key.secret for project in projects for key in project.keys]
    assert len(secrets) == len(set(secrets))
    for project in projects:
        assert_valid(project)
