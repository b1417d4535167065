"""The OpenAPI document: complete, self-consistent and identical to docs/openapi-admin.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from matchmaker.control import openapi_document

DOC_FILE = Path(__file__).parents[3] / "docs" / "openapi-admin.json"


def refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(refs(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(refs(value) for value in node))
    return set()


def test_docs_file_is_the_served_document() -> None:
    written = json.loads(DOC_FILE.read_text())
    assert written == openapi_document(), (
        "docs/openapi-admin.json is stale: regenerate it with python tools/docs/openapi_admin.py"
    )


def test_every_reference_resolves_and_every_operation_is_there() -> None:
    document = openapi_document()
    schemas = document["components"]["schemas"]
    for ref in refs(document):
        assert ref.startswith("#/components/schemas/")
        assert ref.rsplit("/", 1)[1] in schemas
    operations = {(path, method) for path, item in document["paths"].items() for method in item} - {
        ("/admin/projects/{id}", "parameters")
    }
    assert {
        ("/admin/projects", "get"),
        ("/admin/projects", "post"),
        ("/admin/projects/{id}", "get"),
        ("/admin/projects/{id}", "patch"),
        ("/admin/projects/{id}", "delete"),
    } <= operations


def test_schema_states_the_validation_rules() -> None:
    schemas = openapi_document()["components"]["schemas"]
    project_id = schemas["Project"]["properties"]["id"]
    assert (project_id["minLength"], project_id["maxLength"]) == (1, 128)
    assert schemas["Project"]["additionalProperties"] is False
    policy = schemas["MatchmakingPolicy"]
    assert policy["properties"]["groupSize"]["minimum"] == 1
    assert set(policy["properties"]["mode"]["enum"]) == {
        "auto",
        "claim",
        "mutual",
        "propose",
        "delegated",
    }
    assert schemas["ProjectKey"]["properties"]["type"]["enum"] == ["jwt", "shared-secret"]


def test_served_document_equals_the_module_document(admin: httpx.Client) -> None:
    assert admin.get("/admin/openapi.json").json() == openapi_document()
