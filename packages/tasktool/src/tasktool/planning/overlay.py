"""The worktree overlay: each task's effective status across a repository's worktrees.

Pure: it takes the tasks each worktree's files hold and returns what the current
worktree's read commands show (docs/tasktool.md, "Git worktrees")::

    result = overlay(local_tasks, local_archived, [SiblingTasks(...), ...], mtime=...)
    result.tasks, result.archived   # effective tasks (provenance on the winners)
    result.divergent                # completed in one copy, cancelled in another

Rules:

- a task's effective status is the most advanced of its copies (pending < blocked <
  in-progress < in-review < cancelled < completed), with the copy's
  ``completed_at``/``cancelled_at``; every other field stays the current worktree's;
- when the current worktree's copy is among the most advanced, it stands (the status
  is the same either way); among sibling copies only, the newest file wins;
- a divergence (completed in one copy, cancelled in another) is reported for every
  task whose copies disagree that way;
- a sibling's winning copy sets ``worktree``/``branch`` on the task; a task with no
  copy here is added from the first sibling holding it, marked ``sibling_only``;
- :func:`claimed_elsewhere` is what ``next`` skips: sibling-only tasks (they cannot be
  worked on here) and tasks in progress or further along in a sibling.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, Protocol

import msgspec

from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import STATUS_ORDER, Status, Task, natural_key

_IN_PROGRESS = STATUS_ORDER[Status.IN_PROGRESS.value]
_TERMINAL = frozenset({Status.COMPLETED.value, Status.CANCELLED.value})


class Copy(Protocol):
    """What the overlay reads of a sibling's task: a ``Task``, or the cut-down
    ``tasktool.files.sibling_index.IndexedCopy`` read from a sibling's index."""

    @property
    def id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def completed_at(self) -> str | None: ...
    @property
    def cancelled_at(self) -> str | None: ...
    @property
    def archived(self) -> bool: ...
    @property
    def file_path(self) -> str: ...


class SiblingTasks(NamedTuple):
    """What one sibling worktree's task directory holds: ``(id, status)`` of each id's
    first copy (an active copy before an archived one, the first file before later ones;
    each id once; iterated once), and on demand that copy and the whole task behind it
    (for a task only this sibling has)."""

    worktree: str
    branch: str | None
    statuses: Iterable[tuple[str, str]]
    copy: Callable[[str], Copy]
    #: The whole task behind an id's copy; ``None``: its file no longer holds it.
    load: Callable[[str], Task | None]

    @classmethod
    def of_tasks(
        cls, worktree: str, branch: str | None, tasks: Iterable[Copy], archived: Iterable[Copy] = ()
    ) -> SiblingTasks:
        """From every task of the sibling (the full scan's result)."""
        first = _first_copies((*tasks, *archived))
        statuses = [(task_id, copy.status) for task_id, copy in first.items()]

        def load(task_id: str) -> Task | None:
            whole = first[task_id]
            return whole if isinstance(whole, Task) else None

        return cls(worktree, branch, statuses, first.__getitem__, load)


class OverlayResult(msgspec.Struct, frozen=True, kw_only=True):
    tasks: tuple[Task, ...]
    archived: tuple[Task, ...]
    divergent: tuple[Diagnostic, ...] = ()


def _order(task: Task) -> tuple[object, ...]:
    """The scan's order: natural id, then file."""
    return (natural_key(task.id), task.file_path)


def _rank(task: Copy) -> int:
    return STATUS_ORDER.get(task.status, -1)


def _first_copies(copies: Iterable[Copy]) -> dict[str, Copy]:
    """One copy per id: the first (an active copy before an archived one, the first file
    before later ones). Built backwards so that earlier copies overwrite later ones."""
    return {copy.id: copy for copy in reversed(list(copies))}


def _with_provenance(task: Task, source: Copy, sibling: SiblingTasks, *, only: bool) -> Task:
    return msgspec.structs.replace(
        task,
        status=source.status,
        completed_at=source.completed_at,
        cancelled_at=source.cancelled_at,
        worktree=sibling.worktree,
        branch=sibling.branch,
        sibling_only=only,
    )


def _winner(
    candidates: list[tuple[Copy, SiblingTasks]], mtime: Callable[[str], float]
) -> tuple[Copy, SiblingTasks]:
    if len(candidates) == 1:
        return candidates[0]
    return max(candidates, key=lambda pair: mtime(pair[0].file_path))


def _divergence(task_id: str, where: Iterable[tuple[str, str]]) -> Diagnostic:
    described = ", ".join(f"{status} in {place}" for place, status in where)
    return Diagnostic(
        severity="warning",
        code="worktree.divergent",
        message=f"task {task_id} has divergent terminal states across worktrees: {described}",
        task_id=task_id,
    )


def overlay(
    tasks: Sequence[Task],
    archived: Sequence[Task],
    siblings: Sequence[SiblingTasks],
    *,
    mtime: Callable[[str], float],
    here: str = "this worktree",
) -> OverlayResult:
    """The effective tasks of the current worktree (see the module docstring).

    ``mtime(file_path)`` is asked only to break a tie between sibling copies.
    """
    local_first: dict[str, Task] = {task.id: task for task in reversed((*tasks, *archived))}

    # Only copies whose status differs from this worktree's can change anything: collect
    # them (one dict lookup and one string comparison per sibling task), then decide.
    differing: dict[str, list[tuple[Copy, SiblingTasks]]] = {}
    only_in_siblings: dict[str, list[tuple[Copy, SiblingTasks]]] = {}
    for sibling in siblings:
        for task_id, status in sibling.statuses:
            mine = local_first.get(task_id)
            if mine is None:
                only_in_siblings.setdefault(task_id, []).append((sibling.copy(task_id), sibling))
            elif status != mine.status:
                differing.setdefault(task_id, []).append((sibling.copy(task_id), sibling))

    winners: dict[str, tuple[Copy, SiblingTasks]] = {}  # id -> the sibling copy that wins
    divergent: list[Diagnostic] = []
    for task_id, others in differing.items():
        mine = local_first[task_id]
        terminal = [(here, mine.status)] if mine.status in _TERMINAL else []
        terminal += [(s.worktree, c.status) for c, s in others if c.status in _TERMINAL]
        if len({status for _, status in terminal}) > 1:
            divergent.append(_divergence(task_id, sorted(terminal)))
        best = max(_rank(copy) for copy, _ in others)
        if best > _rank(mine):
            top = [(copy, sibling) for copy, sibling in others if _rank(copy) == best]
            winners[task_id] = _winner(top, mtime)

    def effective(local: Sequence[Task]) -> list[Task]:
        if not winners:
            return list(local)
        return [
            _with_provenance(task, *winners[task.id], only=False) if task.id in winners else task
            for task in local
        ]

    if not winners and not only_in_siblings:  # the common case: nothing to rebuild
        return OverlayResult(
            tasks=tuple(tasks), archived=tuple(archived), divergent=tuple(divergent)
        )
    effective_tasks = effective(tasks)
    effective_archived = effective(archived)
    for task_id, holders in only_in_siblings.items():
        best = max(_rank(copy) for copy, _ in holders)
        winner, owner = _winner([h for h in holders if _rank(h[0]) == best], mtime)
        whole = owner.load(task_id)
        if whole is None:
            continue  # removed since it was scanned
        shown = _with_provenance(whole, winner, owner, only=True)
        # Both lists are in scan order: insert in place (few tasks; no re-sort of 10,000).
        insort(effective_archived if winner.archived else effective_tasks, shown, key=_order)
        ends = sorted((s.worktree, c.status) for c, s in holders if c.status in _TERMINAL)
        if len({status for _, status in ends}) > 1:
            divergent.append(_divergence(task_id, ends))
    return OverlayResult(
        tasks=tuple(effective_tasks),
        archived=tuple(effective_archived),
        divergent=tuple(divergent),
    )


def claimed_elsewhere(task: Task) -> bool:
    """Not for ``next`` here: it exists only in a sibling, or a sibling's copy is in
    progress or further along (marking a task in-progress claims it repository-wide)."""
    return task.worktree is not None and (task.sibling_only or _rank(task) >= _IN_PROGRESS)
