"""The OpenAPI 3.1 document of ``/admin``, built from the wire Structs.

Schemas come from msgspec, so the document cannot drift from what the server
decodes; ``docs/openapi-admin.json`` is this document written out (a test
checks they are equal). Regenerate it with ``python tools/docs/openapi_admin.py``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec

from matchmaker import __version__
from matchmaker.control.live import LivePage, ProjectLivePage
from matchmaker.control.wire import ErrorResponse, Health, ProjectList, ProjectPatch
from matchmaker.model import Project

_REF = "#/components/schemas/{name}"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _REF.format(name=name)}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": _json(_ref("ErrorResponse"))}


_ERRORS = {
    "401": _error("Missing or invalid management key (`auth.unauthorized`)"),
    "503": _error("The Project store is unavailable (`store.unavailable`)"),
}
_BODY_ERRORS = {
    "400": _error(
        "Malformed JSON (`request.malformed_json`), a key repeated in one object "
        "(`request.duplicate_key`, `details.field` names it), an invalid body "
        "(`request.invalid`, `details.field` names the field), the reserved id "
        "(`project.reserved_id`) or a per-Project limit (`project.limit`, `details.limit` "
        "names it)"
    ),
    "408": _error("The body did not arrive within the server's body timeout (`request.timeout`)"),
    "413": _error(
        "The body is larger than the server's body limit, 1 MiB by default (`request.too_large`)"
    ),
    "415": _error("The content type is not JSON (`request.unsupported_media_type`)"),
}


def _parameter(
    name: str, where: str, schema: dict[str, Any], description: str = "", required: bool = False
) -> dict[str, Any]:
    parameter: dict[str, Any] = {"name": name, "in": where}
    if required:
        parameter["required"] = True
    if description:
        parameter["description"] = description
    parameter["schema"] = schema
    return parameter


_PAGE = [
    _parameter(
        "limit", "query", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}
    ),
    _parameter("cursor", "query", {"type": "string"}, "`next_cursor` of the previous page."),
]
_DRY_RUN = _parameter(
    "dryRun",
    "query",
    {"type": "boolean", "default": False},
    "`true`: run every check the write runs, the store's conflicts "
    "included, answer what the write would answer, and change nothing.",
)
_NOT_FOUND = {"404": _error("No Project with that id (`project.not_found`)")}
_CONFLICT = _error(
    "The id exists (`project.exists`) or a secret is bound to another Project "
    "(`project.secret_in_use`)"
)
_ETAG = {
    "ETag": {
        "description": "The Project's revision: send it back as `If-Match` to write only if "
        "it has not changed since.",
        "schema": {"type": "string"},
    }
}
_IF_MATCH = _parameter(
    "If-Match",
    "header",
    {"type": "string"},
    "ETags (from a read) the Project must still have, or `*`; without it the "
    "write is unconditional.",
)
_PRECONDITION = {
    "412": _error("The Project changed since the If-Match ETag was read (`project.conflict`)")
}
_ID = _parameter(
    "id",
    "path",
    {"type": "string", "minLength": 1, "maxLength": 128},
    "The Project id (percent-encode reserved characters).",
    required=True,
)


@cache
def openapi_document() -> dict[str, Any]:
    """The document served at ``/admin/openapi.json``."""
    _, schemas = msgspec.json.schema_components(
        [Project, ProjectPatch, ProjectList, LivePage, ProjectLivePage, ErrorResponse, Health],
        ref_template=_REF,
    )
    project = {
        "description": "The stored Project",
        "headers": _ETAG,
        "content": _json(_ref("Project")),
    }
    document = {
        "openapi": "3.1.0",
        "info": {
            "title": "matchmaker control plane",
            "version": __version__,
            "description": "Declare Projects (policies, credential bindings, lockdown). "
            "Served on the management port only when a management key is configured.",
        },
        "security": [{"managementKey": []}],
        "paths": {
            "/admin/projects": {
                "get": {
                    "operationId": "listProjects",
                    "summary": "List Projects ordered by id, one page at a time",
                    "parameters": _PAGE,
                    "responses": {
                        "200": {"description": "One page", "content": _json(_ref("ProjectList"))},
                        "400": _error("Invalid `limit` or `cursor` (`request.invalid`)"),
                        **_ERRORS,
                    },
                },
                "post": {
                    "operationId": "createProject",
                    "summary": "Declare a Project",
                    "parameters": [_DRY_RUN],
                    "requestBody": {"required": True, "content": _json(_ref("Project"))},
                    "responses": {
                        "201": {**project, "description": "Created, with defaults filled in"},
                        **_BODY_ERRORS,
                        "409": _CONFLICT,
                        **_ERRORS,
                    },
                },
            },
            "/admin/projects/{id}": {
                "parameters": [_ID],
                "get": {
                    "operationId": "getProject",
                    "summary": "Read one Project",
                    "responses": {"200": project, **_NOT_FOUND, **_ERRORS},
                },
                "patch": {
                    "operationId": "patchProject",
                    "parameters": [_IF_MATCH, _DRY_RUN],
                    "summary": "Merge-patch the updatable fields (arrays replaced whole)",
                    "requestBody": {
                        "required": True,
                        "content": {
                            **_json(_ref("ProjectPatch")),
                            "application/merge-patch+json": {"schema": _ref("ProjectPatch")},
                        },
                    },
                    "responses": {
                        "200": project,
                        **_BODY_ERRORS,
                        **_NOT_FOUND,
                        "409": _CONFLICT,
                        **_PRECONDITION,
                        **_ERRORS,
                    },
                },
                "delete": {
                    "operationId": "deleteProject",
                    "summary": "Forget a Project's config (its live sessions drain)",
                    "parameters": [_IF_MATCH, _DRY_RUN],
                    "responses": {
                        "204": {"description": "Deleted"},
                        **_NOT_FOUND,
                        **_PRECONDITION,
                        **_ERRORS,
                    },
                },
            },
            "/admin/live": {
                "get": {
                    "operationId": "getLive",
                    "summary": "What is live in this process: clients, and per Project (by id, "
                    "paged) its pools with mode and waiting entries, and its sessions",
                    "description": "Counts, modes, ids and ages only: never a credential, an "
                    "attribute or a public profile.",
                    "parameters": _PAGE,
                    "responses": {
                        "200": {"description": "One page", "content": _json(_ref("LivePage"))},
                        "400": _error("Invalid `limit` or `cursor` (`request.invalid`)"),
                        "401": _ERRORS["401"],
                    },
                }
            },
            "/admin/projects/{id}/live": {
                "parameters": [_ID],
                "get": {
                    "operationId": "getProjectLive",
                    "summary": "One Project's live pools and one page of its sessions (by id)",
                    "parameters": _PAGE,
                    "responses": {
                        "200": {
                            "description": "The Project's live state",
                            "content": _json(_ref("ProjectLivePage")),
                        },
                        "400": _error("Invalid `limit` or `cursor` (`request.invalid`)"),
                        "404": _error(
                            "No such Project declared and nothing of it live (`project.not_found`)"
                        ),
                        "401": _ERRORS["401"],
                    },
                },
            },
            "/metrics": {
                "get": {
                    "operationId": "getMetrics",
                    "summary": "Prometheus metrics (text exposition format)",
                    "responses": {
                        "200": {
                            "description": "Every metric of this process",
                            "content": {"text/plain": {"schema": {"type": "string"}}},
                        },
                        "401": _ERRORS["401"],
                    },
                }
            },
            "/admin/openapi.json": {
                "get": {
                    "operationId": "getOpenApi",
                    "summary": "This document",
                    "responses": {
                        "200": {
                            "description": "OpenAPI 3.1",
                            "content": _json({"type": "object"}),
                        },
                        **_ERRORS,
                    },
                }
            },
            "/healthz": {
                "get": {
                    "operationId": "health",
                    "summary": "Liveness (no key needed)",
                    "security": [],
                    "responses": {"200": {"description": "Up", "content": _json(_ref("Health"))}},
                }
            },
            "/readyz": {
                "get": {
                    "operationId": "ready",
                    "summary": "Readiness (no key needed): 503 while the Project store is down",
                    "security": [],
                    "responses": {
                        "200": {
                            "description": "Ready: the store answers",
                            "content": _json(
                                {
                                    "type": "object",
                                    "properties": {"status": {"const": "ready"}},
                                    "required": ["status"],
                                }
                            ),
                        },
                        "503": _error(
                            "The Project store cannot answer (`store.unavailable`); "
                            "no internals are exposed"
                        ),
                    },
                }
            },
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "managementKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The server's management key.",
                }
            },
        },
    }
    # Round-trip through JSON so the value is exactly what clients receive (lists, not tuples).
    parsed: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(document))
    return parsed
