"""Task values against phases, scopes and the effort vocabulary."""

from __future__ import annotations

from tasktool.model.config import Config, Phase, Scope
from tasktool.model.task import Task
from tasktool.planning.conformance import conformance_diagnostics

TASK = Task(
    id="1", title="t", phase="later", touches=("api", "ui"), effort="huge", file_path="/t/1.md"
)


def codes(config: Config) -> list[str]:
    return [d.code for d in conformance_diagnostics([TASK], config)]


def test_without_phases_or_scopes_values_are_accepted() -> None:
    assert codes(Config(effort=("huge",))) == []


def test_unmatched_phase_and_scope_warn() -> None:
    config = Config(
        phases=(Phase(id="now", name="Now"),),
        scopes={"api": Scope(description="The HTTP API")},
        effort=("huge",),
    )
    found = conformance_diagnostics([TASK], config)
    assert [(d.code, d.severity) for d in found] == [
        ("task.unknown_phase", "warning"),
        ("task.unknown_scope", "warning"),
    ]
    assert "'ui'" in found[1].message
    assert "The HTTP API" in found[1].message
    assert (found[0].file, found[0].task_id) == ("/t/1.md", "1")


def test_effort_outside_the_vocabulary_is_an_error() -> None:
    found = conformance_diagnostics([TASK], Config())
    assert [(d.code, d.severity) for d in found] == [("task.invalid_effort", "error")]
