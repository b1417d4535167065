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

import difflib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import Field

from mtcommon import CodedError, render_line
from tasktool import __version__
from tasktool.mcp.more_tools import register_more
from tasktool.model.views import task_view
from tasktool.planning.changes import TaskChange, new_task_fields
from tasktool.planning.ranking import DEFAULT_LIMIT
from tasktool.planning.repository import Loader
from tasktool.planning.writes import create_task, update_task
from tasktool.present.documents import (
    get_document,
    graph_document,
    rank,
    tasks_document,
    tracks_document,
    validation_report,
)

__all__ = [
    "INSTRUCTIONS",
    "LIST_FIELDS",
    "READ",
    "WRITE",
    "AddItems",
    "DropItems",
    "F",
    "Filters",
    "Items",
    "StrictPhases",
    "StrictTool",
    "Text",
    "create_server",
    "tool_errors",
]

INSTRUCTIONS = """\
Tasks kept as Markdown files with YAML frontmatter. Use `next` to pick work (it ranks
actionable tasks: pending or in progress, dependencies completed), `get` to read a task,
`set` to change it (status in-progress claims it; completed stamps completed_at), `add` to
create one, `validate` after edits; `search` finds tasks by words, `worklog` reads and
appends notes, `complete` finishes a task, `archive` puts finished ones away, `board` and
`stats` summarize. Filters look like status=pending, priority>=high,
tags=api; several filters combine with AND."""

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

Filters = Annotated[
    list[str] | None,
    Field(
        description="Filters as for `tasktool list --filter`, e.g. ['status=pending', "
        "'priority>=high']; combined with AND."
    ),
]
StrictPhases = Annotated[
    bool,
    Field(description="Phase order before score (false: an earlier phase is only a bonus)."),
]
Text = Annotated[str | None, Field(description="New value; an empty string clears the field.")]
Items = Annotated[list[str] | None, Field(description="Replace the whole list ([] clears it).")]
AddItems = Annotated[list[str] | None, Field(description="Add these items to the list.")]
DropItems = Annotated[list[str] | None, Field(description="Remove these items from the list.")]

LIST_FIELDS = ("dependencies", "tags", "touches", "context", "pr")


@contextmanager
def tool_errors() -> Iterator[None]:
    """A tasktool (or file) error becomes a tool error the agent reads: ``message [code]``."""
    try:
        yield
    except CodedError as exc:
        raise ToolError(render_line(exc).removeprefix("error: ")) from None
    except OSError as exc:
        raise ToolError(f"{exc.strerror or exc}: {exc.filename or ''} [os.error]") from None


class StrictTool(Tool):
    """A tool that refuses arguments it does not take, naming them, and says so in its
    schema (``additionalProperties: false``). The SDK's argument model ignores them: a typo
    (``add_tag`` for ``add_tags``) was dropped silently, or alone gave "nothing to change"."""

    async def run(
        self, arguments: dict[str, Any], context: Context[Any, Any], convert_result: bool = False
    ) -> Any:
        known = self.parameters.get("properties", {})
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            hints = [
                f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name)
                for name in unknown
                for close in [difflib.get_close_matches(name, known, n=1)]
            ]
            raise ToolError(
                f"{self.name} does not take {', '.join(hints)}; its arguments: "
                f"{', '.join(known) or 'none'} [usage]"
            )
        return await super().run(arguments, context, convert_result)


F = TypeVar("F", bound=Callable[..., Any])


def _given(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def create_server(load: Loader) -> MCPServer:
    """The tasktool MCP server; ``load`` gives the tasks for each call."""
    tools: list[Tool] = []

    def tool(name: str, annotations: ToolAnnotations) -> Callable[[F], F]:
        def register(function: F) -> F:
            made = StrictTool.from_function(function, name=name, annotations=annotations)
            made.parameters["additionalProperties"] = False
            tools.append(made)
            return function

        return register

    @tool(name="list", annotations=READ)
    def list_tool(
        filter: Filters = None,
        sort: Annotated[
            str | None, Field(description="Fields to sort by, e.g. 'priority,-id'.")
        ] = None,
        limit: Annotated[int, Field(ge=0, description="At most this many (0: all).")] = 0,
        archived: Annotated[bool, Field(description="Include archived tasks.")] = False,
    ) -> dict[str, Any]:
        """List tasks (as `tasktool list --format json`): {"count", "tasks": [...]}, each task
        with every field but the body."""
        with tool_errors():
            repo = load()
            tasks = tasks_document(
                repo, filters=filter or (), sort=sort, limit=limit, archived=archived
            )
        return {"count": len(tasks), "tasks": tasks}

    @tool(name="get", annotations=READ)
    def get_tool(id: Annotated[str, Field(description="The task's id.")]) -> dict[str, Any]:
        """One task (as `tasktool get ID --format json`): fields, body, dependencies and
        dependents, children, unmet dependencies, worklog summary."""
        with tool_errors():
            repo = load()
            return get_document(repo, id)

    @tool(name="next", annotations=READ)
    def next_tool(
        limit: Annotated[int, Field(ge=0, description="At most this many (0: all).")] = (
            DEFAULT_LIMIT
        ),
        quick_wins: Annotated[bool, Field(description="Only the lowest effort.")] = False,
        strict_phases: StrictPhases = True,
        filter: Filters = None,
    ) -> dict[str, Any]:
        """What to work on next (as `tasktool next --format json`): {"tasks": [...]}, ranked,
        each with rank, score and the reasons for its score. Refused when the config's next
        section is malformed."""
        with tool_errors():
            ranked = rank(
                load(),
                limit=limit,
                quick_wins=quick_wins,
                strict_phases=strict_phases,
                filters=filter or (),
            )
        return {"tasks": [item.to_json() for item in ranked]}

    @tool(name="set", annotations=WRITE)
    def set_tool(
        id: Annotated[str, Field(description="The task's id.")],
        *,
        title: Text = None,
        status: Text = None,
        priority: Text = None,
        effort: Text = None,
        type: Text = None,
        owner: Text = None,
        phase: Text = None,
        parent: Text = None,
        external_id: Text = None,
        created_at: Text = None,
        completed_at: Text = None,
        cancelled_at: Text = None,
        body: Annotated[str | None, Field(description="Replace the Markdown body.")] = None,
        dependencies: Items = None,
        add_dependencies: AddItems = None,
        remove_dependencies: DropItems = None,
        tags: Items = None,
        add_tags: AddItems = None,
        remove_tags: DropItems = None,
        touches: Items = None,
        add_touches: AddItems = None,
        remove_touches: DropItems = None,
        context: Items = None,
        add_context: AddItems = None,
        remove_context: DropItems = None,
        pr: Items = None,
        add_pr: AddItems = None,
        remove_pr: DropItems = None,
    ) -> dict[str, Any]:
        """Edit a task (as `tasktool set`): only the fields given change. Values are checked
        (status, priority, type, effort vocabulary, dates, references); completing stamps
        completed_at, cancelling stamps cancelled_at, reopening clears both. Returns the
        updated task."""
        lists = locals()  # the list options by name: dependencies, add_tags, ...
        scalars = _given(
            title=title, status=status, priority=priority, effort=effort, type=type,
            owner=owner, phase=phase, parent=parent, external_id=external_id,
            created_at=created_at, completed_at=completed_at, cancelled_at=cancelled_at,
        )  # fmt: skip
        change = TaskChange(
            set={field: value or None for field, value in scalars.items()},
            replace={f: tuple(lists[f]) for f in LIST_FIELDS if lists[f] is not None},
            add={f: tuple(lists[f"add_{f}"]) for f in LIST_FIELDS if lists[f"add_{f}"]},
            remove={f: tuple(lists[f"remove_{f}"]) for f in LIST_FIELDS if lists[f"remove_{f}"]},
            body=body,
        )
        if change.empty:
            raise ToolError("nothing to change; give at least one field [task.no_change]")
        with tool_errors():
            return task_view(update_task(load(), id, change), body=True)

    @tool(name="add", annotations=WRITE)
    def add_tool(
        title: Annotated[str, Field(description="The new task's title.")],
        *,
        status: Text = None,
        priority: Text = None,
        effort: Text = None,
        type: Text = None,
        owner: Text = None,
        phase: Text = None,
        parent: Text = None,
        external_id: Text = None,
        created_at: Text = None,
        dependencies: Items = None,
        tags: Items = None,
        touches: Items = None,
        context: Items = None,
        pr: Items = None,
        body: Annotated[str, Field(description="Markdown body.")] = "",
        group: Annotated[
            str | None, Field(description="Sub-directory of the task dir to write it in.")
        ] = None,
        id: Annotated[
            str | None, Field(description="Use this id instead of generating one.")
        ] = None,
    ) -> dict[str, Any]:
        """Create a task (as `tasktool add`); the id comes from the configured strategy
        unless given. Values are checked as `set` checks them. Returns the new task."""
        fields = new_task_fields(
            title,
            _given(
                status=status, priority=priority, effort=effort, type=type, owner=owner,
                phase=phase, parent=parent, external_id=external_id, created_at=created_at,
            ),
            _given(
                dependencies=dependencies, tags=tags, touches=touches, context=context, pr=pr
            ),
        )  # fmt: skip
        with tool_errors():
            task = create_task(load(), fields, body=body, group=group, task_id=id)
            return task_view(task, body=True)

    @tool(name="validate", annotations=READ)
    def validate_tool() -> dict[str, Any]:
        """Check the config and every task (as `tasktool validate --format json`):
        {"valid", "errors": [...], "warnings": [...]}, each with code and message."""
        return validation_report(load).to_json()

    @tool(name="graph", annotations=READ)
    def graph_tool(
        format: Annotated[
            Literal["json", "ascii", "mermaid", "dot"],
            Field(description="json: nodes, edges, cycles; or a drawing."),
        ] = "json",
        root: Annotated[
            str | None, Field(description="Only this task and what it connects to.")
        ] = None,
        upstream: Annotated[bool, Field(description="With root: what it depends on.")] = False,
        downstream: Annotated[bool, Field(description="With root: what depends on it.")] = False,
        exclude_status: Annotated[
            list[str] | None, Field(description="Leave out tasks with these statuses.")
        ] = None,
    ) -> dict[str, Any]:
        """The dependency graph (as `tasktool graph`). json: {"nodes", "edges": [{"from",
        "to"}], "cycles"}; other formats: {"format", "text"}. Edges go from a dependency to
        the task that waits on it."""
        from tasktool.present.graph_render import render_graph, select_graph

        if (upstream or downstream) and root is None:
            raise ToolError("upstream and downstream need root [graph.root_missing]")
        with tool_errors():
            if format == "json":
                return graph_document(
                    load(),
                    root=root,
                    upstream=upstream,
                    downstream=downstream,
                    exclude_status=exclude_status or (),
                )
            view = select_graph(
                load().graph,
                root=root,
                upstream=upstream,
                downstream=downstream,
                exclude_status=exclude_status or (),
            )
            return {"format": format, "text": render_graph(view, format)}

    @tool(name="tracks", annotations=READ)
    def tracks_tool(strict_phases: StrictPhases = True) -> dict[str, Any]:
        """Actionable work split into tracks that can run at the same time (as `tasktool
        tracks --format json`): tasks sharing a scope (touches) land in different tracks;
        track 1 is what a team of agents can start now."""
        with tool_errors():
            return tracks_document(load(), strict_phases=strict_phases)

    register_more(
        lambda name, annotations: tool(name=name, annotations=annotations),
        load,
        read=READ,
        write=WRITE,
        errors=tool_errors,
    )
    return MCPServer(name="tasktool", version=__version__, instructions=INSTRUCTIONS, tools=tools)
