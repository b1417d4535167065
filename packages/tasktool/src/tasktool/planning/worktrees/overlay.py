"""The worktree overlay: each task's effective status across a repository's worktrees.

Pure: it takes the tasks each worktree's files hold and returns what the current
worktree's read commands show (docs/tasktool.md, "Git worktrees")::

    result = overlay(local_tasks, local_archived, [SiblingTasks(...), ...], mtime=...)
    result.tasks, result.archived   # effective tasks (provenance on the winners)
    result.divergent                # completed in one copy, cancelled in another

``overlay`` is :func:`apply` of a :func:`verdict`: the verdict (what the siblings change,
plain data) depends only on this worktree's scan result and the siblings' files, so a
run whose inputs are unchanged can take it from the previous run's memo
(:mod:`tasktool.planning.memos.overlay_memo`) and only apply it.

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
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import attrgetter, ne
from typing import Protocol

import msgspec

from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import STATUS_ORDER, Status, Task, natural_key

__all__ = [
    "Added",
    "Copy",
    "OverlayResult",
    "Provenance",
    "SiblingTasks",
    "Verdict",
    "Won",
    "apply",
    "claimed_elsewhere",
    "overlay",
    "verdict",
]

_IN_PROGRESS = STATUS_ORDER[Status.IN_PROGRESS.value]
_TERMINAL = frozenset({Status.COMPLETED.value, Status.CANCELLED.value})
_ID: Callable[[Task], str] = attrgetter("id")
_STATUS: Callable[[Task], str] = attrgetter("status")


class Copy(Protocol):
    """What the overlay reads of a sibling's task: a ``Task``, or the cut-down
    ``tasktool.files.caches.sibling_index.IndexedCopy`` read from a sibling's index."""

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


class SiblingTasks(msgspec.Struct, frozen=True):
    """What one sibling worktree's task directory holds: the id and status of each id's
    first copy (an active copy before an archived one, the first file before later ones;
    each id once), as two columns of the same length, and on demand the copy in a row
    and the whole task behind it (for a task only this sibling has)."""

    worktree: str
    branch: str | None
    ids: Sequence[str]
    statuses: Sequence[str]
    copy: Callable[[int], Copy]
    #: The whole task behind a row's copy; ``None``: its file no longer holds it.
    load: Callable[[int], Task | None]

    @classmethod
    def of_tasks(
        cls, worktree: str, branch: str | None, tasks: Iterable[Copy], archived: Iterable[Copy] = ()
    ) -> SiblingTasks:
        """From every task of the sibling (the full scan's result)."""
        first = list(_first_copies((*tasks, *archived)).values())

        def load(row: int) -> Task | None:
            whole = first[row]
            return whole if isinstance(whole, Task) else None

        ids = [copy.id for copy in first]
        return cls(worktree, branch, ids, [copy.status for copy in first], first.__getitem__, load)


class _Held(msgspec.Struct, frozen=True):
    """A sibling's copy of a task, the sibling, and the copy's row there."""

    copy: Copy
    sibling: SiblingTasks
    row: int


class OverlayResult(msgspec.Struct, frozen=True, kw_only=True):
    tasks: tuple[Task, ...]
    archived: tuple[Task, ...]
    divergent: tuple[Diagnostic, ...] = ()


class Provenance(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """What a sibling's winning copy brings to the task shown: its status and stamps, and
    the sibling's worktree and branch."""

    status: str
    completed_at: str | None
    cancelled_at: str | None
    worktree: str
    branch: str | None

    @classmethod
    def of(cls, held: _Held) -> Provenance:
        copy, sibling = held.copy, held.sibling
        return cls(
            copy.status, copy.completed_at, copy.cancelled_at, sibling.worktree, sibling.branch
        )

    def on(self, task: Task, *, only: bool) -> Task:
        """``task`` as shown with this provenance (``only``: no copy of it here)."""
        return msgspec.structs.replace(
            task,
            status=self.status,
            completed_at=self.completed_at,
            cancelled_at=self.cancelled_at,
            worktree=self.worktree,
            branch=self.branch,
            sibling_only=only,
        )


class Won(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A task of this worktree whose status a sibling's copy gives: its position in
    ``tasks + archived`` and what the winning copy brings."""

    at: int
    source: Provenance


class Added(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A task only siblings hold (provenance set) and whether it goes among the archived."""

    archived: bool
    task: Task


class Verdict(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """What the siblings change in this worktree's scan result: the tasks whose status a
    sibling gives, the tasks only siblings hold (provenance set, each put in order among
    the active or the archived tasks) and the divergences. Plain data: it is what the
    memo (:mod:`tasktool.planning.memos.overlay_memo`) keeps between runs."""

    won: tuple[Won, ...] = ()
    added: tuple[Added, ...] = ()
    divergent: tuple[Diagnostic, ...] = ()


def _order(task: Task) -> tuple[object, ...]:
    """The scan's order: natural id, then file."""
    return (natural_key(task.id), task.file_path)


def _rank(task: Copy) -> int:
    return STATUS_ORDER.get(task.status, -1)


def _marked(flags: list[bool]) -> Iterator[int]:
    """The positions of the (few) true flags, each found by a C search of the list."""
    at = -1
    while True:
        try:
            at = flags.index(True, at + 1)
        except ValueError:
            return
        yield at


def _ended(held: _Held) -> bool:
    return held.copy.status in _TERMINAL


def _first_copies(copies: Iterable[Copy]) -> dict[str, Copy]:
    """One copy per id: the first (an active copy before an archived one, the first file
    before later ones). Built backwards so that earlier copies overwrite later ones."""
    return {copy.id: copy for copy in reversed(list(copies))}


def _winner(candidates: list[_Held], mtime: Callable[[str], float]) -> _Held:
    if len(candidates) == 1:
        return candidates[0]
    return max(candidates, key=lambda held: mtime(held.copy.file_path))


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
    broken: frozenset[str] = frozenset(),
) -> OverlayResult:
    """The effective tasks of the current worktree (see the module docstring).

    ``mtime(file_path)`` is asked only to break a tie between sibling copies.
    """
    found = verdict(tasks, archived, siblings, mtime=mtime, here=here, broken=broken)
    return apply(tasks, archived, found)


def verdict(
    tasks: Sequence[Task],
    archived: Sequence[Task],
    siblings: Sequence[SiblingTasks],
    *,
    mtime: Callable[[str], float],
    here: str = "this worktree",
    broken: frozenset[str] = frozenset(),
) -> Verdict:
    """What the siblings change in ``tasks``/``archived`` (:func:`apply` applies it).

    ``broken`` holds the ids of this worktree's task files that did not load (a merge
    conflict, bad YAML): the task is here, so a sibling's copy neither stands in for it
    nor changes it; its file's error is what this worktree reports, as when isolated.
    """
    local = (*tasks, *archived)
    local_ids = list(map(_ID, local))
    # Backwards, so that each id's first copy (an active one before an archived one) stands.
    local_status = dict(zip(reversed(local_ids), map(_STATUS, reversed(local)), strict=True))

    # Only copies whose status differs from this worktree's can change anything: find their
    # rows column-wise (C loops over ids and statuses, no Python code per sibling task),
    # then decide. A sibling id unknown here differs too (``None`` is no status).
    differing: dict[str, list[_Held]] = {}
    only_in_siblings: dict[str, list[_Held]] = {}
    for sibling in siblings:
        ids = sibling.ids
        for row in _marked(list(map(ne, map(local_status.get, ids), sibling.statuses))):
            if ids[row] in local_status:
                where = differing
            elif ids[row] in broken:
                continue
            else:
                where = only_in_siblings
            where.setdefault(ids[row], []).append(_Held(sibling.copy(row), sibling, row))

    winners: dict[str, _Held] = {}  # id -> the sibling copy that wins
    divergent: list[Diagnostic] = []
    for task_id, others in differing.items():
        status = local_status[task_id]
        terminal = [(here, status)] if status in _TERMINAL else []
        terminal += [(h.sibling.worktree, h.copy.status) for h in others if _ended(h)]
        if len({status for _, status in terminal}) > 1:
            divergent.append(_divergence(task_id, sorted(terminal)))
        best = max(_rank(held.copy) for held in others)
        if best > STATUS_ORDER.get(status, -1):
            winners[task_id] = _winner([h for h in others if _rank(h.copy) == best], mtime)

    marked = _marked(list(map(winners.__contains__, local_ids)))
    won = [Won(at, Provenance.of(winners[local_ids[at]])) for at in marked]
    added: list[Added] = []
    for task_id, holders in only_in_siblings.items():
        best = max(_rank(held.copy) for held in holders)
        winner = _winner([h for h in holders if _rank(h.copy) == best], mtime)
        whole = winner.sibling.load(winner.row)
        if whole is None:
            continue  # removed since it was scanned
        added.append(Added(winner.copy.archived, Provenance.of(winner).on(whole, only=True)))
        ends = sorted((h.sibling.worktree, h.copy.status) for h in holders if _ended(h))
        if len({status for _, status in ends}) > 1:
            divergent.append(_divergence(task_id, ends))
    return Verdict(tuple(won), tuple(added), tuple(divergent))


def apply(tasks: Sequence[Task], archived: Sequence[Task], verdict: Verdict) -> OverlayResult:
    """The effective tasks: ``tasks``/``archived`` (the scan result ``verdict`` was found
    for) with each won status replaced and the tasks only siblings hold inserted."""
    if not verdict.won and not verdict.added:  # the common case: nothing to rebuild
        return OverlayResult(
            tasks=tuple(tasks), archived=tuple(archived), divergent=verdict.divergent
        )
    effective = [*tasks, *archived]
    for won in verdict.won:
        effective[won.at] = won.source.on(effective[won.at], only=False)
    effective_tasks, effective_archived = effective[: len(tasks)], effective[len(tasks) :]
    for added in verdict.added:
        # Both lists are in scan order: insert in place (few tasks; no re-sort of 10,000).
        insort(effective_archived if added.archived else effective_tasks, added.task, key=_order)
    return OverlayResult(
        tasks=tuple(effective_tasks),
        archived=tuple(effective_archived),
        divergent=verdict.divergent,
    )


def claimed_elsewhere(task: Task) -> bool:
    """Not for ``next`` here: it exists only in a sibling, or a sibling's copy is in
    progress or further along (marking a task in-progress claims it repository-wide)."""
    return task.worktree is not None and (task.sibling_only or _rank(task) >= _IN_PROGRESS)
