"""Generated request sequences against a real server, judged by a reference model.

Each example starts from an empty store and sends a few requests; for each, the model
written from the docs (``reference.py``) predicts the status and what is stored after,
and every stored Project is checked against the documented rules. The implementation's
own validation is never the judge.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from matchmaker.config import ServerConfig

from .conftest import KEY, ServerThread
from .reference import RESERVED_ID, ReferenceStore, Unspecified, project_violations

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
    {"id": st.sampled_from(["a", "b"]) | plain_text},
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
# JSON values are sent encoded (the model reads the value); bytes are sent as they are.
bodies = st.one_of(valid_projects, project_like, json_values, st.binary(max_size=64))
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


# Bodies of a PATCH that may succeed: a valid Project's updatable fields.
valid_patches = valid_projects.map(lambda v: {k: v for k, v in v.items() if k != "id"})
# Weighted towards writes that may succeed, so that what gets stored is explored.
writes = st.one_of(
    st.tuples(
        st.just("POST"),
        st.just("/admin/projects"),
        valid_projects | valid_projects.map(lambda v: {**v, "id": "a"}) | project_like,
    ),
    st.tuples(
        st.sampled_from(["PATCH", "PATCH", "DELETE"]),
        st.just("/admin/projects/a"),
        valid_patches | project_like,
    ),
).map(
    lambda w: {
        "method": w[0],
        "path": w[1],
        "body": w[2],
        "content_type": "application/json",
        "query": {},
    }
)
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
    writes,
    writes,
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


def stored(client: httpx.Client) -> list[dict[str, Any]]:
    response = client.get("/admin/projects", params={"limit": 1000})
    assert response.status_code == 200
    projects: list[dict[str, Any]] = response.json()["projects"]
    return projects


def assert_all_valid(projects: list[dict[str, Any]]) -> None:
    for project in projects:
        assert not project_violations(project, KEY), (project, project_violations(project, KEY))
        assert project["id"] != RESERVED_ID
    secrets = [key["secret"] for project in projects for key in project["keys"]]
    assert len(secrets) == len(set(secrets)), "a secret is bound to two Projects"
    ids = [project["id"] for project in projects]
    assert ids == sorted(ids), "not in code point order"


def send(client: httpx.Client, request: dict[str, Any]) -> httpx.Response:
    body = request["body"]
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {} if request["content_type"] is None else {"Content-Type": request["content_type"]}
    return client.request(
        request["method"],
        request["path"],
        content=content,
        headers=headers,
        params=request["query"],
    )


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sequence=st.lists(requests, min_size=2, max_size=6))
def test_generated_requests_do_what_the_docs_say(
    admin_client: httpx.Client, sequence: list[dict[str, Any]]
) -> None:
    for project in stored(admin_client):  # every example starts from an empty store
        path = "/admin/projects/" + urllib.parse.quote(project["id"], safe="")
        assert admin_client.delete(path).status_code == 204
    model = ReferenceStore(KEY)
    for request in sequence:
        method, path = request["method"], request["path"]
        response = send(admin_client, request)
        assert response.status_code < 500, response.text
        if response.status_code >= 400 and method != "HEAD":
            assert response.json()["error"]["code"]
        try:
            prediction = model.predict(
                method,
                urllib.parse.unquote(path),
                request["body"],
                request["content_type"],
                request["query"],
            )
        except Unspecified:
            event("outcome left open by the docs")
            # The docs leave this one open: follow the server, as long as the rules hold.
            model.projects = {p["id"]: p for p in stored(admin_client)}
        else:
            assert response.status_code in prediction.statuses, (request, response.text)
            event(f"predicted {method} {response.status_code}")
            if prediction.after is not None:
                assert response.json() == prediction.after
            if response.status_code < 300:
                model.apply(urllib.parse.unquote(path), prediction, method)
        projects = stored(admin_client)
        assert_all_valid(projects)
        assert projects == model.listed()
