"""The dashboard's pages: each loads the tasks, builds the API's documents and renders them."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from mtcommon import CodedError
from tasktool.planning.repository import Repository
from tasktool.present.documents import (
    related_tasks,
    task_detail,
    validation_report,
    vocabulary,
)
from tasktool.web import pages
from tasktool.web.api import (
    board_field,
    graph_options,
    next_options,
    ranked,
    with_memo,
    with_repo,
)
from tasktool.web.graph.graphfocus import focus, graph_part
from tasktool.web.layout import Links
from tasktool.web.paged.cards import board_cut, board_shown
from tasktool.web.paged.table import table_query, table_rows
from tasktool.web.snapshot import Remember

__all__ = [
    "ROUTES",
    "board_page",
    "error_response",
    "graph_page",
    "html",
    "next_page",
    "task_page",
    "tasks_page",
    "validate_page",
]


def _links(request: Request) -> Links:
    return Links(readonly=request.app.state.config.readonly)


def html(page: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(page, status_code=status, headers={"Cache-Control": "no-store"})


def error_response(request: Request, error: CodedError, status: int) -> Response:
    return html(pages.error_page(error.to_payload(), _links(request)), status)


async def tasks_page(request: Request) -> Response:
    links, query = _links(request), table_query(request)

    def render(repo: Repository, remember: Remember) -> str:
        known = vocabulary(repo.config)
        rows, table = table_rows(repo, query, known, remember)
        return pages.tasks_page(rows, known, links, table)

    return html(await with_memo(request, render))


async def task_page(request: Request) -> Response:
    links = _links(request)
    task_id = request.path_params["task_id"]

    def render(repo: Repository) -> str:
        detail = task_detail(repo, repo.get(task_id))
        related = related_tasks(repo, detail)
        return pages.task_page(detail, related, vocabulary(repo.config), links)

    return html(await with_repo(request, render))


async def board_page(request: Request) -> Response:
    links, group_by, shown = _links(request), board_field(request), board_shown(request)
    board = await with_memo(
        request, lambda repo, remember: board_cut(repo, group_by, remember, shown)
    )
    return html(pages.board_page(board, links, shown))


async def graph_page(request: Request) -> Response:
    links, options, wanted = _links(request), graph_options(request), focus(request)
    graph, part = await with_memo(
        request, lambda repo, remember: graph_part(repo, options, wanted, remember)
    )
    return html(pages.graph_page(graph, links, part))


async def next_page(request: Request) -> Response:
    options = next_options(request)
    items = await with_repo(request, ranked(options))
    return html(pages.next_page(items, options, _links(request)))


async def validate_page(request: Request) -> Response:
    links = _links(request)
    load = request.app.state.config.load
    report = await run_in_threadpool(lambda: validation_report(load))
    return html(pages.validate_page(report.to_json(), links))


ROUTES = [
    Route("/", tasks_page, methods=["GET"]),
    Route("/tasks/{task_id:path}", task_page, methods=["GET"]),
    Route("/board", board_page, methods=["GET"]),
    Route("/graph", graph_page, methods=["GET"]),
    Route("/next", next_page, methods=["GET"]),
    Route("/validate", validate_page, methods=["GET"]),
]
