"""Tasks kept as Markdown files with YAML frontmatter: a layered core, its command line,
web dashboard and MCP server.

The public API (``docs/library.md``) is every name in ``__all__``: the functions
the CLI, the web API and the MCP server call, with the same config discovery,
locking and bookkeeping. Each is imported on first use, so ``import tasktool``
is cheap::

    repo = tasktool.load_context(cwd=Path("my-project"))
    for item in tasktool.rank(repo, limit=5): ...

The ``tasktool_repo`` pytest fixture (:mod:`tasktool.testing`, a ``pytest11``
plugin) builds a task repository from a dict for users' own tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mtcommon.lazy import lazy_exports

if TYPE_CHECKING:
    from tasktool.config.loader import LoadedConfig as LoadedConfig
    from tasktool.config.loader import Overrides as Overrides
    from tasktool.config.loader import load_config as load_config
    from tasktool.model.diagnostics import Diagnostic as Diagnostic
    from tasktool.model.errors import TaskToolError as TaskToolError
    from tasktool.model.settings import Settings as Settings
    from tasktool.model.task import Priority as Priority
    from tasktool.model.task import Status as Status
    from tasktool.model.task import Task as Task
    from tasktool.model.views import task_view as task_view
    from tasktool.planning.board import Board as Board
    from tasktool.planning.board import build_board as build_board
    from tasktool.planning.changes import TaskChange as TaskChange
    from tasktool.planning.changes import change_from_json as change_from_json
    from tasktool.planning.changes import new_task_fields as new_task_fields
    from tasktool.planning.checks import ValidationReport as ValidationReport
    from tasktool.planning.checks import check_tasks as check_tasks
    from tasktool.planning.deduplicate import deduplicate as deduplicate
    from tasktool.planning.filters import group_tasks as group_tasks
    from tasktool.planning.filters import sort_tasks as sort_tasks
    from tasktool.planning.graph import TaskGraph as TaskGraph
    from tasktool.planning.graph import build_graph as build_graph
    from tasktool.planning.ranking import Ranked as Ranked
    from tasktool.planning.ranking import rank_next as rank_next
    from tasktool.planning.repository import Loader as Loader
    from tasktool.planning.repository import Repository as Repository
    from tasktool.planning.repository import load_context as load_context
    from tasktool.planning.repository import loader as loader
    from tasktool.planning.search import search_tasks as search_tasks
    from tasktool.planning.search import tag_counts as tag_counts
    from tasktool.planning.stats import Stats as Stats
    from tasktool.planning.stats import compute_stats as compute_stats
    from tasktool.planning.tracks import Tracks as Tracks
    from tasktool.planning.tracks import plan_tracks as plan_tracks
    from tasktool.planning.worklog import add_entry as add_entry
    from tasktool.planning.worklog import read_worklog as read_worklog
    from tasktool.planning.writes import NewTask as NewTask
    from tasktool.planning.writes import archive_task as archive_task
    from tasktool.planning.writes import create_task as create_task
    from tasktool.planning.writes import create_tasks as create_tasks
    from tasktool.planning.writes import remove_task as remove_task
    from tasktool.planning.writes import restore_task as restore_task
    from tasktool.planning.writes import update_task as update_task
    from tasktool.present.documents import board_document as board_document
    from tasktool.present.documents import config_document as config_document
    from tasktool.present.documents import get_document as get_document
    from tasktool.present.documents import graph_document as graph_document
    from tasktool.present.documents import list_tasks as list_tasks
    from tasktool.present.documents import next_document as next_document
    from tasktool.present.documents import rank as rank
    from tasktool.present.documents import repository_stats as repository_stats
    from tasktool.present.documents import stats_document as stats_document
    from tasktool.present.documents import task_detail as task_detail
    from tasktool.present.documents import tasks_document as tasks_document
    from tasktool.present.documents import tracks_document as tracks_document
    from tasktool.present.documents import validation_report as validation_report
    from tasktool.present.graph_render import render_graph as render_graph
    from tasktool.present.graph_render import select_graph as select_graph

__all__ = [
    "Board",
    "Diagnostic",
    "LoadedConfig",
    "Loader",
    "NewTask",
    "Overrides",
    "Priority",
    "Ranked",
    "Repository",
    "Settings",
    "Stats",
    "Status",
    "Task",
    "TaskChange",
    "TaskGraph",
    "TaskToolError",
    "Tracks",
    "ValidationReport",
    "__version__",
    "add_entry",
    "archive_task",
    "board_document",
    "build_board",
    "build_graph",
    "change_from_json",
    "check_tasks",
    "compute_stats",
    "config_document",
    "create_task",
    "create_tasks",
    "deduplicate",
    "get_document",
    "graph_document",
    "group_tasks",
    "list_tasks",
    "load_config",
    "load_context",
    "loader",
    "new_task_fields",
    "next_document",
    "plan_tracks",
    "rank",
    "rank_next",
    "read_worklog",
    "remove_task",
    "render_graph",
    "repository_stats",
    "restore_task",
    "search_tasks",
    "select_graph",
    "sort_tasks",
    "stats_document",
    "tag_counts",
    "task_detail",
    "task_view",
    "tasks_document",
    "tracks_document",
    "update_task",
    "validation_report",
]
__version__ = "0.1.0"

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "add_entry": ".planning.worklog",
        "read_worklog": ".planning.worklog",
        "group_tasks": ".planning.filters",
        "sort_tasks": ".planning.filters",
        "change_from_json": ".planning.changes",
        "config_document": ".present.documents",
        "tasks_document": ".present.documents",
        "Board": ".planning.board",
        "Diagnostic": ".model.diagnostics",
        "LoadedConfig": ".config.loader",
        "Loader": ".planning.repository",
        "NewTask": ".planning.writes",
        "Overrides": ".config.loader",
        "Priority": ".model.task",
        "Ranked": ".planning.ranking",
        "Repository": ".planning.repository",
        "Settings": ".model.settings",
        "Stats": ".planning.stats",
        "Status": ".model.task",
        "Task": ".model.task",
        "TaskChange": ".planning.changes",
        "TaskGraph": ".planning.graph",
        "TaskToolError": ".model.errors",
        "Tracks": ".planning.tracks",
        "ValidationReport": ".planning.checks",
        "archive_task": ".planning.writes",
        "board_document": ".present.documents",
        "build_board": ".planning.board",
        "build_graph": ".planning.graph",
        "check_tasks": ".planning.checks",
        "compute_stats": ".planning.stats",
        "create_task": ".planning.writes",
        "create_tasks": ".planning.writes",
        "get_document": ".present.documents",
        "graph_document": ".present.documents",
        "list_tasks": ".present.documents",
        "load_config": ".config.loader",
        "load_context": ".planning.repository",
        "loader": ".planning.repository",
        "new_task_fields": ".planning.changes",
        "next_document": ".present.documents",
        "plan_tracks": ".planning.tracks",
        "rank": ".present.documents",
        "rank_next": ".planning.ranking",
        "remove_task": ".planning.writes",
        "repository_stats": ".present.documents",
        "restore_task": ".planning.writes",
        "deduplicate": ".planning.deduplicate",
        "search_tasks": ".planning.search",
        "tag_counts": ".planning.search",
        "render_graph": ".present.graph_render",
        "select_graph": ".present.graph_render",
        "stats_document": ".present.documents",
        "task_detail": ".present.documents",
        "task_view": ".model.views",
        "tracks_document": ".present.documents",
        "update_task": ".planning.writes",
        "validation_report": ".present.documents",
    },
)
