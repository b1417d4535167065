"""The arguments of each MCP tool, one :class:`~tasktool.mcp.tooling.Arguments` model a
tool: the fields are the tool's arguments on the wire (the CLI command's options), their
descriptions the schema's, so the schema and the function read the same declaration."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from tasktool.mcp.tooling import Arguments
from tasktool.planning.ranking import DEFAULT_LIMIT
from tasktool.planning.writing.changes import TaskChange, new_task_fields

__all__ = [
    "LIST_FIELDS",
    "AddArguments",
    "ArchiveArguments",
    "BoardArguments",
    "GetArguments",
    "GraphArguments",
    "ListArguments",
    "NextArguments",
    "NoArguments",
    "SearchArguments",
    "SetArguments",
    "StrictPhasesArguments",
    "TaskFields",
    "WorklogArguments",
]

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
Limit = Annotated[int, Field(ge=0, description="At most this many (0: all).")]
Id = Annotated[str, Field(description="The task's id.")]
Text = Annotated[str | None, Field(description="New value; an empty string clears the field.")]
Items = Annotated[list[str] | None, Field(description="Replace the whole list ([] clears it).")]
AddItems = Annotated[list[str] | None, Field(description="Add these items to the list.")]
DropItems = Annotated[list[str] | None, Field(description="Remove these items from the list.")]
GroupBy = Literal["status", "priority", "effort", "type", "owner", "phase", "tag", "group"]

LIST_FIELDS = ("dependencies", "tags", "touches", "context", "pr")


class NoArguments(Arguments):  # validate, stats: no docstring, no schema description
    pass


class ListArguments(Arguments):
    filter: Filters = None
    sort: Annotated[str | None, Field(description="Fields to sort by, e.g. 'priority,-id'.")] = None
    limit: Limit = 0
    archived: Annotated[bool, Field(description="Include archived tasks.")] = False


class GetArguments(Arguments):
    id: Id


class NextArguments(Arguments):
    limit: Limit = DEFAULT_LIMIT
    quick_wins: Annotated[bool, Field(description="Only the lowest effort.")] = False
    strict_phases: StrictPhases = True
    filter: Filters = None


class StrictPhasesArguments(Arguments):
    strict_phases: StrictPhases = True


SCALAR_FIELDS = (
    *("status", "priority", "effort", "type", "owner", "phase", "parent"),
    *("external_id", "created_at"),
)


def _given(args: Arguments, fields: tuple[str, ...]) -> dict[str, Any]:
    """The fields of ``args`` that were given (not ``None``), by name."""
    return {field: value for field in fields if (value := getattr(args, field)) is not None}


class TaskFields(Arguments):
    """The fields ``set`` and ``add`` both take, first in their schemas; ``None`` is not
    given."""

    status: Text = None
    priority: Text = None
    effort: Text = None
    type: Text = None
    owner: Text = None
    phase: Text = None
    parent: Text = None
    external_id: Text = None
    created_at: Text = None
    dependencies: Items = None
    tags: Items = None
    touches: Items = None
    context: Items = None
    pr: Items = None


class SetArguments(TaskFields):
    id: Id
    title: Text = None
    completed_at: Text = None
    cancelled_at: Text = None
    body: Annotated[str | None, Field(description="Replace the Markdown body.")] = None
    add_dependencies: AddItems = None
    remove_dependencies: DropItems = None
    add_tags: AddItems = None
    remove_tags: DropItems = None
    add_touches: AddItems = None
    remove_touches: DropItems = None
    add_context: AddItems = None
    remove_context: DropItems = None
    add_pr: AddItems = None
    remove_pr: DropItems = None

    def change(self) -> TaskChange:
        """The edit these arguments ask for; an empty string clears a scalar field."""
        scalars = _given(self, ("title", *SCALAR_FIELDS, "completed_at", "cancelled_at"))
        replace = _given(self, LIST_FIELDS)
        add = _given(self, tuple(f"add_{field}" for field in LIST_FIELDS))
        remove = _given(self, tuple(f"remove_{field}" for field in LIST_FIELDS))
        return TaskChange(
            set={field: value or None for field, value in scalars.items()},
            replace={field: tuple(items) for field, items in replace.items()},
            add={name.removeprefix("add_"): tuple(items) for name, items in add.items() if items},
            remove={
                name.removeprefix("remove_"): tuple(items)
                for name, items in remove.items()
                if items
            },
            body=self.body,
        )


class AddArguments(TaskFields):
    title: Annotated[str, Field(description="The new task's title.")]
    body: Annotated[str, Field(description="Markdown body.")] = ""
    group: Annotated[
        str | None, Field(description="Sub-directory of the task dir to write it in.")
    ] = None
    id: Annotated[str | None, Field(description="Use this id instead of generating one.")] = None

    def fields(self) -> dict[str, Any]:
        """The new task's frontmatter: the title and the fields given, checked."""
        return new_task_fields(self.title, _given(self, SCALAR_FIELDS), _given(self, LIST_FIELDS))


class GraphArguments(Arguments):
    format: Annotated[
        Literal["json", "ascii", "mermaid", "dot"],
        Field(description="json: nodes, edges, cycles; or a drawing."),
    ] = "json"
    root: Annotated[str | None, Field(description="Only this task and what it connects to.")] = None
    upstream: Annotated[bool, Field(description="With root: what it depends on.")] = False
    downstream: Annotated[bool, Field(description="With root: what depends on it.")] = False
    exclude_status: Annotated[
        list[str] | None, Field(description="Leave out tasks with these statuses.")
    ] = None


class SearchArguments(Arguments):
    text: Annotated[str, Field(description="Words the title or body must all hold.")]
    filter: Annotated[
        list[str] | None, Field(description="Filters as for `list`, combined with AND.")
    ] = None
    limit: Limit = 0
    archived: Annotated[bool, Field(description="Search archived tasks too.")] = False


class WorklogArguments(Arguments):
    id: Annotated[str, Field(description="The task's id (a bare number finds 001).")]
    add: Annotated[str | None, Field(description="Append this entry (needs worklogs on).")] = None


class ArchiveArguments(Arguments):
    ids: Annotated[list[str], Field(description="The tasks to archive.", min_length=1)]
    force: Annotated[bool, Field(description="Archive unresolved tasks too.")] = False
    dry_run: Annotated[bool, Field(description="Only say what would move.")] = False


class BoardArguments(Arguments):
    group_by: Annotated[GroupBy, Field(description="The field of the columns.")] = "status"
