"""``create_server(load)``: the MCP tools over the same core functions as the CLI.

Tools: ``list``, ``get``, ``next``, ``set``, ``add``, ``validate``, ``graph``,
``tracks``, and (:mod:`tasktool.mcp.more_tools`) ``search``, ``worklog``, ``archive``,
``complete``, ``board``, ``stats``. Each takes the CLI command's options, returns a JSON object and
reports a tasktool error as a tool error (``is_error``) whose text ends with
the error's code, e.g. ``no task with id '9' [task.not_found]``. Writes go
through the CLI's write path: the same checks, bookkeeping, locks and atomic
replace. Tasks are loaded afresh for every call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations

from tasktool import __version__
from tasktool.mcp.arguments import (
    AddArguments,
    GetArguments,
    GraphArguments,
    ListArguments,
    NextArguments,
    NoArguments,
    SetArguments,
    StrictPhasesArguments,
)
from tasktool.mcp.more_tools import register_more
from tasktool.mcp.tooling import READ, WRITE, F, make_tool, tool_errors
from tasktool.model.views import task_view
from tasktool.planning.repository import Loader
from tasktool.planning.writing.writes import create_task, update_task
from tasktool.present.documents import (
    get_document,
    graph_document,
    rank,
    tasks_document,
    tracks_document,
    validation_report,
)

__all__ = ["INSTRUCTIONS", "create_server"]

INSTRUCTIONS = """\
Tasks kept as Markdown files with YAML frontmatter. Use `next` to pick work (it ranks
actionable tasks: pending or in progress, dependencies completed), `get` to read a task,
`set` to change it (status in-progress claims it; completed stamps completed_at), `add` to
create one, `validate` after edits; `search` finds tasks by words, `worklog` reads and
appends notes, `complete` finishes a task, `archive` puts finished ones away, `board` and
`stats` summarize. Filters look like status=pending, priority>=high,
tags=api; several filters combine with AND."""


def create_server(load: Loader) -> MCPServer:
    """The tasktool MCP server; ``load`` gives the tasks for each call."""
    tools: list[Tool] = []

    def tool(name: str, annotations: ToolAnnotations) -> Callable[[F], F]:
        def register(function: F) -> F:
            tools.append(make_tool(function, name=name, annotations=annotations))
            return function

        return register

    @tool("list", READ)
    def list_tool(args: ListArguments) -> dict[str, Any]:
        """List tasks (as `tasktool list --format json`): {"count", "tasks": [...]}, each task
        with every field but the body."""
        with tool_errors():
            tasks = tasks_document(
                load(),
                filters=args.filter or (),
                sort=args.sort,
                limit=args.limit,
                archived=args.archived,
            )
        return {"count": len(tasks), "tasks": tasks}

    @tool("get", READ)
    def get_tool(args: GetArguments) -> dict[str, Any]:
        """One task (as `tasktool get ID --format json`): fields, body, dependencies and
        dependents, children, unmet dependencies, worklog summary."""
        with tool_errors():
            return get_document(load(), args.id)

    @tool("next", READ)
    def next_tool(args: NextArguments) -> dict[str, Any]:
        """What to work on next (as `tasktool next --format json`): {"tasks": [...]}, ranked,
        each with rank, score and the reasons for its score. Refused when the config's next
        section is malformed."""
        with tool_errors():
            ranked = rank(
                load(),
                limit=args.limit,
                quick_wins=args.quick_wins,
                strict_phases=args.strict_phases,
                filters=args.filter or (),
            )
        return {"tasks": [item.to_json() for item in ranked]}

    @tool("set", WRITE)
    def set_tool(args: SetArguments) -> dict[str, Any]:
        """Edit a task (as `tasktool set`): only the fields given change. Values are checked
        (status, priority, type, effort vocabulary, dates, references); completing stamps
        completed_at, cancelling stamps cancelled_at, reopening clears both. Returns the
        updated task."""
        change = args.change()
        if change.empty:
            raise ToolError("nothing to change; give at least one field [task.no_change]")
        with tool_errors():
            repo = load()
            return task_view(update_task(repo, args.id, change), body=repo.bodies.read)

    @tool("add", WRITE)
    def add_tool(args: AddArguments) -> dict[str, Any]:
        """Create a task (as `tasktool add`); the id comes from the configured strategy
        unless given. Values are checked as `set` checks them. Returns the new task."""
        with tool_errors():
            repo = load()
            task = create_task(
                repo, args.fields(), body=args.body, group=args.group, task_id=args.id
            )
            return task_view(task, body=repo.bodies.read)

    @tool("validate", READ)
    def validate_tool(args: NoArguments) -> dict[str, Any]:
        """Check the config and every task (as `tasktool validate --format json`):
        {"valid", "errors": [...], "warnings": [...]}, each with code and message."""
        return validation_report(load).to_json()

    @tool("graph", READ)
    def graph_tool(args: GraphArguments) -> dict[str, Any]:
        """The dependency graph (as `tasktool graph`). json: {"nodes", "edges": [{"from",
        "to"}], "cycles"}; other formats: {"format", "text"}. Edges go from a dependency to
        the task that waits on it."""
        from tasktool.present.graph_render import render_graph, select_graph

        if (args.upstream or args.downstream) and args.root is None:
            raise ToolError("upstream and downstream need root [graph.root_missing]")
        with tool_errors():
            if args.format == "json":
                return graph_document(
                    load(),
                    root=args.root,
                    upstream=args.upstream,
                    downstream=args.downstream,
                    exclude_status=args.exclude_status or (),
                )
            view = select_graph(
                load().graph,
                root=args.root,
                upstream=args.upstream,
                downstream=args.downstream,
                exclude_status=args.exclude_status or (),
            )
            return {"format": args.format, "text": render_graph(view, args.format)}

    @tool("tracks", READ)
    def tracks_tool(args: StrictPhasesArguments) -> dict[str, Any]:
        """Actionable work split into tracks that can run at the same time (as `tasktool
        tracks --format json`): tasks sharing a scope (touches) land in different tracks;
        track 1 is what a team of agents can start now."""
        with tool_errors():
            return tracks_document(load(), strict_phases=args.strict_phases)

    register_more(tool, load)
    return MCPServer(name="tasktool", version=__version__, instructions=INSTRUCTIONS, tools=tools)
