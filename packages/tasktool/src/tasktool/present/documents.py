"""The read queries every front end answers, as JSON-ready documents.

The CLI, the web API, the static export and the MCP tools call these same
functions with a loaded :class:`~tasktool.repository.Repository`, so a filter,
a ranking or a validation means one thing everywhere::

    repo = load_context(overrides)
    list_tasks(repo, filters=["status=pending"])   # list / GET /api/tasks / MCP list
    task_detail(repo, repo.get("007"))             # the dashboard's task page, export
    get_document(repo, "007")                      # get / GET /api/tasks/007 / MCP get
    rank(repo, limit=5)                            # next / GET /api/next / MCP next

Pure over the repository: no printing, no HTTP, no process state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mtcommon import CodedError
from tasktool.config import LoadedConfig
from tasktool.files.parsing.taskfile import is_safe_id
from tasktool.model.config import Config
from tasktool.model.criteria import acceptance_criteria
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Status, Task, natural_key
from tasktool.model.views import BodyReader, task_view, task_views
from tasktool.model.vocabulary import field_values
from tasktool.planning.filters import apply_filters, sort_tasks
from tasktool.planning.repository import Loader, Repository

# ``list`` must stay light: ranking, the graph and the checks load in the queries that use them.
if TYPE_CHECKING:
    from tasktool.planning.checks import ValidationReport
    from tasktool.planning.ranking import Ranked
    from tasktool.planning.stats import Stats

__all__ = [
    "board_document",
    "config_document",
    "get_document",
    "graph_document",
    "list_tasks",
    "rank",
    "related_tasks",
    "repository_stats",
    "search_document",
    "stale_temps",
    "task_detail",
    "tasks_document",
    "tracks_document",
    "validation_report",
    "vocabulary",
]


def list_tasks(
    repo: Repository,
    *,
    filters: Sequence[str] = (),
    sort: str | None = None,
    limit: int = 0,
    archived: bool = False,
) -> list[Task]:
    """``list``: active tasks (and archived ones when asked), filtered (AND), sorted, limited.

    A bad filter or sort raises ``TaskToolError`` (``filter.*``).
    """
    pool = sorted(repo.all_tasks, key=lambda t: natural_key(t.id)) if archived else repo.tasks
    tasks = apply_filters(pool, filters, repo.config)
    if sort:
        tasks = sort_tasks(tasks, sort, repo.config)
    return tasks[:limit] if limit else tasks


def _worklog(repo: Repository, task_id: str, holder: Task | None = None) -> dict[str, Any] | None:
    """``{path, entries, last}`` of the task's worklog, or ``None`` when it has none
    (``holder``: the task with this id, when the caller has it)."""
    if not is_safe_id(task_id):
        return None
    path = repo.worklog_path(task_id, holder=holder)
    if not path.exists():
        return None
    from tasktool.planning.writing.worklog import read_worklog  # only for a task that has one

    entries = read_worklog(repo, task_id, holder=holder).entries
    return {
        "path": str(path),
        "entries": len(entries),
        "last": entries[-1].timestamp if entries else None,
    }


def _links(repo: Repository, task_id: str) -> tuple[list[str], list[str]]:
    """The ids of the active tasks that depend on ``task_id`` and of its children, in
    natural id order, as the graph's ``dependents`` and ``children`` hold them (of an id
    several active files hold, the first counts): one pass over the tasks, where the
    graph would index every task's links to answer for one."""
    by_id = repo.by_id
    dependents: list[str] = []
    children: list[str] = []
    for other in repo.tasks:
        if task_id in other.dependencies and by_id[other.id] is other:
            dependents.append(other.id)
        if other.parent == task_id and by_id[other.id] is other:
            children.append(other.id)
    return dependents, children


def task_detail(repo: Repository, task: Task) -> dict[str, Any]:
    """``get``'s JSON: the task with its body, both directions of dependency, children,
    unmet dependencies and a worklog summary."""
    by_id = repo.by_id
    dependents, children = _links(repo, task.id)
    # Met: the task a dependency names (active, else archived) is completed (as the graph).
    unmet = [
        dep
        for dep in task.dependencies
        if (found := by_id.get(dep)) is None or found.status != Status.COMPLETED.value
    ]
    children_tasks = [by_id[child] for child in children]
    worklog = _worklog(repo, task.id)
    detail = _detail(task, dependents, children_tasks, unmet, worklog, body=repo.bodies.read)
    if repo.is_draft(task):
        detail["draft"] = True  # Backlog.md's draft: never listed nor recommended
    return detail


def get_document(repo: Repository, task_id: str) -> dict[str, Any]:
    """``get``: :func:`task_detail` of ``repo.get(task_id)`` (its errors included). When
    the parse cache holds every file as it is (no sibling worktree overlaid), answered
    from its columns of ids (:mod:`tasktool.planning.get_index`): only the task's row and
    its children's are decoded, not every task's."""
    from tasktool.planning.get_index import lookup  # list and the planning commands never look up

    found = lookup(repo, task_id)
    if found is None:
        return task_detail(repo, repo.get(task_id))
    task = found.task
    worklog = _worklog(repo, task.id, task)
    return _detail(
        task, found.dependents, found.children, found.unmet, worklog, body=repo.bodies.read
    )


def _detail(
    task: Task,
    dependents: list[str],
    children: list[Task],
    unmet: list[str],
    worklog: dict[str, Any] | None,
    *,
    body: BodyReader,
) -> dict[str, Any]:
    detail = task_view(task, body=body)
    detail.update(
        dependents=dependents,
        children=[
            {"id": child.id, "title": child.title, "status": child.status} for child in children
        ],
        unmet_dependencies=unmet,
        blocked=bool(unmet),
        resolved=task.resolved,
        worklog=worklog,
    )
    criteria = acceptance_criteria(detail["body"])
    detail["acceptance"] = criteria.to_json() if criteria is not None else None
    return detail


def _filter_predicate(repo: Repository, expressions: Sequence[str]) -> Callable[[Task], bool]:
    """One pass of the ``list`` filters over the tasks, then a set lookup per candidate."""
    kept = apply_filters(repo.tasks, expressions, repo.config)
    allowed = {id(task) for task in kept}
    return lambda task: id(task) in allowed


def rank(
    repo: Repository,
    *,
    limit: int,
    quick_wins: bool = False,
    strict_phases: bool = True,
    filters: Sequence[str] = (),
) -> list[Ranked]:
    """``next``: the ranked actionable tasks. Refuses (``config.next.*``) when the config's
    ``next`` section is malformed, as every ``next`` surface must."""
    from tasktool.planning.memos.derived_memo import derived
    from tasktool.planning.ranking import Placed, rank_next

    repo.loaded.require_next_config()
    tasks = repo.tasks

    def compute() -> list[Placed]:
        predicate = _filter_predicate(repo, filters) if filters else None
        ranked = rank_next(
            repo.graph,
            repo.config,
            strict_phases=strict_phases,
            quick_wins=quick_wins,
            limit=limit,
            predicate=predicate,
        )
        return Placed.of(ranked, tasks)

    def valid(placed: list[Placed]) -> bool:
        return all(item.fits(tasks) for item in placed)

    options = (limit, quick_wins, strict_phases, tuple(filters))
    placed = derived(repo, "next", options, list[Placed], compute, valid=valid)
    return [item.ranked(rank, tasks) for rank, item in enumerate(placed, start=1)]


def repository_stats(repo: Repository) -> Stats:
    """``stats``: counts, completion rate, blocked, longest chain."""
    from tasktool.planning.memos.derived_memo import derived
    from tasktool.planning.stats import Stats, compute_stats

    return derived(repo, "stats", (), Stats, lambda: compute_stats(repo.graph, repo.config))


def validation_report(load: Loader) -> ValidationReport:
    """``validate``: config and task checks. An unreadable config or a task directory
    path that is not a directory is one error in the report, not an exception."""
    from tasktool.planning.checks import build_report, check_tasks
    from tasktool.planning.memos.derived_memo import derived

    try:
        repo = load(tolerant=True)
    except CodedError as exc:
        file = (exc.details or {}).get("file")
        problem = Diagnostic(
            severity="error", code=exc.code, message=exc.message, file=str(file) if file else None
        )
        return build_report([problem])
    checks = derived(
        repo, "validate", (), list[Diagnostic], lambda: check_tasks(repo.graph, repo.config)
    )
    return build_report(
        repo.config_diagnostics, repo.broken, checks, repo.worktree_diagnostics, stale_temps(repo)
    )


def stale_temps(repo: Repository) -> list[Diagnostic]:
    """``task.stale_temp`` warnings: temporary files a killed writer left in the task
    directory or a folder under it (the next write there removes them). The folders are
    the walk's: a path per task (100,000 of them) and the tasks decoded for it cost most of
    a warm ``validate``."""
    from pathlib import Path

    from tasktool.files import storage

    root = repo.task_dir
    folders = {root} | {Path(folder) for folder in repo.walked_folders}
    return [
        Diagnostic(
            severity="warning",
            code="task.stale_temp",
            message=f"{path.relative_to(root)}: a temporary file left by an interrupted "
            "write; the next write in its folder removes it (or delete it)",
            file=str(path),
        )
        for folder in sorted(folders)
        if folder == root or folder.is_relative_to(root)
        for path in storage.stale_temps(folder)
    ]


def config_document(loaded: LoadedConfig) -> dict[str, Any]:
    """``config show``'s JSON: ``{"file", "settings": {"<key>": {"value", "source"}}}``; a
    key whose environment value was rejected shows that text with the source
    ``rejected: <variable>``, never the default it fell back to."""
    keys: dict[str, Any] = {}
    for key, value in loaded.values.items():
        if key in loaded.rejected:
            variable, text = loaded.rejected[key]
            keys[key] = {"value": text, "source": f"rejected: {variable}"}
        else:
            keys[key] = {"value": value, "source": loaded.sources[key]}
    return {"file": loaded.file, "settings": keys}


VOCABULARY_FIELDS = ("status", "priority", "effort", "type", "phase")


def vocabulary(config: Config) -> dict[str, list[str]]:
    """The known values of the closed fields and of ``phase``, in their natural order."""
    return {field: list(field_values(field, config) or ()) for field in VOCABULARY_FIELDS}


def tasks_document(
    repo: Repository,
    *,
    filters: Sequence[str] = (),
    sort: str | None = None,
    limit: int = 0,
    archived: bool = False,
) -> list[dict[str, Any]]:
    """``GET /api/tasks``: the ``list`` JSON."""
    return task_views(list_tasks(repo, filters=filters, sort=sort, limit=limit, archived=archived))


def search_document(
    repo: Repository,
    text: str,
    *,
    filters: Sequence[str] = (),
    limit: int = 0,
    archived: bool = False,
) -> list[dict[str, Any]]:
    """``search``'s JSON (the CLI's and ``GET /api/tasks?q=``): the ``list`` items whose
    title or body hold every word of ``text``, each with its ``score``, best first."""
    from tasktool.planning.search import search_tasks

    hits = search_tasks(list_tasks(repo, filters=filters, archived=archived), text, repo.bodies)
    if limit:
        hits = hits[:limit]
    views = task_views([hit.task for hit in hits])
    return [{"score": hit.score, **view} for hit, view in zip(hits, views, strict=True)]


def related_tasks(repo: Repository, detail: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"id", "title", "status"}`` of the tasks a detail names (dependencies, dependents)."""
    ids = {*detail["dependencies"], *detail["dependents"]}
    return {
        task.id: {"id": task.id, "title": task.title, "status": task.status}
        for task_id in ids
        if (task := repo.by_id.get(task_id)) is not None
    }


def board_document(repo: Repository, group_by: str) -> dict[str, Any]:
    """``board``: active tasks in columns by ``group_by``."""
    from tasktool.planning.board import build_board

    return build_board(repo.tasks, repo.config, group_by, ordered=True).to_json()


def graph_document(
    repo: Repository,
    *,
    root: str | None = None,
    upstream: bool = False,
    downstream: bool = False,
    exclude_status: Sequence[str] = (),
) -> dict[str, Any]:
    """``graph --format json``: the selected tasks, their edges and cycles."""
    from tasktool.present.graph_render import select_graph

    view = select_graph(
        repo.graph,
        root=root,
        upstream=upstream,
        downstream=downstream,
        exclude_status=exclude_status,
    )
    return view.to_json()


def tracks_document(repo: Repository, *, strict_phases: bool = True) -> dict[str, Any]:
    """``tracks``: actionable work split into tracks that do not share a scope."""
    from tasktool.planning.tracks import plan_tracks

    return plan_tracks(repo.graph, repo.config, strict_phases=strict_phases).to_json()
