"""The error catalogue: every code tasktool reports, its meaning, exit status and HTTP status.

::

    mtcommon.CodedError
     └── TaskToolError             code: one of CATALOGUE (config.*, task.*, ...)

Front ends look a code up here instead of keeping their own tables: the CLI exits with
:func:`exit_status` and prints ``error: <message> [<code>]`` (``mtcommon.render_line``),
the web API answers with :func:`http_status`. ``docs/tasktool.md`` ("Errors") lists the
same table; ``tests/tasktool/test_error_catalogue.py`` fails when a code is raised but not
catalogued and documented, or catalogued but never raised.

A code with no exit status is a finding, not a refusal: a broken task file is warned about
and skipped, ``validate`` lists the finding (and exits 1 if any finding is an error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mtcommon import Catalogue, CodedError, ErrorCode

__all__ = [
    "CATALOGUE",
    "TaskToolError",
    "exit_status",
    "http_status",
    "task_not_found",
]


_USAGE = (2, 400)
_FAILED = (1, 400)
_MISSING = (1, 404)
_CONFLICT = (1, 409)
_BROKEN = (1, 500)
_UNREADABLE = (1, 422)
_FINDING = (None, None)
_UPSTREAM = (1, 502)  # a tracker sync talks to failed
_UNAVAILABLE = (1, 503)

_ENTRIES: tuple[tuple[str, str, tuple[int | None, int | None]], ...] = (
    # Tasks: lookups and edits.
    ("task.not_found", "No task with that id", _MISSING),
    ("task.broken", "The id belongs to a task-like file that cannot be read", _UNREADABLE),
    ("task.invalid_status", "A status outside the six statuses", _FAILED),
    ("task.invalid_priority", "A priority outside low..critical", _FAILED),
    ("task.invalid_type", "A type outside feature/bug/improvement/chore/docs", _FAILED),
    ("task.invalid_effort", "An effort outside the configured vocabulary", _FAILED),
    ("task.invalid_title", "An empty title", _FAILED),
    ("task.invalid_date", "A date field that is not YYYY-MM-DD", _FAILED),
    ("task.unknown_field", "Not a task field", _FAILED),
    ("task.unknown_reference", "A dependency or parent that names no task", _FAILED),
    ("task.self_reference", "A task that names itself as dependency or parent", _FAILED),
    ("task.invalid_id", "An id that is not letters, digits, '.', '_', '-'", _FAILED),
    ("task.invalid_group", "An add --group folder the scan would not read", _FAILED),
    (
        "task.invalid_text",
        "An argument that is not valid UTF-8, or a field with a control character",
        _FAILED,
    ),
    ("task.too_large", "A title, value, list or body past its size limit", (1, 413)),
    ("task.exists", "An id or file that already exists", _CONFLICT),
    ("task.referenced", "rm of a task others depend on (use --force)", _CONFLICT),
    ("task.unresolved", "archive of an unfinished task (use --force)", _CONFLICT),
    ("task.archived", "archive of a task already archived", _CONFLICT),
    ("task.conflict", "The file changed while being edited; nothing written; retry", _CONFLICT),
    (
        "task.changed",
        "A task's file changed after it was loaded, before its body was read; run again",
        _CONFLICT,
    ),
    ("task.lock", "The lock directory under .tasktool/ cannot be created", _BROKEN),
    ("task.dir_missing", "The task directory path is not a directory", _BROKEN),
    (
        "task.dir_absent",
        "The task directory does not exist yet (no tasks; add creates it)",
        _FINDING,
    ),
    ("id.exhausted", "No free random id found; raise id.length", _CONFLICT),
    # Task files that cannot be read: warned about and skipped by the scan, errors in
    # validate; an edit of such a file (set, rm, archive) stops with the code.
    ("task.unreadable", "A task file that cannot be read or is not UTF-8", _UNREADABLE),
    ("task.yaml", "Frontmatter that is not valid YAML", _FINDING),
    ("task.merge_conflict", "Committed merge-conflict markers (file and line named)", _FINDING),
    ("task.frontmatter", "No frontmatter block, or frontmatter that is not a mapping", _UNREADABLE),
    ("task.missing_id", "A task file with a blank or missing id", _FINDING),
    ("task.missing_title", "A task file with a blank or missing title", _FINDING),
    ("task.field_type", "A field with a list where a value belongs, or the reverse", _FINDING),
    ("task.duplicate_key", "A frontmatter key written twice (set refuses to edit it)", _UNREADABLE),
    ("task.editor", "edit: the editor could not start or exited with an error", _FAILED),
    (
        "task.edit_failed",
        "A frontmatter shape an edit cannot change in place (nothing written)",
        _UNREADABLE,
    ),
    # validate findings over the loaded tasks.
    ("task.stale_temp", "A temporary file an interrupted write left (warning)", _FINDING),
    ("task.lenient", "Backlog.md files read leniently: 'assignee: @name' (warning)", _FINDING),
    ("task.duplicate_id", "One id in several files", _FINDING),
    (
        "task.ambiguous_id",
        "A command named an id that several files hold (deduplicate first)",
        _CONFLICT,
    ),
    ("task.missing_dependency", "A dependency id that exists nowhere", _FINDING),
    ("task.missing_parent", "A parent id that exists nowhere", _FINDING),
    ("task.dependency_cycle", "Dependencies that loop", _FINDING),
    ("task.parent_cycle", "Parents that loop", _FINDING),
    ("task.unknown_phase", "A phase matching no configured phase id (warning)", _FINDING),
    ("task.unknown_scope", "A touches entry matching no configured scope (warning)", _FINDING),
    # The git worktree overlay (docs/tasktool.md, "Git worktrees").
    (
        "worktree.sibling_only",
        "set, rm or archive of a task that exists only in a sibling worktree",
        _CONFLICT,
    ),
    ("worktree.divergent", "Completed in one worktree, cancelled in another (warning)", _FINDING),
    ("worktree.sibling_unreadable", "A sibling worktree left out of the overlay", _FINDING),
    # The project registry (docs/tasktool.md, "Projects").
    ("projects.not_found", "--project, unregister or default_project naming no project", _MISSING),
    ("projects.folder_missing", "A registered project whose folder no longer exists", _MISSING),
    ("projects.exists", "projects register --id with an id already taken", _CONFLICT),
    (
        "projects.no_config",
        "projects register on a folder without .tasktool.yaml or .taskmd.yaml",
        _FAILED,
    ),
    (
        "projects.invalid",
        "projects or default_project of the wrong shape in the global file",
        _BROKEN,
    ),
    # Worklogs.
    ("worklog.disabled", "worklog --add without worklogs: true", _FAILED),
    ("worklog.empty", "worklog --add with an empty text", _FAILED),
    ("worklog.unreadable", "A worklog file that cannot be read", _BROKEN),
    ("worklog.write", "A worklog file that cannot be written", _BROKEN),
    # Usage: exit 2 like click's own usage errors.
    ("usage", "A usage error: unknown option, missing argument, bad choice", _USAGE),
    ("filter.field", "An unknown field in --filter, --sort, --group-by or board", _USAGE),
    ("filter.syntax", "A --filter that is not field=value, field!=value, ...", _USAGE),
    ("filter.comparison", "An ordering comparison on a field without an order", _USAGE),
    ("filter.value", "A --filter value outside the field's vocabulary", _USAGE),
    ("graph.format", "An unknown graph format", _USAGE),
    ("graph.root_excluded", "graph --root on a task its status filter excludes", _FAILED),
    # Configuration (docs/tasktool.md, "Validation rules", gives each condition).
    ("config.syntax", "The config file is not valid YAML", _BROKEN),
    ("config.unreadable", "The config file cannot be read", _BROKEN),
    ("config.not_mapping", "The config file is not a mapping", _BROKEN),
    ("config.too_large", "The config file expands past 100,000 values", _BROKEN),
    ("config.type", "A config value of the wrong type or outside its choices", _BROKEN),
    ("config.env.invalid", "A TASKTOOL_* value that does not convert", _BROKEN),
    ("config.effort.not_list", "effort is not a list", _BROKEN),
    ("config.effort.empty", "effort is an empty list", _BROKEN),
    ("config.effort.blank", "effort has a blank entry", _BROKEN),
    ("config.effort.duplicate", "effort repeats a value", _BROKEN),
    ("config.effort.non_string", "effort has a non-string item", _BROKEN),
    ("config.next.type", "next is not a mapping (next refuses)", _BROKEN),
    ("config.next.unknown_key", "next has a key other than unphased (next refuses)", _BROKEN),
    ("config.next.unphased", "next.unphased is not current or last (next refuses)", _BROKEN),
    ("config.phases.type", "phases is not a list", _FINDING),
    ("config.phases.entry", "A phase that is not a mapping", _FINDING),
    ("config.phases.name_missing", "A phase without name", _FINDING),
    ("config.phases.id_missing", "A phase without id (warning; its name is used)", _FINDING),
    ("config.phases.id", "A phase id that is a list or map", _FINDING),
    ("config.phases.description", "A phase description that is a list or map", _FINDING),
    ("config.phases.due", "A phase due date that is not YYYY-MM-DD", _FINDING),
    ("config.phases.duplicate_id", "Two phases with one id", _FINDING),
    ("config.scopes.type", "scopes is not a mapping", _FINDING),
    ("config.scopes.entry", "A scope that is not a mapping", _FINDING),
    ("config.unknown_key", "A config key tasktool does not know (warning)", _FINDING),
    ("config.backlog.value", "A Backlog.md config value of the wrong type (warning)", _FINDING),
    ("config.shadowed", "init wrote a file that hides a parent directory's config", _FINDING),
    ("config.both_dirs", "Both dir and task-dir in the config file (task-dir is used)", _FINDING),
    ("config.unknown_env", "A TASKTOOL_* variable that matches no settable key", _FINDING),
    ("config.ignored_env", "A task directory variable the file's key makes ignored", _FINDING),
    ("config.exists", "init where .tasktool.yaml exists (use --force) or is a folder", _CONFLICT),
    # sync: the sync.sources entries (findings in validate; sync refuses to run under them).
    (
        "sync.config.type",
        "A sync source that is neither github nor jira, or a bad sync section",
        _BROKEN,
    ),
    (
        "sync.config.missing",
        "A sync source without a key it needs (name, output_dir, ...)",
        _BROKEN,
    ),
    ("sync.config.value", "A sync source key that is not a non-empty string", _BROKEN),
    ("sync.config.project", "A project that is not owner/repository or a Jira key", _BROKEN),
    ("sync.config.base_url", "A base_url that is not https (http only to loopback)", _BROKEN),
    (
        "sync.config.field_map",
        "A field_map of the wrong shape or mapping to no task value",
        _BROKEN,
    ),
    ("sync.config.filters", "A filters entry the source does not take", _BROKEN),
    ("sync.config.unknown_key", "A key a sync source does not have", _BROKEN),
    ("sync.config.duplicate", "Two sync sources with one name", _BROKEN),
    ("sync.config.entry", "A sync.sources item that is not a mapping", _BROKEN),
    ("sync.config.output_dir", "An output_dir outside the task directory", _BROKEN),
    # sync: running.
    ("sync.no_sources", "sync with no sync.sources configured", _BROKEN),
    ("sync.unknown_source", "sync --source naming no configured source", _FAILED),
    ("sync.env_missing", "A token_env/user_env variable that is unset or empty", _BROKEN),
    ("sync.env_invalid", "A credential variable with blanks or control characters", _BROKEN),
    ("sync.auth", "The tracker refused the credentials", _UPSTREAM),
    ("sync.not_found", "The tracker has no such project (or hides it)", _UPSTREAM),
    ("sync.rate_limited", "The tracker asks to wait longer than sync waits (120 s)", _UNAVAILABLE),
    ("sync.unavailable", "Connection errors, timeouts or 5xx after every retry", _UNAVAILABLE),
    ("sync.http", "Another unexpected HTTP status from the tracker", _UPSTREAM),
    ("sync.response", "A tracker answer that is not what its API returns", _UPSTREAM),
    ("sync.state", "The sync state file cannot be read", _BROKEN),
    # Front ends: the web dashboard (docs/tasktool.md, "JSON API") and the MCP server.
    ("task.invalid_fields", "A web edit with bad fields; details.fields has each code", _FAILED),
    ("task.invalid_edit", "A web edit that is not a JSON object", _FAILED),
    ("task.invalid_value", "A web edit field of the wrong JSON type (in details.fields)", _FAILED),
    ("task.no_change", "An MCP set without a field", _FAILED),
    ("graph.root_missing", "MCP graph with upstream or downstream but no root", _FAILED),
    ("mcp.too_large", "An MCP message past 4 MiB, skipped unread (warning)", _FINDING),
    ("web.host_forbidden", "A dashboard request whose Host is not the bound address", (1, 403)),
    ("web.origin_forbidden", "A dashboard write from another origin", (1, 403)),
    ("web.unsupported_media_type", "A dashboard write that is not application/json", (1, 415)),
    ("web.read_only", "A dashboard write in read-only mode; nothing written", (1, 403)),
    ("web.invalid_json", "A dashboard write whose body is not JSON", _FAILED),
    ("web.too_large", "A dashboard write whose request body is past 4 MiB", (1, 413)),
    ("web.invalid_parameter", "A dashboard query parameter of the wrong form", _FAILED),
    ("web.not_found", "No dashboard page at that path", _MISSING),
    ("web.method_not_allowed", "A method the dashboard path does not take", (1, 405)),
    ("web.bind_failed", "web start cannot listen on the address (in use, not local)", _BROKEN),
    ("web.export", "web export into a path that is a file", _FAILED),
    (
        "tasktool.missing_extra",
        "A command whose extra or dependency is missing (the message says what to install)",
        _BROKEN,
    ),
    # Shared and last-resort codes.
    ("yaml.syntax", "Frontmatter the round-trip writer cannot parse (set refuses)", _UNREADABLE),
    ("yaml.duplicate_key", "The reader's repeated key, reported as task.duplicate_key", _FINDING),
    ("os.error", "A file system error (the message names the file)", _BROKEN),
    ("tasktool.internal", "A bug: still one line (-v shows the traceback)", _BROKEN),
)

CATALOGUE = Catalogue(
    {code: ErrorCode(meaning, exit, http) for code, meaning, (exit, http) in _ENTRIES}
)


#: The CLI exit status for an error with a code (1 for anything not catalogued).
exit_status = CATALOGUE.exit_status
#: The web API's HTTP status for an error with a code (500 for anything not catalogued).
http_status = CATALOGUE.http_status


class TaskToolError(CodedError):
    """An error with a catalogued code that a tasktool front end reports to its user."""

    def __init__(
        self, message: str, *, code: str, details: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(message, code=code, details=details)


def task_not_found(task_id: str) -> TaskToolError:
    """The one ``task.not_found`` error every front end raises."""
    return TaskToolError(f"no task with id {task_id!r}", code="task.not_found")
