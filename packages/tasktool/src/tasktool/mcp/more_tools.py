"""The MCP tools beside the core ones (:mod:`tasktool.mcp.server`): ``search``,
``worklog``, ``archive``, ``complete``, ``board`` and ``stats``, each as the CLI command
of the same name (``complete`` is ``set --done``), with its codes and limits."""

from __future__ import annotations

import datetime as dt
from typing import Any

from tasktool.mcp.arguments import (
    ArchiveArguments,
    BoardArguments,
    GetArguments,
    NoArguments,
    SearchArguments,
    WorklogArguments,
)
from tasktool.mcp.tooling import READ, WRITE, Register, tool_errors
from tasktool.model.views import task_view
from tasktool.planning.repository import Loader
from tasktool.planning.writing.changes import TaskChange
from tasktool.planning.writing.writes import archive_task, update_task
from tasktool.present.documents import board_document, repository_stats, search_document

__all__ = ["register_more"]


def register_more(tool: Register, load: Loader) -> None:
    """Register the tools with ``tool`` (the server's registrar)."""

    @tool("search", READ)
    def search_tool(args: SearchArguments) -> dict[str, Any]:
        """Find tasks whose title or body hold every word of text, any case, best first (as
        `tasktool search --format json`): {"count", "tasks": [...]}, each with its score."""
        with tool_errors():
            found = search_document(
                load(),
                args.text,
                filters=args.filter or (),
                limit=args.limit,
                archived=args.archived,
            )
        return {"count": len(found), "tasks": found}

    @tool("worklog", WRITE)
    def worklog_tool(args: WorklogArguments) -> dict[str, Any]:
        """A task's worklog (as `tasktool worklog ID --format json`): {"task_id",
        "entries": [{"timestamp", "content", "title"}]}; with add, the entry is appended
        first (refused as the CLI refuses it: worklog.disabled, worklog.empty)."""
        from tasktool.planning.writing.worklog import add_entry, read_worklog

        with tool_errors():
            repo = load()
            task = repo.get(args.id) if args.add is None else repo.local(args.id)
            if args.add is not None:
                add_entry(repo, task.id, args.add)
            return read_worklog(repo, task.id).to_json()

    @tool("archive", WRITE)
    def archive_tool(args: ArchiveArguments) -> dict[str, Any]:
        """Move tasks under an archive folder (as `tasktool archive ID... --format json`):
        hidden from lists, still satisfying dependencies. {"dry_run", "archived": [{"id",
        "from", "to"}]}; a task not completed or cancelled needs force (task.unresolved)."""
        from tasktool.planning.writing.archive import (
            archive_plan,
            choose_to_archive,
            refuse_unresolved,
        )

        with tool_errors():
            repo = load()
            today = dt.datetime.now(dt.UTC).date()
            plan = archive_plan(
                repo, choose_to_archive(repo, args.ids, today=today), force=args.force
            )
            if args.dry_run:
                return {"dry_run": True, "archived": [move.to_json() for move in plan]}
            refuse_unresolved(plan)
            moved = [
                {"id": move.task.id, "from": move.task.file_path}
                | {"to": str(archive_task(repo, move.task.id))}
                for move in plan
            ]
        return {"dry_run": False, "archived": moved}

    @tool("complete", WRITE)
    def complete_tool(args: GetArguments) -> dict[str, Any]:
        """Finish a task (as `tasktool set ID --done`): completed, stamping completed_at;
        in-review with workflow: pr-review. Returns the updated task."""
        with tool_errors():
            repo = load()
            finished = "in-review" if repo.config.workflow == "pr-review" else "completed"
            return task_view(
                update_task(repo, args.id, TaskChange(set={"status": finished})),
                body=repo.bodies.read,
            )

    @tool("board", READ)
    def board_tool(args: BoardArguments) -> dict[str, Any]:
        """Active tasks in columns (as `tasktool board --format json`): {"group_by",
        "columns": [{"name", "value", "count", "tasks"}]}, in the field's order (a
        Backlog.md repository's own status columns)."""
        with tool_errors():
            return board_document(load(), args.group_by)

    @tool("stats", READ)
    def stats_tool(args: NoArguments) -> dict[str, Any]:
        """Counts by status, priority, effort and phase, completion rate, blocked, the
        longest dependency chain (as `tasktool stats --format json`)."""
        with tool_errors():
            return repository_stats(load()).to_json()
