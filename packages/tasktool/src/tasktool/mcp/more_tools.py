"""The MCP tools beside the core ones (:mod:`tasktool.mcp.server`): ``search``,
``worklog``, ``archive``, ``complete``, ``board`` and ``stats``, each as the CLI command
of the same name (``complete`` is ``set --done``), with its codes and limits."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.types import ToolAnnotations
from pydantic import Field

from tasktool.model.views import task_view
from tasktool.planning.changes import TaskChange
from tasktool.planning.repository import Loader
from tasktool.planning.writes import archive_task, update_task
from tasktool.present.documents import board_document, repository_stats, search_document

__all__ = ["register_more"]

Register = Callable[[str, ToolAnnotations], Callable[[Any], Any]]
GroupBy = Literal["status", "priority", "effort", "type", "owner", "phase", "tag", "group"]


def register_more(
    tool: Register,
    load: Loader,
    *,
    read: ToolAnnotations,
    write: ToolAnnotations,
    errors: Callable[[], Any],
) -> None:
    """Register the tools with ``tool`` (the server's registrar); ``errors`` turns a
    tasktool error into a tool error (``message [code]``)."""

    @tool("search", read)
    def search_tool(
        text: Annotated[str, Field(description="Words the title or body must all hold.")],
        filter: Annotated[
            list[str] | None, Field(description="Filters as for `list`, combined with AND.")
        ] = None,
        limit: Annotated[int, Field(ge=0, description="At most this many (0: all).")] = 0,
        archived: Annotated[bool, Field(description="Search archived tasks too.")] = False,
    ) -> dict[str, Any]:
        """Find tasks whose title or body hold every word of text, any case, best first (as
        `tasktool search --format json`): {"count", "tasks": [...]}, each with its score."""
        with errors():
            found = search_document(
                load(), text, filters=filter or (), limit=limit, archived=archived
            )
        return {"count": len(found), "tasks": found}

    @tool("worklog", write)
    def worklog_tool(
        id: Annotated[str, Field(description="The task's id (a bare number finds 001).")],
        add: Annotated[
            str | None, Field(description="Append this entry (needs worklogs on).")
        ] = None,
    ) -> dict[str, Any]:
        """A task's worklog (as `tasktool worklog ID --format json`): {"task_id",
        "entries": [{"timestamp", "content", "title"}]}; with add, the entry is appended
        first (refused as the CLI refuses it: worklog.disabled, worklog.empty)."""
        from tasktool.planning.worklog import add_entry, read_worklog

        with errors():
            repo = load()
            task = repo.get(id) if add is None else repo.local(id)
            if add is not None:
                add_entry(repo, task.id, add)
            return read_worklog(repo, task.id).to_json()

    @tool("archive", write)
    def archive_tool(
        ids: Annotated[list[str], Field(description="The tasks to archive.", min_length=1)],
        force: Annotated[bool, Field(description="Archive unresolved tasks too.")] = False,
        dry_run: Annotated[bool, Field(description="Only say what would move.")] = False,
    ) -> dict[str, Any]:
        """Move tasks under an archive folder (as `tasktool archive ID... --format json`):
        hidden from lists, still satisfying dependencies. {"dry_run", "archived": [{"id",
        "from", "to"}]}; a task not completed or cancelled needs force (task.unresolved)."""
        from tasktool.planning.archive import archive_plan, choose_to_archive, refuse_unresolved

        with errors():
            repo = load()
            today = dt.datetime.now(dt.UTC).date()
            plan = archive_plan(repo, choose_to_archive(repo, ids, today=today), force=force)
            if dry_run:
                return {"dry_run": True, "archived": [move.to_json() for move in plan]}
            refuse_unresolved(plan)
            moved = [
                {"id": move.task.id, "from": move.task.file_path}
                | {"to": str(archive_task(repo, move.task.id))}
                for move in plan
            ]
        return {"dry_run": False, "archived": moved}

    @tool("complete", write)
    def complete_tool(
        id: Annotated[str, Field(description="The task's id.")],
    ) -> dict[str, Any]:
        """Finish a task (as `tasktool set ID --done`): completed, stamping completed_at;
        in-review with workflow: pr-review. Returns the updated task."""
        with errors():
            repo = load()
            finished = "in-review" if repo.settings.workflow == "pr-review" else "completed"
            return task_view(update_task(repo, id, TaskChange(set={"status": finished})), body=True)

    @tool("board", read)
    def board_tool(
        group_by: Annotated[GroupBy, Field(description="The field of the columns.")] = "status",
    ) -> dict[str, Any]:
        """Active tasks in columns (as `tasktool board --format json`): {"group_by",
        "columns": [{"name", "value", "count", "tasks"}]}, in the field's order (a
        Backlog.md repository's own status columns)."""
        with errors():
            return board_document(load(), group_by)

    @tool("stats", read)
    def stats_tool() -> dict[str, Any]:
        """Counts by status, priority, effort and phase, completion rate, blocked, the
        longest dependency chain (as `tasktool stats --format json`)."""
        with errors():
            return repository_stats(load()).to_json()
