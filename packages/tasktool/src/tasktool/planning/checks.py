"""``validate``: every task check, merged with the config and file diagnostics.

Task checks (codes are stable; the ones marked * come from
:mod:`tasktool.planning.conformance`, shared with the writers):

============================  =======  =============================================
code                          level    condition
============================  =======  =============================================
``task.missing_id``           error    blank ``id``
``task.missing_title``        error    blank ``title``
``task.invalid_id``           error    an id that cannot name a file (``a/b``)
``task.invalid_status``       error    status outside the six statuses
``task.invalid_priority``     error    priority outside low..critical
``task.invalid_type``         error    type outside feature/bug/improvement/chore/docs
``task.invalid_date``         warning  a date field that is not ``YYYY-MM-DD...``
``task.duplicate_id``         error    one id in several files (all paths listed)
``task.missing_dependency``   error    a dependency id that exists nowhere
``task.missing_parent``       error    a parent id that exists nowhere
``task.dependency_cycle``     error    dependencies that loop (the loop printed)
``task.parent_cycle``         error    parents that loop (the loop printed)
``task.invalid_effort`` *     error    effort outside the configured vocabulary
``task.unknown_phase`` *      warning  phase matching no configured phase id
``task.unknown_scope`` *      warning  touches matching no configured scope
============================  =======  =============================================

Archived tasks are checked like active ones (their dangling dependencies and parents
too). Every check is one pass over the tasks (cycles: a peel, then Tarjan on the rest).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec

from tasktool.files.parsing.taskfile import is_safe_id
from tasktool.model.config import Config
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task, natural_key
from tasktool.model.vocabulary import DATE_FIELDS, INVALID_CODE, field_values, is_date
from tasktool.planning.conformance import conformance_diagnostics, conforming
from tasktool.planning.graph import TaskGraph, build_graph

__all__ = ["ValidationReport", "build_report", "check_tasks"]


class ValidationReport(msgspec.Struct, frozen=True, kw_only=True):
    """Errors and warnings of one ``validate`` run."""

    errors: tuple[Diagnostic, ...]
    warnings: tuple[Diagnostic, ...]

    @property
    def valid(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        """``{"valid", "errors": [...], "warnings": [...]}``; items omit ``severity``."""
        return {
            "valid": self.valid,
            "errors": [_item(d) for d in self.errors],
            "warnings": [_item(d) for d in self.warnings],
        }


def _item(diagnostic: Diagnostic) -> dict[str, Any]:
    item: dict[str, Any] = {"code": diagnostic.code, "message": diagnostic.message}
    if diagnostic.file is not None:
        item["file"] = diagnostic.file
    if diagnostic.task_id is not None:
        item["task_id"] = diagnostic.task_id
    return item


def build_report(*groups: Iterable[Diagnostic]) -> ValidationReport:
    """Split diagnostics (config, files, tasks, in that order) into errors and warnings."""
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    for group in groups:
        for diagnostic in group:
            (errors if diagnostic.is_error else warnings).append(diagnostic)
    return ValidationReport(errors=tuple(errors), warnings=tuple(warnings))


def _error(code: str, message: str, task: Task) -> Diagnostic:
    return Diagnostic(
        severity="error", code=code, message=message, file=task.file_path, task_id=task.id
    )


def _warning(code: str, message: str, task: Task) -> Diagnostic:
    return Diagnostic(
        severity="warning", code=code, message=message, file=task.file_path, task_id=task.id
    )


#: Closed fields checked here; effort is checked with phases and scopes (conformance).
_CHECKED = ("status", "priority", "type")


def _field_checks(task: Task, allowed: dict[str, tuple[str, ...]]) -> Iterable[Diagnostic]:
    for field, code in (("id", "task.missing_id"), ("title", "task.missing_title")):
        if not getattr(task, field).strip():
            yield _error(code, f"required field {field} is blank", task)
    if task.id.strip() and not is_safe_id(task.id):
        message = (
            f"id {task.id!r} cannot name a file (worklog, lock, page): use letters, digits, "
            "'.', '_' and '-' (add --id refuses it too)"
        )
        yield _error("task.invalid_id", message, task)
    label = f"task {task.id}"
    for field in _CHECKED:
        value = getattr(task, field)
        if value is not None and value not in allowed[field]:
            message = f"{label}: {field} {value!r} is not one of {', '.join(allowed[field])}"
            yield _error(INVALID_CODE[field], message, task)
    for field in DATE_FIELDS:
        value = getattr(task, field)
        if value is not None and not is_date(value):
            message = f"{label}: {field} {value!r} is not a YYYY-MM-DD date"
            yield _warning("task.invalid_date", message, task)


def _cycle_error(code: str, kind: str, cycle: list[str], first: Task) -> Diagnostic:
    return _error(code, f"{kind} cycle: {' -> '.join(cycle)}", first)


def _clean_test(allowed: dict[str, tuple[str, ...]]) -> Callable[[Task], bool]:
    """A test of one task: every field check would pass (the common case, in one
    expression over local names: it runs for each task)."""
    statuses, priorities, types = (frozenset(allowed[field]) for field in _CHECKED)

    def clean(task: Task) -> bool:
        return (
            task.status in statuses
            and (task.priority is None or task.priority in priorities)
            and (task.type is None or task.type in types)
            and (task.created_at is None or is_date(task.created_at))
            and (task.completed_at is None or is_date(task.completed_at))
            and (task.cancelled_at is None or is_date(task.cancelled_at))
            and bool(task.title.strip())
            and bool(task.id.strip())
            and is_safe_id(task.id)
        )

    return clean


def _duplicates(tasks: Iterable[Task]) -> list[Diagnostic]:
    """One error per id held by several files (active or archived), in first-seen order."""
    holders: dict[str, list[Task]] = {}
    for task in tasks:
        holders.setdefault(task.id, []).append(task)
    found = []
    for same in holders.values():
        if len(same) > 1:
            same.sort(key=lambda task: task.file_path)
            files = ", ".join(task.file_path for task in same)
            message = f"duplicate id {same[0].id} in {len(same)} files: {files}"
            found.append(_error("task.duplicate_id", message, same[0]))
    return found


def _owners(tasks: Sequence[Task], config: Config) -> Sequence[Task]:
    """The tasks that own their id: all but, in a Backlog.md layout, the archived copies
    a live task's id shadows (:func:`tasktool.files.parsing.backlogmd.shadowed_files`)."""
    if not config.layout.foreign:
        return tasks
    from tasktool.files.parsing.backlogmd import shadowed_files

    shadowed = shadowed_files(tasks)
    return [task for task in tasks if task.file_path not in shadowed]


def check_tasks(tasks: Sequence[Task] | TaskGraph, config: Config) -> list[Diagnostic]:
    """Every task check, in natural id order, then cycles.

    Pass the repository's graph when there is one (built once per run); its
    ``all_tasks`` are the tasks checked.
    """
    graph = tasks if isinstance(tasks, TaskGraph) else build_graph(tasks)
    every = graph.all_tasks
    allowed = {field: field_values(field, config) or () for field in _CHECKED}
    clean = _clean_test(allowed)
    by_id, archived = graph.by_id, graph.archived
    conforms = conforming(config)
    nonconforming: list[Task] = []  # checked against the config after the rest, as before
    diagnostics: list[Diagnostic] = []
    for task in every:  # one pass: each pass over every task costs
        if not clean(task):
            diagnostics.extend(_field_checks(task, allowed))
        if not conforms(task):
            nonconforming.append(task)
        # An archived task's too, as a warning: its history should hold, but nothing
        # left to do waits on it.
        dangling = _warning if task.archived else _error
        for dep in task.dependencies:
            if dep not in by_id and dep not in archived:
                message = f"task {task.id} depends on {dep}, which does not exist"
                diagnostics.append(dangling("task.missing_dependency", message, task))
        parent = task.parent
        if parent is not None and parent not in by_id and parent not in archived:
            message = f"task {task.id} has parent {parent}, which does not exist"
            diagnostics.append(dangling("task.missing_parent", message, task))
    # Some id is in several files when fewer ids exist than files.
    if len(by_id) + len(archived.keys() - by_id.keys()) < len(every):
        diagnostics.extend(_duplicates(_owners(every, config)))
    diagnostics.extend(conformance_diagnostics(nonconforming, config))
    diagnostics.sort(key=lambda d: natural_key(d.task_id or ""))
    for cycle in graph.dependency_cycles():
        diagnostics.append(
            _cycle_error("task.dependency_cycle", "dependency", cycle, by_id[cycle[0]])
        )
    for cycle in graph.parent_cycles():
        diagnostics.append(_cycle_error("task.parent_cycle", "parent", cycle, by_id[cycle[0]]))
    return diagnostics
