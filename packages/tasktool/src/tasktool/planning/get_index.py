"""``get`` from the parse cache's columns of ids: a warm ``get`` decodes the rows of the
task and its children alone instead of every task's (decoding them all and indexing them
by id was half of a warm ``get``: docs/architecture.md, "Caches").

Each folder's columns (:mod:`tasktool.files.caches.id_columns`) are written with its rows file,
so no run builds them but the one that writes the rows (a cold scan's cost, not a
``get``'s). They find the rows holding an id (the copies of the task, its dependents, its
children) by ``str.find``; which copy of an id is the first (what ``get`` and the graph
take), and the order of the answers, are the result's, which the cache's head holds.

A ``get`` that parsed files (the first run after an edit) takes the full path, as does a
``get`` with sibling worktrees overlaid (the tasks shown are not the rows), of an id that
is empty or holds a separator, or when a folder's ids, dependencies or parents hold one
(or a task's id is empty). With the columns, ``get`` reads the rows it shows alone
(:meth:`CacheView.tasks_at <tasktool.planning.repository.CacheView.tasks_at>`) and
raises what :meth:`Repository.get <tasktool.planning.repository.Repository.get>` raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from tasktool.files.caches.id_columns import ARCHIVED, COMPLETED, ITEM, TASK, IdTable
from tasktool.model.task import Task
from tasktool.planning.repository import ambiguous_id

if TYPE_CHECKING:
    from tasktool.planning.repository import Repository

__all__ = ["Found", "lookup"]


class _Index:
    """The columns answering in the result's positions, as the graph would."""

    def __init__(self, table: IdTable) -> None:
        self._table = table
        self._first: dict[str, int | None] = {}

    def holders(self, task_id: str) -> list[int]:
        """The positions of the tasks with this id, in order."""
        holders = self._positions(self._table.rows("ids", ITEM, task_id))
        self._first[task_id] = holders[0] if holders else None
        return holders

    def first(self, task_id: str) -> int | None:
        """The position of the first task with this id (the one ``by_id`` gives)."""
        if task_id not in self._first:
            self.holders(task_id)
        return self._first[task_id]

    def dependents(self, task_id: str) -> list[str]:
        """The ids of the active tasks that depend on ``task_id`` (of an id several hold,
        the first copy counts), in order: as the graph's ``dependents``."""
        rows = self._table.rows("dependencies", TASK, task_id)
        return [self.id_at(at) for at in self._counted(rows)]

    def children(self, task_id: str) -> list[int]:
        """The positions of the active tasks whose parent is ``task_id`` (of an id several
        hold, the first copy counts), in order: as the graph's ``children``."""
        return self._counted(self._table.rows("parents", ITEM, task_id))

    def met(self, task_id: str) -> bool:
        """The task this id names (active, else archived) is completed (as the graph)."""
        at = self.first(task_id)
        return at is not None and bool(self._table.flags(self._table.row(at)) & COMPLETED)

    def id_at(self, position: int) -> str:
        return self._table.id_at(self._table.row(position))

    def _counted(self, rows: list[int]) -> list[int]:
        """The positions of those rows' tasks that are active and the first copy of their
        id, in order."""
        active = [row for row in rows if not self._table.flags(row) & ARCHIVED]
        return [at for at in self._positions(active) if self.first(self.id_at(at)) == at]

    def _positions(self, rows: list[int]) -> list[int]:
        positions: list[int] = []
        for row in rows:
            position = self._table.position(row)
            if position is None:
                raise _Stale
            positions.append(position)
        return sorted(positions)


class _Stale(Exception):
    """The columns name a row that holds no task: they do not describe these rows."""


class Found(msgspec.Struct, frozen=True, gc=False):
    """What ``get`` shows of an id: its task, the ids of its
    dependents, its children, and its unmet dependencies."""

    task: Task
    dependents: list[str]
    children: list[Task]
    unmet: list[str]


def _same_number(repo: Repository, table: IdTable, number: str) -> str:
    """The one id that is ``number`` but for leading zeros (``get 1`` of ``001``), as
    :meth:`Repository.resolve <tasktool.planning.repository.Repository.resolve>` finds
    it, else ``number``."""
    if repo.config.layout.foreign:
        return number
    found = table.numbered(number)
    return found.pop() if len(found) == 1 else number


def lookup(repo: Repository, task_id: str) -> Found | None:
    """:meth:`Repository.get <tasktool.planning.repository.Repository.get>` of ``task_id``
    (it raises the same errors) with what ``get`` shows beside the task, from the
    columns of ids; ``None`` when they do not apply, or the cache no longer reads as it
    says: the caller takes the full path."""
    if not task_id or ITEM in task_id or TASK in task_id:
        return None
    table = repo.cache.id_table()
    if table is None or not table.clean:
        return None
    index = _Index(table)
    try:
        holders = index.holders(task_id)
        if not holders and task_id.isdigit():
            task_id = _same_number(repo, table, task_id)
            holders = index.holders(task_id)
        if not holders:
            raise repo.missing(task_id)
        positions = [*holders, *index.children(task_id)]
        found = repo.cache.tasks_at(positions)
        if found is None or [task.id for task in found] != list(map(index.id_at, positions)):
            return None
        if len(holders) > 1:
            raise ambiguous_id(task_id, [task.file_path for task in found[: len(holders)]])
        task = found[0]
        unmet = [dep for dep in task.dependencies if not index.met(dep)]
        return Found(task, index.dependents(task_id), found[1:], unmet)
    except _Stale:
        return None
