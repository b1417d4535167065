"""Diagnostics: configuration and task problems as values, not exceptions.

The config loader and the task checks produce them once; ``validate`` shows
them all, and commands that cannot run under an error refuse with them.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["Diagnostic", "Severity"]

Severity = Literal["error", "warning"]


class Diagnostic(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """One problem: a stable dotted ``code`` (``config.effort.duplicate``) and a message."""

    severity: Severity
    code: str
    message: str
    file: str | None = None
    task_id: str | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == "error"
