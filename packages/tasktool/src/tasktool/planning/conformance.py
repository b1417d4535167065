"""Task values against the configuration: phases, scopes and the effort vocabulary.

The seed's rules: with phases configured, a task ``phase`` matching no phase id
is a warning; with scopes configured, a ``touches`` value matching no scope is
a warning (the scope descriptions are named in the message); with an effort
vocabulary, a value outside it is an error. Without phases or scopes, every
value is accepted silently. ``validate`` reports these with the config's own
diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tasktool.model.config import Config
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.task import Task

__all__ = ["conformance_diagnostics", "conforming"]


def _scope_list(config: Config) -> str:
    scopes = config.scopes or {}
    return ", ".join(
        f"{name} ({scope.description})" if scope.description else name
        for name, scope in scopes.items()
    )


def conforming(config: Config) -> Callable[[Task], bool]:
    """A test of one task: the configuration knows every value it holds (nothing to
    report). The common case, in one expression."""
    phase_ids = {phase.id for phase in config.phases}
    scopes = config.scopes
    effort = frozenset(config.effort)

    def conforms(task: Task) -> bool:
        return (
            (not phase_ids or task.phase is None or task.phase in phase_ids)
            and (scopes is None or all(map(scopes.__contains__, task.touches)))
            and (task.effort is None or task.effort in effort)
        )

    return conforms


def conformance_diagnostics(tasks: Iterable[Task], config: Config) -> list[Diagnostic]:
    """Every task value that the configuration does not know, in task order."""
    phase_ids = {phase.id for phase in config.phases}
    conforms = conforming(config)
    found: list[Diagnostic] = []
    for task in tasks:
        if not conforms(task):
            found.extend(_task_diagnostics(task, config, phase_ids))
    return found


def _task_diagnostics(task: Task, config: Config, phase_ids: set[str]) -> list[Diagnostic]:
    where = {"file": task.file_path or None, "task_id": task.id}
    found: list[Diagnostic] = []
    if phase_ids and task.phase is not None and task.phase not in phase_ids:
        found.append(
            Diagnostic(
                severity="warning",
                code="task.unknown_phase",
                message=f"task {task.id}: phase {task.phase!r} matches no configured "
                f"phase id ({', '.join(phase.id for phase in config.phases)})",
                **where,
            )
        )
    if config.scopes is not None:
        found.extend(
            Diagnostic(
                severity="warning",
                code="task.unknown_scope",
                message=f"task {task.id}: touches {scope!r}, which matches no configured "
                f"scope ({_scope_list(config) or 'none'})",
                **where,
            )
            for scope in task.touches
            if scope not in config.scopes
        )
    if task.effort is not None and task.effort not in config.effort:
        found.append(
            Diagnostic(
                severity="error",
                code="task.invalid_effort",
                message=f"task {task.id}: effort {task.effort!r} is not in the effort list "
                f"({', '.join(config.effort)})",
                **where,
            )
        )
    return found
