"""``web export``: the dashboard as static files, for any static host or ``file://``.

::

    DIR/index.html               the task table (filter, search and sort work offline)
    DIR/tasks/<id>.html          one page per task
    DIR/board-<field>.html       the board by each field
    DIR/graph.html, next.html, validate.html
    DIR/api/*.json               the API's documents (tasks, tasks/<id>, next, board-<field>,
                                 graph, stats, tracks, validate, config)
    DIR/static/app.css, app.js

``next`` is ranked with the CLI's defaults and phase rules. Only files the
export writes are replaced: nothing in DIR is deleted, and nothing outside it
is touched (a task id that cannot name a file gets a hashed file name).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tasktool.files.storage import atomic_write_text
from tasktool.model.errors import TaskToolError, task_not_found
from tasktool.planning.board import GROUP_FIELDS
from tasktool.planning.ranking import DEFAULT_LIMIT
from tasktool.planning.repository import Loader, Repository
from tasktool.present.documents import (
    board_document,
    config_document,
    graph_document,
    rank,
    related_tasks,
    repository_stats,
    task_detail,
    tasks_document,
    tracks_document,
    validation_report,
    vocabulary,
)
from tasktool.present.render import to_json
from tasktool.web import pages
from tasktool.web.layout import Links, export_name

__all__ = ["STATIC_DIR", "export_site"]

STATIC_DIR = Path(__file__).parent / "static"


def _writer(root: Path) -> Callable[[str, str], None]:
    resolved = root.resolve()

    def write(relative: str, text: str) -> None:
        path = (resolved / relative).resolve()
        if not path.is_relative_to(resolved):  # defence in depth: names are built, not taken
            raise TaskToolError(f"refusing to write {path} outside {resolved}", code="web.export")
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)

    return write


def _unlinked(repo: Repository) -> dict[str, dict[str, str]]:
    """Ids the pages link to that have no task page (an unreadable task file, a dangling
    dependency or parent), each with the error its page shows, as the server's would."""
    exported = {task.id for task in repo.all_tasks}
    errors: dict[str, dict[str, str]] = {}
    for problem in repo.broken:
        if problem.task_id and problem.task_id not in exported:
            errors[problem.task_id] = {"code": "task.broken", "message": problem.message}
    for task in repo.all_tasks:
        for task_id in (*task.dependencies, *((task.parent,) if task.parent else ())):
            if task_id not in exported and task_id not in errors:
                missing = task_not_found(task_id)
                errors[task_id] = {"code": missing.code, "message": missing.message}
    return errors


def export_site(load: Loader, output: Path) -> int:
    """Write the static site into ``output`` (created if missing); returns the file count.

    Refuses (``config.next.*``) when the config's ``next`` section is malformed, as ``next``
    does, before writing anything.
    """
    repo = load()
    repo.loaded.require_next_config()
    if output.exists() and not output.is_dir():
        raise TaskToolError(f"{output} exists and is not a directory", code="web.export")
    output.mkdir(parents=True, exist_ok=True)
    write = _writer(output)
    written = 0

    def emit(relative: str, text: str) -> None:
        nonlocal written
        write(relative, text)
        written += 1

    def emit_json(name: str, data: Any) -> None:
        emit(f"api/{name}.json", to_json(data) + "\n")

    links = Links(static=True)
    vocab = vocabulary(repo.config)
    tasks = tasks_document(repo)
    emit_json("tasks", tasks)
    emit(links.page("tasks"), pages.tasks_page(tasks, vocab, links))
    for task in repo.all_tasks:  # archived ones too: dependencies link to them
        detail = task_detail(repo, task)
        name = export_name(task.id).removesuffix(".html")
        emit_json(f"tasks/{name}", detail)
        page = pages.task_page(detail, related_tasks(repo, detail), vocab, links.at_depth(1))
        emit(f"tasks/{name}.html", page)
    for task_id, error in _unlinked(repo).items():
        emit(f"tasks/{export_name(task_id)}", pages.error_page(error, links.at_depth(1)))
    ranked = [item.to_json() for item in rank(repo, limit=DEFAULT_LIMIT)]
    emit_json("next", ranked)
    emit(links.page("next"), pages.next_page(ranked, pages.NextOptions(), links))
    for field in GROUP_FIELDS:
        board = board_document(repo, field)
        emit_json(f"board-{field}", board)
        emit(links.page("board", group_by=field), pages.board_page(board, links))
    emit(links.page("board"), pages.board_page(board_document(repo, "status"), links))
    graph = graph_document(repo)
    emit_json("graph", graph)
    emit(links.page("graph"), pages.graph_page(graph, links))
    report = validation_report(load).to_json()
    emit_json("validate", report)
    emit(links.page("validate"), pages.validate_page(report, links))
    emit_json("stats", repository_stats(repo).to_json())
    emit_json("tracks", tracks_document(repo))
    emit_json("config", config_document(repo.loaded))
    for asset in sorted(STATIC_DIR.iterdir()):
        if asset.is_file():
            emit(f"static/{asset.name}", asset.read_text(encoding="utf-8"))
    return written
