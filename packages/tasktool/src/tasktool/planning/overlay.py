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
- a sibling's winning copy sets ``worktree``/``branch`` on the task; a task with no
  copy here is added from the first sibling holding it, marked ``sibling_only``;
- :func:`claimed_elsewhere` is what ``next`` skips: sibling-only tasks (they cannot be
  worked on here) and tasks in progress or further along in a sibling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import msgspec

from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import STATUS_ORDER, Status, Task, natural_key

_IN_PROGRESS = STATUS_ORDER[Status.IN_PROGRESS.value]
_TERMINAL = frozenset({Status.COMPLETED.value, Status.CANCELLED.value})


class SiblingTasks(msgspec.Struct, frozen=True, kw_only=True):
    """What one sibling worktree's task directory holds."""

    worktree: str
    branch: str | None
    tasks: tuple[Task, ...]
    archived: tuple[Task, ...] = ()


class OverlayResult(msgspec.Struct, frozen=True, kw_only=True):
    tasks: tuple[Task, ...]
    archived: tuple[Task, ...]
    divergent: tuple[Diagnostic, ...] = ()


def _order(task: Task) -> tuple[object, ...]:
    """The scan's order: natural id, then file."""
    return (natural_key(task.id), task.file_path)


def _rank(task: Task) -> int:
    return STATUS_ORDER.get(task.status, -1)


def _first_copies(sibling: SiblingTasks) -> dict[str, Task]:
    """One copy per id (an active copy over an archived one, the first file over later)."""
    copies: dict[str, Task] = {}
    for task in (*sibling.tasks, *sibling.archived):
        copies.setdefault(task.id, task)
    return copies


def _with_provenance(task: Task, source: Task, sibling: SiblingTasks, *, only: bool) -> Task:
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
    candidates: list[tuple[Task, SiblingTasks]], mtime: Callable[[str], float]
) -> tuple[Task, SiblingTasks]:
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
    sibling_copies = [(sibling, _first_copies(sibling)) for sibling in siblings]
    local_first: dict[str, Task] = {}
    for task in (*tasks, *archived):
        local_first.setdefault(task.id, task)

    changed: dict[str, Task] = {}  # id -> effective copy (for every local task of that id)
    divergent: list[Diagnostic] = []
    for task_id, mine in local_first.items():
        best = _rank(mine)
        top: list[tuple[Task, SiblingTasks]] = []
        terminal: dict[str, str] = {}
        if mine.status in _TERMINAL:
            terminal[here] = mine.status
        for sibling, copies in sibling_copies:
            copy = copies.get(task_id)
            if copy is None:
                continue
            if copy.status in _TERMINAL:
                terminal[sibling.worktree] = copy.status
            rank = _rank(copy)
            if rank > best:
                best, top = rank, [(copy, sibling)]
            elif rank == best and top:
                top.append((copy, sibling))
        if len(set(terminal.values())) > 1:
            divergent.append(_divergence(task_id, sorted(terminal.items())))
        if top:
            copy, sibling = _winner(top, mtime)
            changed[task_id] = _with_provenance(mine, copy, sibling, only=False)

    def effective(local: Sequence[Task]) -> list[Task]:
        if not changed:
            return list(local)
        return [
            msgspec.structs.replace(changed[task.id], file_path=task.file_path, group=task.group)
            if task.id in changed
            else task
            for task in local
        ]

    effective_tasks = effective(tasks)
    effective_archived = effective(archived)
    added: set[str] = set()
    for _, copies in sibling_copies:
        for task_id in copies:
            if task_id in local_first or task_id in added:
                continue
            added.add(task_id)
            # The most advanced copy among the siblings that hold it.
            holders = [(c, s) for s, cs in sibling_copies if (c := cs.get(task_id)) is not None]
            best = max(_rank(c) for c, _ in holders)
            winner, owner = _winner([h for h in holders if _rank(h[0]) == best], mtime)
            shown = _with_provenance(winner, winner, owner, only=True)
            (effective_archived if winner.archived else effective_tasks).append(shown)
            terminal = {s.worktree: c.status for c, s in holders if c.status in _TERMINAL}
            if len(set(terminal.values())) > 1:
                divergent.append(_divergence(task_id, sorted(terminal.items())))
    if added:
        effective_tasks.sort(key=_order)
        effective_archived.sort(key=_order)
    return OverlayResult(
        tasks=tuple(effective_tasks),
        archived=tuple(effective_archived),
        divergent=tuple(divergent),
    )


def claimed_elsewhere(task: Task) -> bool:
    """Not for ``next`` here: it exists only in a sibling, or a sibling's copy is in
    progress or further along (marking a task in-progress claims it repository-wide)."""
    return task.worktree is not None and (task.sibling_only or _rank(task) >= _IN_PROGRESS)
