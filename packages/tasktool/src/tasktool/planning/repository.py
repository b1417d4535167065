"""The loaded repository every command works on: its config, diagnostics and tasks.

::

    repo = load_context(Overrides(task_dir="tasks"))
    repo.config              # the effective Config
    repo.loaded              # the LoadedConfig: the config file, each value's source
    repo.config_diagnostics  # problems of the config file / environment
    repo.tasks               # active tasks, natural id order
    repo.archived            # tasks under <task dir>/archive/ (their ids satisfy dependencies)
    repo.broken              # task-like files that could not be read (error diagnostics)
    repo.graph               # dependents, children, blocked/actionable (graph.TaskGraph)
    repo.worktrees           # the git worktrees merged in (None: no overlay active)
    repo.watched             # task directories whose changes change what is shown
    repo.cache               # what the caches answer without decoding every task (CacheView)
    repo.bodies.read(task)   # a task's body (read on first use when the parse cache keeps it)

With ``worktree_scope: unified`` and sibling git worktrees, ``tasks`` and
``archived`` carry each task's effective status (:mod:`tasktool.planning.worktrees.overlay`,
the siblings read by :mod:`tasktool.planning.worktrees.siblings`); writers look tasks up with
:meth:`Repository.local`, which refuses a task that exists only in a sibling.

The planning commands (next, tracks, board, stats, graph, validate) take
``repo.tasks``/``repo.archived`` and ``repo.config`` as plain values.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tasktool.config import LoadedConfig, Overrides, load_config, taskmd_notice
from tasktool.files.caches.bodies import Bodies
from tasktool.files.parsing.taskfile import is_safe_id
from tasktool.files.scanning.scan import ARCHIVE_DIR, Scan, ScanResult, at_positions, scan_source
from tasktool.files.scanning.walk import walk
from tasktool.files.scanning.worktrees import WorktreeSet, discover_worktrees
from tasktool.model.config import Config
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.errors import TaskToolError, task_not_found
from tasktool.model.task import Task

if TYPE_CHECKING:
    from tasktool.files.caches.id_columns import IdTable
    from tasktool.planning.graph import TaskGraph
    from tasktool.planning.worktrees.siblings import Merged

__all__ = [
    "WORKLOG_DIR",
    "CacheView",
    "Invocation",
    "Loader",
    "Repository",
    "active_place",
    "ambiguous_id",
    "load_context",
    "loader",
    "serving_loader",
]

WORKLOG_DIR = ".worklogs"


class Repository:
    """One run's view of the task directory (immutable once loaded)."""

    def __init__(
        self,
        loaded: LoadedConfig,
        scan: Scan | ScanResult,
        merged: Merged | None = None,
        *,
        notes: tuple[Diagnostic, ...] = (),
        drafts: tuple[Task, ...] = (),
    ) -> None:
        #: The config as loaded: its file, each value's source, its diagnostics.
        self.loaded = loaded
        #: Warnings about how files were read (Backlog.md's files read leniently).
        self.notes = notes
        #: Backlog.md's drafts: found by id (``get``), never listed, ranked or checked.
        self.drafts = drafts
        #: The effective configuration, the one every command reads.
        self.config: Config = loaded.config
        self.task_dir = Path(loaded.config.task_dir)
        self._scan = scan if isinstance(scan, Scan) else Scan.of(scan)
        #: The tasks' bodies: held inline, or kept by the parse cache this load read and
        #: read from there on first use (a listing never reads one); the stores it opens
        #: close when the repository goes.
        self.bodies: Bodies = self._scan.bodies
        self._merged = merged
        #: What the caches answer about ``tasks`` and ``archived`` without decoding them.
        self.cache = CacheView(self._scan, merged)
        #: The repository's worktrees when the overlay is active, else ``None``.
        self.worktrees: WorktreeSet | None = merged.worktrees if merged is not None else None
        #: ``worktree.*`` findings: divergent terminal states, unreadable siblings.
        self.worktree_diagnostics: tuple[Diagnostic, ...] = (
            merged.problems + merged.overlaid.divergent if merged is not None else ()
        )
        #: The task directories (with their ignore lists) whose files make up what this
        #: repository shows: its own, then each sibling's that the overlay read.
        self.watched: tuple[tuple[Path, tuple[str, ...]], ...] = (
            (self.task_dir, self.config.ignore),
            *(merged.task_dirs if merged is not None else ()),
        )
        #: The task directory does not exist yet (a fresh clone: git keeps no empty
        #: folder): no tasks, and the first write creates it (see :meth:`absent_note`).
        self.absent = not self.task_dir.exists()

    def absent_note(self) -> Diagnostic | None:
        """The one note a read prints when the task directory does not exist yet."""
        if not self.absent:
            return None
        return Diagnostic(
            severity="warning",
            code="task.dir_absent",
            message=f"task directory {self.task_dir} does not exist yet: no tasks "
            "(the first add or sync creates it)",
            file=str(self.task_dir),
        )

    @cached_property
    def tasks(self) -> tuple[Task, ...]:
        """Active tasks, natural id order (with the overlay, as overlaid)."""
        if self._merged is not None:
            return self._merged.overlaid.tasks
        return self._scan.result.tasks

    @cached_property
    def archived(self) -> tuple[Task, ...]:
        """Archived tasks, natural id order (with the overlay, as overlaid)."""
        if self._merged is not None:
            return self._merged.overlaid.archived
        return self._scan.result.archived

    @property
    def broken(self) -> tuple[Diagnostic, ...]:
        """Task-like files that could not be read (error diagnostics)."""
        return self._scan.broken

    @cached_property
    def sibling_ids(self) -> frozenset[str]:
        """Every id a sibling worktree's files hold (with the overlay; else none)."""
        return self._merged.taken if self._merged is not None else frozenset()

    @cached_property
    def taken_ids(self) -> frozenset[str]:
        """Ids a new task must not take: this worktree's (broken files' included) and,
        with the overlay, its siblings' (a task made here would collide on merge). Only
        commands that create tasks ask, so it is not built for every read."""
        return self._scan.result.taken_ids | self.sibling_ids

    @property
    def config_diagnostics(self) -> tuple[Diagnostic, ...]:
        """Diagnostics of the config file and environment (errors and warnings)."""
        return self.loaded.diagnostics

    @property
    def all_tasks(self) -> tuple[Task, ...]:
        """Active then archived tasks."""
        return self.tasks + self.archived

    @cached_property
    def owners(self) -> tuple[Task, ...]:
        """The tasks that own their id: all of them, but in a Backlog.md layout the
        archived copies a live task's id shadows (``archive/tasks/``, whose ids Backlog.md
        lets a new task take again)."""
        if not self.config.layout.foreign:
            return self.all_tasks
        from tasktool.files.parsing.backlogmd import shadowed_files

        shadowed = shadowed_files(self.all_tasks)
        live = (task for task in self.all_tasks if task.file_path not in shadowed)
        return (*live, *self.drafts)

    def is_draft(self, task: Task) -> bool:
        """Whether the task is one of Backlog.md's drafts."""
        return any(draft is task for draft in self.drafts)

    @cached_property
    def by_id(self) -> Mapping[str, Task]:
        """Task per id; an active task wins over an archived copy, an earlier file over a later."""
        found: dict[str, Task] = {}
        for task in self.owners:
            found.setdefault(task.id, task)
        return found

    @property
    def ids(self) -> frozenset[str]:
        """Every id in use, active or archived."""
        return frozenset(self.by_id)

    @cached_property
    def copies(self) -> Mapping[str, tuple[str, ...]]:
        """The files of every id that more than one file holds (active or archived)."""
        files: dict[str, list[str]] = {}
        for task in self.owners:
            files.setdefault(task.id, []).append(task.file_path)
        return {task_id: tuple(paths) for task_id, paths in files.items() if len(paths) > 1}

    def get(self, task_id: str) -> Task:
        """The task with this id (in any of the layout's spellings: ``back-208`` is
        ``BACK-208``): ``task.not_found`` when no file holds it, and
        ``task.ambiguous_id`` when several do (acting on one copy would be a guess)."""
        task_id = self.resolve(task_id)
        task = self.by_id.get(task_id)
        if task is not None:
            # No two files share an id unless some id maps fewer tasks than there are.
            unique = len(self.by_id) == len(self.owners)
            paths = None if unique else self.copies.get(task_id)
            if paths:
                raise ambiguous_id(task_id, paths)
            return task
        raise self.missing(task_id)

    def resolve(self, task_id: str) -> str:
        """The id ``task_id`` names: in the layout's spelling (``back-208`` is ``BACK-208``),
        and a bare number the one id that is it but for leading zeros (``1`` names ``001``,
        as taskmd's commands take it) when no task has the number itself as its id."""
        layout = self.config.layout
        if layout.foreign:
            canonical = layout.canonical_id(task_id)
            return self._spellings.get(canonical.upper(), canonical)
        if task_id in self.by_id or not task_id.isdigit():
            return task_id
        return self.same_number(task_id) or task_id

    @cached_property
    def _spellings(self) -> Mapping[str, str]:
        """In another tool's layout: canonical id -> the id its task shows."""
        from tasktool.files.parsing.backlogmd import spellings

        return spellings((task.id for task in self.owners), self.config.layout)

    def same_number(self, task_id: str) -> str | None:
        """The one id that is ``task_id`` but for leading zeros (``1`` for ``001``, as
        taskmd's ``get 1`` finds it), or ``None`` (not a number, no such id, several)."""
        if not task_id.isdigit():
            return None
        number = int(task_id)
        found = {other for other in self.by_id if other.isdigit() and int(other) == number}
        return found.pop() if len(found) == 1 else None

    def missing(self, task_id: str) -> TaskToolError:
        """What :meth:`get` raises for an id that no task holds: ``task.broken`` when a file
        that cannot be read names it, else ``task.not_found``."""
        task_id = self.config.layout.canonical_id(task_id)
        for problem in self.broken:
            if problem.task_id == task_id:
                return TaskToolError(
                    f"task {task_id} is in a file that cannot be read: {problem.message}",
                    code="task.broken",
                )
        return task_not_found(task_id)

    def local(self, task_id: str) -> Task:
        """:meth:`get` for a writer: ``worktree.sibling_only`` when the task has no file in
        this worktree (mutations write only the current worktree's files)."""
        task = self.get(task_id)
        if task.sibling_only:
            where = f"branch {task.branch}" if task.branch else "a detached HEAD"
            raise TaskToolError(
                f"task {task_id} exists only in the worktree {task.worktree} ({where}); "
                "edit it there, or merge that branch first",
                code="worktree.sibling_only",
                details={"worktree": task.worktree, "branch": task.branch},
            )
        return task

    @cached_property
    def graph(self) -> TaskGraph:
        """Dependents, children and what is blocked or actionable (built on first use)."""
        from tasktool.planning.graph import build_graph  # not needed by list, which starts faster

        return build_graph(self.all_tasks, ordered=True)

    def worklog_path(self, task_id: str, *, holder: Task | None = None) -> Path:
        """Where the task's worklog is (it may not exist yet); ``task.invalid_id`` for an id
        that cannot name a file safely. ``holder``: the task :meth:`get` returns for this
        id, when the caller has it (found without decoding every task).

        taskmd keeps a ``.worklogs/`` folder next to the task files of each group folder
        and leaves it there when it archives a task; this tool's default is
        ``<task dir>/.worklogs/``. An existing file wins: the task's own folder's, then
        the folder an archived task was archived from, then the root's, then the one
        ``.worklogs/<id>.md`` anywhere in the tree when exactly one exists (a worklog
        written beside another group's tasks). A new one goes next to the task when its
        folder already has a ``.worklogs/`` folder, else to the root.
        """
        if not is_safe_id(task_id):
            raise TaskToolError(
                f"id {task_id!r} cannot name a worklog file", code="task.invalid_id"
            )
        name = f"{task_id}.md"
        root = self.task_dir / WORKLOG_DIR / name
        task = holder or self.by_id.get(task_id)
        if task is None:
            return root
        folder = Path(task.file_path).parent
        local = folder / WORKLOG_DIR / name
        places = [local, root]
        below = folder.is_relative_to(self.task_dir)
        if task.archived and below and ARCHIVE_DIR in folder.relative_to(self.task_dir).parts:
            places.insert(1, active_place(self.task_dir, folder) / WORKLOG_DIR / name)
        for place in places:
            if place.exists():
                return place
        elsewhere = self.worklog_files.get(name, ())
        if len(elsewhere) == 1:
            return elsewhere[0]
        return local if local.parent.is_dir() else root

    @cached_property
    def walked_folders(self) -> Sequence[str]:
        """Every folder the scan entered (absolute paths), known without decoding a task;
        walked again only for a scan made elsewhere."""
        folders = self._scan.folders
        if folders is None:
            folders = [folder.path for folder, _ in walk(self.task_dir, self.config.ignore)]
        return folders

    @cached_property
    def worklog_files(self) -> Mapping[str, tuple[Path, ...]]:
        """Every ``.worklogs/<name>.md`` file in the folders the scan entered, by name:
        one listing per folder, made once per run and only when a worklog is not where a
        task's own folders keep it (a lookup per task would walk the tree each time)."""
        found: dict[str, list[Path]] = {}
        for folder in self.walked_folders:
            logs = os.path.join(folder, WORKLOG_DIR)
            try:
                with os.scandir(logs) as entries:
                    names = [e.name for e in entries if e.name.endswith(".md") and e.is_file()]
            except OSError:  # no such folder (the usual case), or not readable
                continue
            for entry in names:
                found.setdefault(entry, []).append(Path(logs, entry))
        return {entry: tuple(paths) for entry, paths in found.items()}


def active_place(task_dir: Path, path: Path) -> Path:
    """Where an archived file or folder belongs among the active ones: its path without
    the innermost ``archive`` folder (``tasks/archive/cli/7.md`` and
    ``tasks/cli/archive/7.md`` both give ``tasks/cli/7.md``)."""
    parts = list(path.relative_to(task_dir).parts)
    del parts[len(parts) - 1 - parts[::-1].index(ARCHIVE_DIR)]
    return task_dir.joinpath(*parts)


class CacheView:
    """What the caches answer about a repository's tasks without decoding every one::

    repo.cache.identity          # the same identity, the same tasks (None: not known)
    repo.cache.id_table()        # the parse cache's columns of ids (get_index reads them)
    repo.cache.tasks_at([0, 7])  # all_tasks at these positions, read alone
    """

    def __init__(self, scan: Scan, merged: Merged | None) -> None:
        self._scan = scan
        self._merged = merged

    @property
    def identity(self) -> bytes | None:
        """What identifies ``tasks`` and ``archived``: the parse cache's identity when it
        holds every file as it is (with the overlay, the overlay memo's key, which holds
        it); ``None`` when not known (a file changed a moment ago, no cache). A memo of
        what is derived from them keys on it, and a command that recalls one never has
        the tasks decoded."""
        return self._scan.identity if self._merged is None else self._merged.key

    @property
    def new(self) -> bool:
        """Whether :attr:`identity` names a parse cache this load wrote (or is writing):
        nothing can be kept under it yet, so a memo is not looked up."""
        return self._merged is None and self._scan.new

    def id_table(self) -> IdTable | None:
        """The parse cache's columns of ids, placed in ``all_tasks`` (see
        :meth:`Scan.id_table <tasktool.files.scanning.scan.Scan.id_table>`): ``None`` unless the
        tasks are the cache's rows as this run read them (it parsed no file, and no
        sibling worktree is overlaid), or when the rows no longer read."""
        return self._scan.id_table() if self._merged is None else None

    def tasks_at(self, positions: Sequence[int]) -> list[Task] | None:
        """``all_tasks`` at these positions; while the tasks are
        not decoded, read alone from the parse cache. ``None`` when a position is out of
        range or the cache changed since this run read it."""
        if self._merged is not None:
            overlaid = self._merged.overlaid
            return at_positions(overlaid.tasks, overlaid.archived, positions)
        return self._scan.tasks_at(positions)


def ambiguous_id(task_id: str, paths: Sequence[str]) -> TaskToolError:
    """What :meth:`Repository.get` raises for an id that the files at ``paths`` all hold."""
    return TaskToolError(
        f"task {task_id} is in {len(paths)} files: {', '.join(paths)}; "
        "run 'tasktool deduplicate' to renumber the copies",
        code="task.ambiguous_id",
    )


def load_context(
    overrides: Overrides | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    tolerant: bool = False,
    use_cache: bool = True,
) -> Repository:
    """Load the config and scan the task directory.

    Unless ``tolerant`` (``validate``), a rejected config raises its first error.
    A task directory that does not exist yet gives a repository without tasks
    (:attr:`Repository.absent`; nothing is created by reading it); a task directory
    path that is not a directory raises ``task.dir_missing``.
    """
    loaded = load_config(overrides, cwd=cwd, env=env, home=home)
    if not tolerant:
        loaded.require_valid()
    root = Path(loaded.config.task_dir)
    if not root.exists():
        return Repository(loaded, ScanResult(tasks=(), archived=(), broken=()))
    if not root.is_dir():
        raise TaskToolError(f"task directory {root} is not a directory", code="task.dir_missing")
    if loaded.config.layout.foreign:
        return _foreign(loaded, root, use_cache=use_cache)
    found = discover_worktrees(root) if loaded.config.worktree_scope == "unified" else None
    scan = scan_source(root, loaded.config.ignore, use_cache=use_cache)
    if found is None or not found.siblings:
        return Repository(loaded, scan)
    # Imported only with siblings: a single worktree pays nothing for the overlay.
    from tasktool.planning.worktrees.siblings import SiblingReader

    reader = SiblingReader.of(found, loaded, overrides, env=env, home=home, use_cache=use_cache)
    return Repository(loaded, scan, merged=reader.merge(scan.result, scan.identity))


def _foreign(loaded: LoadedConfig, root: Path, *, use_cache: bool) -> Repository:
    """The repository of a Backlog.md layout: its files read the parse cache's way, then
    placed and spelled as Backlog.md reads them (:mod:`tasktool.files.parsing.backlogmd`); no
    worktree overlay (Backlog.md looks at other branches its own way)."""
    from tasktool.files.parsing.backlogmd import lenient_note, normalized_scan

    layout = loaded.config.layout
    scan = scan_source(root, loaded.config.ignore, use_cache=use_cache)
    result, drafts = normalized_scan(scan.result, layout, root, scan.bodies)
    note = lenient_note((*result.tasks, *result.archived))
    notes = (note,) if note is not None else ()
    return Repository(loaded, result, notes=notes, drafts=drafts)


class Loader(Protocol):
    """Where a long-running front end (web server, MCP server, export) gets its tasks.

    Called once per request, so every answer reflects the files on disk now (the
    dashboard keeps a large repository's load while its change feed reports no change).
    Each load goes through :func:`load_context`, so it merges sibling git worktrees
    (the overlay) exactly as the CLI's read commands do.
    """

    def __call__(self, *, tolerant: bool = False) -> Repository: ...


def loader(overrides: Overrides | None = None) -> Loader:
    """A :class:`Loader` over :func:`load_context` with these global overrides."""

    def load(*, tolerant: bool = False) -> Repository:
        return load_context(overrides, tolerant=tolerant)

    return load


class Invocation(Protocol):
    """What a front end's command needs of the CLI's global options (``ctx.obj``)."""

    def overrides(self) -> Overrides: ...

    def warn(self, message: str) -> None: ...


def serving_loader(
    overrides: Overrides | None, warn: Callable[[str], None]
) -> tuple[Loader, Repository]:
    """For a front end that serves the tasks (web, export, MCP): its :class:`Loader` and a
    first load, which says when the config is taskmd's, warns about broken task files
    and a task directory not made yet (none of it when quiet: ``-q``, ``quiet``), and
    refuses (``config.next.*``) when the config's ``next`` section is malformed, since
    ``next`` is among what it serves."""
    load = loader(overrides)
    repo = load()
    repo.loaded.require_next_config()
    if repo.config.quiet:
        return load, repo
    notice = taskmd_notice(repo.loaded.file)
    if notice is not None:
        warn(notice)
    note = repo.absent_note()
    for problem in (*repo.broken, *([note] if note else [])):
        warn(f"{problem.message} [{problem.code}]")
    return load, repo
