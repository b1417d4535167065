"""What tasktool's front ends (CLI, web, MCP) call in the core is the library API.

Every name a front end imports from the modules that load, plan, present or
write tasks is in ``tasktool.__all__``, except the few below that only a front
end needs. A front end that grows a core call the API lacks fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tasktool

SOURCE = Path(tasktool.__file__).parent
FRONT_ENDS = ("cli", "web", "mcp")
CORE = (
    "tasktool.config",
    "tasktool.config.loader",
    "tasktool.planning.",
    "tasktool.present.documents",
)
FRONT_END_ONLY = {
    "CONFIG_NAME": "the file name `config init` writes",
    "DEFAULT_LIMIT": "the default of the --limit option",
    "EDITABLE_LISTS": "which fields the dashboard's edit form shows",
    "EDITABLE_SCALARS": "which fields the dashboard's edit form shows",
    "GROUP_FIELDS": "the choices of the board's --group-by option",
    "Invocation": "what a front end's command needs of the CLI's global options",
    "WORKLOG_DIR": "what the dashboard's change feed watches",
    "ArchiveMove": "archive's plan (--dry-run shows it)",
    "archive_plan": "where archive moves each chosen task, and which need --force",
    "choose_to_archive": "archive's ids or selection (--all, --status, --tag, --older-than)",
    "refuse_unresolved": "archive's refusal of a plan with unresolved tasks",
    "build_board": "the board command's text, drawn from the typed board",
    "change_from_json": "the dashboard's edit (PATCH /api/tasks/ID) body, checked as set",
    "group_tasks": "the list command's --group-by text",
    "loader": "validate's loads",
    "new_task_fields": "add's options and MCP create's arguments, checked as fields",
    "plan_tracks": "the tracks command's text, drawn from the typed tracks",
    "sort_tasks": "the list command's --sort of grouped tasks",
    "task_detail": "the dashboard's task page and the export's, from a task already loaded",
    "tasks_document": "the list JSON the dashboard, the export and MCP serve",
    "new_task_from_json": "the dashboard's create (POST /api/tasks) body, checked as add",
    "search_document": "the search command's and the dashboard search's ranked tasks",
    "taskmd_notice": "the stderr line that names taskmd's config when it is the one read",
    "check_field": "the check of a --sort or --group-by field name",
    "check_value": "the check of one `set` option's value before the edit is built",
    "format_entry": "the worklog command's text rendering of an entry",
    "scan_files": "the `todos` command's scan of source files",
    "related_tasks": "the task page's links",
    "serving_loader": "the first load and warnings of a serving front end",
    "today": "the date stamp for a JSON edit (change_from_json takes it)",
    "vocabulary": "the dashboard's select options",
    "Column": "the board page's cut columns (first N cards and the count)",
    "TaskGraph": "the graph page's focus on the actionable subgraph or a neighbourhood",
    "search_tasks": "the paged table's search, ranked before the page is cut",
    "values_of": "the paged table's filter choices, drawn from every task",
    "actionable_starts": "the graph page's first tasks, by the rule `graph` draws at scale",
    "actionable_part": "the graph page's actionable subgraph, the rule `graph` draws at scale",
    "walk_breadth_first": "the graph page's widening of a task's neighbourhood",
}


def is_core(module: str | None) -> bool:
    return module is not None and (module in CORE or module.startswith("tasktool.planning."))


def core_imports(front_end: str) -> dict[str, set[str]]:
    """Name imported from the core -> the front-end files importing it."""
    found: dict[str, set[str]] = {}
    for path in sorted((SOURCE / front_end).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and is_core(node.module):
                for alias in node.names:
                    found.setdefault(alias.name, set()).add(str(path.relative_to(SOURCE)))
    return found


def test_the_front_ends_call_the_core_through_api_names() -> None:
    used: dict[str, set[str]] = {}
    for front_end in FRONT_ENDS:
        for name, files in core_imports(front_end).items():
            used.setdefault(name, set()).update(files)
    missing = {name: sorted(files) for name, files in used.items() if name not in tasktool.__all__}
    assert set(missing) <= set(FRONT_END_ONLY), missing
    assert {"load_context", "rank", "create_task", "update_task", "archive_task"} <= set(used)


def test_the_exceptions_are_still_used() -> None:
    used = set().union(*(core_imports(front_end) for front_end in FRONT_ENDS))
    assert set(FRONT_END_ONLY) <= used
