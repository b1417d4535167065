"""What a sync run did, per item and per source, as plain values (``--format json``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from tasktool.sync.mapping import Unmapped

Action = Literal["created", "updated", "unchanged", "conflict", "error"]
ConflictMode = Literal["skip", "remote", "local"]
CONFLICT_MODES: tuple[ConflictMode, ...] = ("skip", "remote", "local")
COUNTED: tuple[Action, ...] = ("created", "updated", "unchanged", "conflict", "error")


class Outcome(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One item's fate. ``note`` says why (a conflict's resolution, an error's message)."""

    external_id: str
    action: Action
    task_id: str | None = None
    file: str | None = None
    note: str | None = None
    code: str | None = None


class SourceReport(msgspec.Struct, kw_only=True):
    """One source's items, the values ``field_map`` lacked, and the items the source no
    longer returns (reported, never deleted)."""

    name: str
    kind: str
    outcomes: list[Outcome] = msgspec.field(default_factory=list)
    unmapped: list[Unmapped] = msgspec.field(default_factory=list)
    removed_remotely: list[str] = msgspec.field(default_factory=list)
    error: str | None = None
    error_code: str | None = None
    retries: int = 0

    def count(self, action: Action) -> int:
        return sum(1 for outcome in self.outcomes if outcome.action == action)

    @property
    def errors(self) -> int:
        """Failed items, plus one when the source itself failed."""
        return self.count("error") + (1 if self.error else 0)


class SyncReport(msgspec.Struct, kw_only=True):
    """The whole run."""

    dry_run: bool
    conflict_mode: ConflictMode
    sources: list[SourceReport] = msgspec.field(default_factory=list)

    def totals(self) -> dict[str, int]:
        """``created, updated, unchanged, conflicts, errors`` over every source."""
        return {
            "created": sum(s.count("created") for s in self.sources),
            "updated": sum(s.count("updated") for s in self.sources),
            "unchanged": sum(s.count("unchanged") for s in self.sources),
            "conflicts": sum(s.count("conflict") for s in self.sources),
            "errors": sum(s.errors for s in self.sources),
        }

    def summary(self) -> str:
        """``created N, updated N, unchanged N, conflicts N, errors N``."""
        return ", ".join(f"{key} {value}" for key, value in self.totals().items())

    def as_data(self) -> dict[str, object]:
        """The report for ``--format json``: totals first, then each source."""
        return {
            "dry_run": self.dry_run,
            "conflict_mode": self.conflict_mode,
            "totals": self.totals(),
            "sources": msgspec.to_builtins(self.sources),
        }


__all__ = [
    "CONFLICT_MODES",
    "Action",
    "ConflictMode",
    "Outcome",
    "SourceReport",
    "SyncReport",
]
