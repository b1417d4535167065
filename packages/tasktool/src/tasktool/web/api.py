"""The JSON API under ``/api``: the CLI's read commands, one write, and change events.

=========================  ===================================================
``GET /api/tasks``         ``list``: ``filter`` (repeatable), ``sort``,
                           ``archived``; with ``q``, ``search``; paged:
                           ``limit`` (100; ``all``), ``offset``
``POST /api/tasks``        a new task (JSON object), as ``add``; 403 when read-only
``GET /api/tasks/{id}``    ``get``: body, dependencies both ways, children,
                           worklog
``PUT /api/tasks/{id}``    partial edit (JSON object); 403 when read-only
``GET /api/next``          ``next``: ``limit`` (5), ``quick_wins``,
                           ``strict_phases``, ``filter``
``GET /api/board``         ``board``: ``group_by`` (status); paged in each
                           column: ``limit`` (100; ``all``), ``offset``
``GET /api/graph``         ``graph`` JSON: ``root``, ``upstream``,
                           ``downstream``, ``exclude_status``; paged by
                           task: ``limit`` (1000; ``all``), ``offset``
``GET /api/stats``         ``stats``
``GET /api/tracks``        ``tracks``: ``strict_phases``
``GET /api/validate``      ``validate`` report
``GET /api/config``        ``config show``
``GET /api/events``        server-sent events: ``ready`` once, ``change`` when
                           task files change on disk (debounced)
=========================  ===================================================
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from mtcommon import CodedError, render_json
from tasktool.model.errors import TaskToolError
from tasktool.model.limits import REQUEST_MAX
from tasktool.planning.ranking import DEFAULT_LIMIT
from tasktool.planning.repository import Repository
from tasktool.planning.writing.changes import change_from_json
from tasktool.planning.writing.new_tasks import new_task_from_json
from tasktool.planning.writing.writes import create_task, today, update_task
from tasktool.present.documents import (
    config_document,
    get_document,
    rank,
    repository_stats,
    task_detail,
    tracks_document,
    validation_report,
)
from tasktool.present.render import to_json
from tasktool.web.events import ChangeFeed
from tasktool.web.graph.graphapi import graph_window, paged_graph
from tasktool.web.paged.cards import board_cut
from tasktool.web.paged.listing import list_page
from tasktool.web.paged.paging import link_headers, query_window
from tasktool.web.pages import NextOptions
from tasktool.web.snapshot import Remember, Snapshot

__all__ = [
    "KEEPALIVE_S",
    "ROUTES",
    "T",
    "apply_create",
    "apply_edit",
    "board_endpoint",
    "board_field",
    "config_endpoint",
    "create_endpoint",
    "error_response",
    "events_endpoint",
    "get_endpoint",
    "graph_endpoint",
    "graph_options",
    "json_response",
    "list_endpoint",
    "next_endpoint",
    "next_options",
    "put_endpoint",
    "query_bool",
    "query_int",
    "query_list",
    "ranked",
    "read_json",
    "stats_endpoint",
    "tracks_endpoint",
    "validate_endpoint",
    "with_fresh_repo",
    "with_memo",
    "with_repo",
]

T = TypeVar("T")
KEEPALIVE_S = 15.0


def json_response(data: Any, status: int = 200) -> Response:
    return Response(
        to_json(data),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def error_response(error: CodedError, status: int) -> Response:
    response = json_response(render_json(error), status)
    if error.code == "web.too_large":
        # The rest of the request body is never read: close rather than leave it where
        # the client's next request would follow it.
        response.headers["Connection"] = "close"
    return response


def _bad_parameter(name: str, expected: str) -> TaskToolError:
    return TaskToolError(
        f"query parameter {name!r} must be {expected}", code="web.invalid_parameter"
    )


def query_bool(request: Request, name: str, default: bool) -> bool:
    """``true``/``false`` (also ``1``/``0``, ``yes``/``no``, ``on``); the last value wins."""
    values = request.query_params.getlist(name)
    if not values:
        return default
    text = values[-1].strip().lower()
    if text in {"true", "1", "yes", "on"}:
        return True
    if text in {"false", "0", "no", "off"}:
        return False
    raise _bad_parameter(name, "true or false")


def query_int(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    if not text.isdigit():
        raise _bad_parameter(name, "a whole number >= 0")
    return int(text)


def query_list(request: Request, name: str) -> tuple[str, ...]:
    """A repeatable parameter; ``exclude_status`` also takes comma-separated values."""
    values = request.query_params.getlist(name)
    if name == "exclude_status":
        return tuple(v.strip() for value in values for v in value.split(",") if v.strip())
    return tuple(value for value in values if value.strip())


async def with_repo(request: Request, query: Callable[[Repository], T]) -> T:
    """Run ``query`` on the tasks in a worker thread (both read files): loaded afresh, or
    the large repository kept while nothing changed (:class:`~tasktool.web.snapshot.Snapshot`)."""
    snapshot: Snapshot = request.app.state.snapshot
    return await run_in_threadpool(snapshot.read, query)


async def with_memo(request: Request, query: Callable[[Repository, Remember], T]) -> T:
    """:func:`with_repo` for a query that remembers what it derives from a kept repository
    (:meth:`~tasktool.web.snapshot.Snapshot.remembering`)."""
    snapshot: Snapshot = request.app.state.snapshot
    return await run_in_threadpool(
        snapshot.read, lambda repo: query(repo, snapshot.remembering(repo))
    )


async def with_fresh_repo(request: Request, change: Callable[[Repository], T]) -> T:
    """Run a write ``change`` on a fresh load in a worker thread (never a kept repository)."""
    snapshot: Snapshot = request.app.state.snapshot
    return await run_in_threadpool(snapshot.write, change)


async def list_endpoint(request: Request) -> Response:
    """A page of ``list`` (or ``search`` with ``q``):
    :data:`~tasktool.web.paged.paging.PAGE_DEFAULT` tasks unless ``limit`` says otherwise,
    the total in ``X-Total-Count``, the next page in ``Link``."""
    filters = query_list(request, "filter")
    sort = request.query_params.get("sort") or None
    window = query_window(request)
    archived = query_bool(request, "archived", False)
    text = request.query_params.get("q", "")
    listing = await with_memo(
        request,
        lambda repo, remember: list_page(
            repo, window, remember, text=text, filters=filters, sort=sort, archived=archived
        ),
    )
    return link_headers(json_response(listing.views), request, window, listing.total)


async def get_endpoint(request: Request) -> Response:
    task_id = request.path_params["task_id"]
    return json_response(await with_repo(request, lambda repo: get_document(repo, task_id)))


def _request_too_large() -> TaskToolError:
    return TaskToolError(
        f"the request body is larger than {REQUEST_MAX >> 20} MiB; nothing was written",
        code="web.too_large",
    )


async def read_json(request: Request) -> object:
    """The request's JSON, read a chunk at a time and refused (413) as soon as it passes
    :data:`~tasktool.model.limits.REQUEST_MAX`, so the server never holds more; JSON nested
    too deep for the parser is ``web.invalid_json`` like any other bad JSON."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > REQUEST_MAX:
        raise _request_too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > REQUEST_MAX:
            raise _request_too_large()
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
    except RecursionError:
        raise TaskToolError("the body is JSON nested too deep", code="web.invalid_json") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise TaskToolError(f"the body is not JSON: {exc}", code="web.invalid_json") from None


def apply_edit(repo: Repository, task_id: str, payload: object) -> dict[str, Any]:
    """Check a JSON edit against the task and write it through the CLI's write path (the
    task's lock, re-read under it, atomic replace, status bookkeeping)."""
    task = repo.local(task_id)  # worktree.sibling_only (409) for a sibling's task
    change = change_from_json(payload, task, repo.config, repo.ids, today())
    if not change.empty:
        task = update_task(repo, task_id, change)
    return task_detail(repo, task)


def _refuse_when_read_only(request: Request) -> None:
    if request.app.state.config.readonly:
        raise TaskToolError(
            "the dashboard is read-only (web.readonly / --readonly); nothing was written",
            code="web.read_only",
        )


def apply_create(repo: Repository, payload: object) -> dict[str, Any]:
    """Check a new task as JSON and write it as ``add`` does (``create_task``: the id
    strategy under the repository lock, the same checks and file name)."""
    request = new_task_from_json(payload, repo.config)
    task = create_task(
        repo, request.fields, body=request.body, group=request.group, task_id=request.task_id
    )
    return task_detail(repo, task)


async def create_endpoint(request: Request) -> Response:
    _refuse_when_read_only(request)
    payload = await read_json(request)
    created = await with_fresh_repo(request, lambda repo: apply_create(repo, payload))
    return json_response(created, 201)


async def put_endpoint(request: Request) -> Response:
    _refuse_when_read_only(request)
    payload = await read_json(request)
    task_id = request.path_params["task_id"]
    edited = await with_fresh_repo(request, lambda repo: apply_edit(repo, task_id, payload))
    return json_response(edited)


def next_options(request: Request) -> NextOptions:
    """``limit``, ``quick_wins``, ``strict_phases`` and ``filter`` of ``next``."""
    return NextOptions(
        limit=query_int(request, "limit", DEFAULT_LIMIT),
        quick_wins=query_bool(request, "quick_wins", False),
        strict_phases=query_bool(request, "strict_phases", True),
        filters=query_list(request, "filter"),
    )


def ranked(options: NextOptions) -> Callable[[Repository], list[dict[str, Any]]]:
    """The ``next`` document for these options, as a query over a repository."""
    return lambda repo: [
        item.to_json()
        for item in rank(
            repo,
            limit=options.limit,
            quick_wins=options.quick_wins,
            strict_phases=options.strict_phases,
            filters=options.filters,
        )
    ]


async def next_endpoint(request: Request) -> Response:
    return json_response(await with_repo(request, ranked(next_options(request))))


async def board_endpoint(request: Request) -> Response:
    group_by, window = board_field(request), query_window(request)
    board = await with_memo(
        request, lambda repo, remember: board_cut(repo, group_by, remember, {}, window)
    )
    return json_response(board)


def board_field(request: Request) -> str:
    from tasktool.planning.board import GROUP_FIELDS

    group_by = request.query_params.get("group_by") or "status"
    if group_by not in GROUP_FIELDS:
        raise _bad_parameter("group_by", "one of " + ", ".join(GROUP_FIELDS))
    return group_by


def graph_options(request: Request) -> dict[str, Any]:
    from tasktool.model.task import STATUS_ORDER

    excluded = query_list(request, "exclude_status")
    unknown = [status for status in excluded if status not in STATUS_ORDER]
    if unknown:
        raise _bad_parameter("exclude_status", "statuses among " + ", ".join(STATUS_ORDER))
    options = {
        "root": request.query_params.get("root") or None,
        "upstream": query_bool(request, "upstream", False),
        "downstream": query_bool(request, "downstream", False),
        "exclude_status": excluded,
    }
    if (options["upstream"] or options["downstream"]) and options["root"] is None:
        raise _bad_parameter("root", "given with upstream or downstream")
    return options


async def graph_endpoint(request: Request) -> Response:
    options, window = graph_options(request), graph_window(request)
    graph, total = await with_memo(
        request, lambda repo, remember: paged_graph(repo, options, window, remember)
    )
    return link_headers(json_response(graph), request, window, total)


async def stats_endpoint(request: Request) -> Response:
    return json_response(await with_repo(request, lambda repo: repository_stats(repo).to_json()))


async def tracks_endpoint(request: Request) -> Response:
    strict = query_bool(request, "strict_phases", True)
    return json_response(
        await with_repo(request, lambda repo: tracks_document(repo, strict_phases=strict))
    )


async def validate_endpoint(request: Request) -> Response:
    load = request.app.state.config.load
    report = await run_in_threadpool(lambda: validation_report(load))
    return json_response(report.to_json())


async def config_endpoint(request: Request) -> Response:
    return json_response(await with_repo(request, lambda repo: config_document(repo.loaded)))


async def events_endpoint(request: Request) -> Response:
    """``text/event-stream``: ``ready`` with the current version, then ``change`` each time
    task files change (one per debounce window), a comment every 15 s to keep it open."""
    feed: ChangeFeed = request.app.state.feed

    async def stream() -> AsyncIterator[str]:
        version = feed.version
        yield f"retry: 2000\nevent: ready\ndata: {version}\n\n"
        while True:
            try:
                async with asyncio.timeout(KEEPALIVE_S):
                    latest = await feed.wait(version)
            except TimeoutError:
                yield ": keep-alive\n\n"
                continue
            if latest is None:
                return
            version = latest
            yield f"event: change\ndata: {version}\n\n"

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


ROUTES = [
    Route("/api/tasks", list_endpoint, methods=["GET"]),
    Route("/api/tasks", create_endpoint, methods=["POST"]),
    Route("/api/tasks/{task_id:path}", get_endpoint, methods=["GET"]),
    Route("/api/tasks/{task_id:path}", put_endpoint, methods=["PUT"]),
    Route("/api/next", next_endpoint, methods=["GET"]),
    Route("/api/board", board_endpoint, methods=["GET"]),
    Route("/api/graph", graph_endpoint, methods=["GET"]),
    Route("/api/stats", stats_endpoint, methods=["GET"]),
    Route("/api/tracks", tracks_endpoint, methods=["GET"]),
    Route("/api/validate", validate_endpoint, methods=["GET"]),
    Route("/api/config", config_endpoint, methods=["GET"]),
    Route("/api/events", events_endpoint, methods=["GET"]),
]
