"""``/metrics`` and the live view on the management port, from functions the shell hands in.

The control plane never imports the data plane: the process shell passes
:class:`Observers`, read-only callables over the live state and the metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from matchmaker.control.paging import decode_cursor, encode_cursor, page_limit
from matchmaker.directory import ProjectDirectory
from matchmaker.jsonhttp import json_response
from matchmaker.observe.live import LiveProject, LiveSession, LiveSnapshot
from matchmaker.observe.metrics import CONTENT_TYPE
from matchmaker.store.base import not_found_error

__all__ = ["LiveEndpoints", "LivePage", "Observers", "ProjectLivePage"]


@dataclass(frozen=True, slots=True)
class Observers:
    """What the shell lends the control plane; each part is optional."""

    live: LiveSnapshot | None = None
    connected: Callable[[], int] | None = None
    metrics: Callable[[], bytes] | None = None
    on_request: Callable[[str, int], None] | None = None


class LivePage(msgspec.Struct, frozen=True):
    """One page of ``GET /admin/live``: ``clients`` connected and ``away`` (resumable) in
    all, Projects by id."""

    clients: int
    away: int
    projects: list[LiveProject]
    next_cursor: str | None


class ProjectLivePage(msgspec.Struct, frozen=True):
    """``GET /admin/projects/{id}/live``: the Project's pools and one page of its sessions."""

    project: LiveProject
    next_cursor: str | None


class LiveEndpoints:
    """The handlers; they only read."""

    def __init__(self, observers: Observers, directory: ProjectDirectory) -> None:
        self._observers = observers
        self._directory = directory

    def _snapshot(self) -> list[LiveProject]:
        assert self._observers.live is not None
        return self._observers.live()

    async def live(self, request: Request) -> Response:
        """``GET /admin/live?limit=&cursor=``: per Project with live state, ordered by id."""
        limit = page_limit(request.query_params.get("limit"))
        cursor = request.query_params.get("cursor")
        after = None if cursor is None else decode_cursor(cursor)
        projects = [p for p in self._snapshot() if after is None or p.id > after]
        page = projects[:limit]
        connected = self._observers.connected
        clients = sum(p.clients for p in projects) if connected is None else connected()
        away = sum(p.away for p in projects)
        more = len(projects) > limit
        next_cursor = encode_cursor(page[-1].id) if more else None
        return json_response(
            LivePage(clients=clients, away=away, projects=page, next_cursor=next_cursor)
        )

    async def project_live(self, request: Request) -> Response:
        """``GET /admin/projects/{id}/live?limit=&cursor=``: sessions paged by id.

        404 for an id that is neither declared nor live here.
        """
        project_id: str = request.path_params["id"]
        limit = page_limit(request.query_params.get("limit"))
        cursor = request.query_params.get("cursor")
        after = None if cursor is None else decode_cursor(cursor)
        found = next((p for p in self._snapshot() if p.id == project_id), None)
        if found is None:
            if self._directory.get(project_id) is None:
                raise not_found_error(project_id)
            found = LiveProject(id=project_id, clients=0, away=0, pools=[], sessions=[])
        sessions: list[LiveSession] = [s for s in found.sessions if after is None or s.id > after]
        page = sessions[:limit]
        next_cursor = encode_cursor(page[-1].id) if len(sessions) > limit else None
        project = LiveProject(found.id, found.clients, found.away, found.pools, page, found.quality)
        return json_response(ProjectLivePage(project=project, next_cursor=next_cursor))

    async def metrics(self, request: Request) -> Response:
        """``GET /metrics``: the Prometheus text format."""
        assert self._observers.metrics is not None
        return metrics_response(self._observers.metrics)


def metrics_response(exposition: Callable[[], bytes]) -> Response:
    return Response(exposition(), media_type=CONTENT_TYPE)
