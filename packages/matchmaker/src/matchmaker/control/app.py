"""The control-plane ASGI app served on the management port: ``/admin/projects``."""

from __future__ import annotations

import asyncio
import hmac
import urllib.parse
from collections.abc import Awaitable, Callable

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from matchmaker.config import ControlLimits, Limits
from matchmaker.control.audit import Audit
from matchmaker.control.auth import BearerAuth
from matchmaker.control.conditional import if_match
from matchmaker.control.dryrun import check_create, check_secrets_free, current, dry_run_requested
from matchmaker.control.http import AnswerWhenCutOff, CloseUnreadBodies, read_json_body
from matchmaker.control.live import LiveEndpoints, Observers
from matchmaker.control.openapi import openapi_document
from matchmaker.control.paging import decode_cursor, encode_cursor, page_limit
from matchmaker.control.validation import apply_patch, decode_patch, decode_project, invalid
from matchmaker.control.wire import Health, ProjectList
from matchmaker.directory import ProjectDirectory
from matchmaker.jsonhttp import EXCEPTION_HANDLERS, JSON, Readiness, json_response
from matchmaker.model import Project, ProjectId
from matchmaker.store import ProjectStore
from matchmaker.store.base import not_found_error

Endpoint = Callable[[Request], Awaitable[Response]]

MERGE_PATCH = "application/merge-patch+json"
_PROJECT_ID = msgspec.json.Decoder(ProjectId)


class ControlPlane:
    """The endpoints, over one store and the directory they keep in sync with it."""

    def __init__(
        self,
        limits: Limits,
        control: ControlLimits,
        management_key: str,
        store: ProjectStore,
        directory: ProjectDirectory,
    ) -> None:
        self._limits = limits
        self._control = control
        self._management_key = management_key.encode()
        self._store = store
        self._directory = directory
        # Serialises write-then-publish so the directory applies writes in commit order.
        self._writing = asyncio.Lock()

    async def create(self, request: Request) -> Response:
        """``POST /admin/projects[?dryRun=true]``: declare a Project; 201 with the normalised
        config (with ``dryRun=true``: every check, nothing stored)."""
        dry_run = dry_run_requested(request)
        body = await read_json_body(request, self._control)
        project = decode_project(body, self._limits, self._control)
        self._refuse_management_key(project)
        async with self._writing:
            if dry_run:
                await check_create(self._store, self._directory, project)
                headers = {}
            else:
                stored = await self._store.create(project)
                self._directory.put(project)
                headers = {"ETag": stored.etag}
        headers["Location"] = f"/admin/projects/{urllib.parse.quote(project.id, safe='')}"
        return json_response(project, 201, headers)

    async def list_projects(self, request: Request) -> Response:
        """``GET /admin/projects?limit=&cursor=``: one page of Projects ordered by id,
        with the ``ETag`` of each (``etags``, by id) for conditional writes."""
        limit = page_limit(request.query_params.get("limit"))
        cursor = request.query_params.get("cursor")
        after = None if cursor is None else decode_cursor(cursor)
        rows = await self._store.page(limit=limit + 1, after=after)
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = encode_cursor(rows[-1].project.id) if more else None
        return json_response(
            ProjectList(
                projects=[row.project for row in rows],
                next_cursor=next_cursor,
                etags={row.project.id: row.etag for row in rows},
            )
        )

    async def read(self, request: Request) -> Response:
        """``GET /admin/projects/{id}``: one Project; its ``ETag`` is what ``If-Match`` takes."""
        project_id = _path_id(request)
        stored = await self._store.read(project_id)
        if stored is None:
            raise not_found_error(project_id)
        return json_response(stored.project, headers={"ETag": stored.etag})

    async def patch(self, request: Request) -> Response:
        """``PATCH /admin/projects/{id}[?dryRun=true]``: merge-patch the updatable fields; 200
        with the result (with ``dryRun=true``: what would be stored, nothing is, no ``ETag``).

        With ``If-Match``, 412 ``project.conflict`` unless the Project is still at that ETag.
        """
        project_id = _path_id(request)
        revisions = if_match(request)
        dry_run = dry_run_requested(request)
        body = await read_json_body(request, self._control, (JSON, MERGE_PATCH))
        patch = decode_patch(body, project_id)

        def change(current: Project) -> Project:
            updated = apply_patch(current, patch, self._limits, self._control)
            self._refuse_management_key(updated)
            return updated

        async with self._writing:
            if dry_run:
                project = change(await current(self._store, project_id, revisions))
                check_secrets_free(self._directory, project)
                return json_response(project)
            stored = await self._store.update(project_id, change, if_match=revisions)
            self._directory.put(stored.project)
        return json_response(stored.project, headers={"ETag": stored.etag})

    async def delete(self, request: Request) -> Response:
        """``DELETE /admin/projects/{id}[?dryRun=true]``: forget the config (live sessions
        drain); 204 (with ``dryRun=true``: 204 if it exists, nothing deleted).

        With ``If-Match``, 412 ``project.conflict`` unless the Project is still at that ETag.
        """
        project_id = _path_id(request)
        revisions = if_match(request)
        dry_run = dry_run_requested(request)
        async with self._writing:
            if dry_run:
                await current(self._store, project_id, revisions)
                return Response(status_code=204)
            if not await self._store.delete(project_id, if_match=revisions):
                raise not_found_error(project_id)
            self._directory.remove(project_id)
        return Response(status_code=204)

    def _refuse_management_key(self, project: Project) -> None:
        """The management key must never become a client credential (clients would hold it)."""
        for i, key in enumerate(project.keys):
            if hmac.compare_digest(key.secret.encode(), self._management_key):
                raise invalid(f"$.keys[{i}].secret", "must not be the management key")

    async def openapi(self, request: Request) -> Response:
        """``GET /admin/openapi.json``: the OpenAPI 3.1 document of this API."""
        return json_response(openapi_document())

    async def healthz(self, request: Request) -> Response:
        """``GET /healthz`` (no key needed): the process is up (liveness).

        ``GET /readyz`` (no key needed) is readiness: 503 while the store cannot answer.
        """
        return json_response(Health())


def create_control_app(
    limits: Limits,
    control: ControlLimits,
    management_key: str,
    store: ProjectStore,
    directory: ProjectDirectory,
    *,
    observers: Observers | None = None,
) -> Starlette:
    """The app served on the management port, guarded by ``management_key``.

    ``limits`` bound what a policy may declare (``groupSize``, filters);
    ``control`` what a Project may hold and how request bodies are read.
    ``observers`` (from the process shell) serve ``/metrics`` and the live view;
    without them those paths are 404 and nothing is counted.
    """
    plane = ControlPlane(limits, control, management_key, store, directory)
    observers = observers or Observers()
    live = LiveEndpoints(observers, directory)
    routes = [
        Route("/healthz", _ByMethod(GET=plane.healthz)),
        Route("/readyz", _ByMethod(GET=Readiness(store.ping).respond)),
        Route("/admin/openapi.json", _ByMethod(GET=plane.openapi)),
        Route("/admin/projects", _ByMethod(GET=plane.list_projects, POST=plane.create)),
        *(
            []
            if observers.live is None
            else [
                Route("/admin/live", _ByMethod(GET=live.live)),
                # Before the Project route, whose {id:path} would take ".../live" as an id.
                # A Project whose id ends in "/live" is still patched and deleted here
                # (GET shows the live view of the id before "/live").
                Route(
                    "/admin/projects/{id:path}/live",
                    _ByMethod(
                        GET=live.project_live,
                        PATCH=_whole_id(plane.patch),
                        DELETE=_whole_id(plane.delete),
                    ),
                ),
            ]
        ),
        *([] if observers.metrics is None else [Route("/metrics", _ByMethod(GET=live.metrics))]),
        Route(
            "/admin/projects/{id:path}",
            _ByMethod(GET=plane.read, PATCH=plane.patch, DELETE=plane.delete),
        ),
    ]
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(Audit, on_request=observers.on_request),
            Middleware(AnswerWhenCutOff),  # inside Audit, which then logs the 503 it sent
            Middleware(CloseUnreadBodies),
            Middleware(BearerAuth, key=management_key),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
    )


class _ByMethod:
    """One ASGI endpoint per path dispatching on the method, so a 405 lists every allowed one.

    (A plain function endpoint would make Starlette answer other methods itself.)
    ``HEAD`` is answered wherever ``GET`` is.
    """

    def __init__(self, **endpoints: Endpoint) -> None:
        if "GET" in endpoints:
            endpoints["HEAD"] = endpoints["GET"]  # the server sends the headers only
        self._endpoints = endpoints
        self._allow = ", ".join(endpoints)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        endpoint = self._endpoints.get(request.method)
        if endpoint is None:
            raise HTTPException(405, headers={"Allow": self._allow})
        response = await endpoint(request)
        await response(scope, receive, send)


def _whole_id(endpoint: Endpoint) -> Endpoint:
    """``endpoint`` for a path the live route took: the id is everything after
    ``/admin/projects/``, ``/live`` included."""

    async def whole(request: Request) -> Response:
        request.path_params["id"] += "/live"
        return await endpoint(request)

    return whole


def _path_id(request: Request) -> str:
    """The id in the path; one that no Project can have is a 404 without a store round trip."""
    project_id: str = request.path_params["id"]
    try:
        _PROJECT_ID.decode(msgspec.json.encode(project_id))
    except (msgspec.ValidationError, UnicodeEncodeError):
        raise not_found_error(project_id) from None
    return project_id
