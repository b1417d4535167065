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
    from tasktool.model.config import Config as Config
    from tasktool.model.diagnostics import Diagnostic as Diagnostic
    from tasktool.model.errors import TaskToolError as TaskToolError
    from tasktool.model.task import Priority as Priority
    from tasktool.model.task import Status as Status
    from tasktool.model.task import Task as Task
    from tasktool.model.views import task_view as task_view
    from tasktool.planning.ranking import Ranked as Ranked
    from tasktool.planning.repository import Loader as Loader
    from tasktool.planning.repository import Repository as Repository
    from tasktool.planning.repository import load_context as load_context
    from tasktool.planning.search import tag_counts as tag_counts
    from tasktool.planning.writing.changes import TaskChange as TaskChange
    from tasktool.planning.writing.deduplicate import deduplicate as deduplicate
    from tasktool.planning.writing.worklog import add_entry as add_entry
    from tasktool.planning.writing.worklog import read_worklog as read_worklog
    from tasktool.planning.writing.writes import archive_task as archive_task
    from tasktool.planning.writing.writes import create_task as create_task
    from tasktool.planning.writing.writes import remove_task as remove_task
    from tasktool.planning.writing.writes import restore_task as restore_task
    from tasktool.planning.writing.writes import update_task as update_task
    from tasktool.present.documents import board_document as board_document
    from tasktool.present.documents import config_document as config_document
    from tasktool.present.documents import get_document as get_document
    from tasktool.present.documents import graph_document as graph_document
    from tasktool.present.documents import list_tasks as list_tasks
    from tasktool.present.documents import rank as rank
    from tasktool.present.documents import repository_stats as repository_stats
    from tasktool.present.documents import search_document as search_document
    from tasktool.present.documents import tracks_document as tracks_document
    from tasktool.present.documents import validation_report as validation_report
    from tasktool.present.graph_render import render_graph as render_graph
    from tasktool.present.graph_render import select_graph as select_graph

__all__ = [
    "Config",
    "Diagnostic",
    "LoadedConfig",
    "Loader",
    "Overrides",
    "Priority",
    "Ranked",
    "Repository",
    "Status",
    "Task",
    "TaskChange",
    "TaskToolError",
    "__version__",
    "add_entry",
    "archive_task",
    "board_document",
    "config_document",
    "create_task",
    "deduplicate",
    "get_document",
    "graph_document",
    "list_tasks",
    "load_config",
    "load_context",
    "rank",
    "read_worklog",
    "remove_task",
    "render_graph",
    "repository_stats",
    "restore_task",
    "search_document",
    "select_graph",
    "tag_counts",
    "task_view",
    "tracks_document",
    "update_task",
    "validation_report",
]
__version__ = "0.1.0"

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Diagnostic": ".model.diagnostics",
        "LoadedConfig": ".config.loader",
        "Loader": ".planning.repository",
        "Overrides": ".config.loader",
        "Priority": ".model.task",
        "Ranked": ".planning.ranking",
        "Repository": ".planning.repository",
        "Config": ".model.config",
        "Status": ".model.task",
        "Task": ".model.task",
        "TaskChange": ".planning.writing.changes",
        "TaskToolError": ".model.errors",
        "add_entry": ".planning.writing.worklog",
        "archive_task": ".planning.writing.writes",
        "board_document": ".present.documents",
        "config_document": ".present.documents",
        "create_task": ".planning.writing.writes",
        "deduplicate": ".planning.writing.deduplicate",
        "get_document": ".present.documents",
        "graph_document": ".present.documents",
        "list_tasks": ".present.documents",
        "load_config": ".config.loader",
        "load_context": ".planning.repository",
        "rank": ".present.documents",
        "read_worklog": ".planning.writing.worklog",
        "remove_task": ".planning.writing.writes",
        "render_graph": ".present.graph_render",
        "repository_stats": ".present.documents",
        "restore_task": ".planning.writing.writes",
        "search_document": ".present.documents",
        "select_graph": ".present.graph_render",
        "tag_counts": ".planning.search",
        "task_view": ".model.views",
        "tracks_document": ".present.documents",
        "update_task": ".planning.writing.writes",
        "validation_report": ".present.documents",
    },
)
