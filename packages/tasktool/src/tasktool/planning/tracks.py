"""``tracks``: actionable work split into sets that can proceed at the same time.

A track is a set of actionable tasks none of which touch the same scope.
Tasks are placed greedily, in ``next`` rank order, into the first track where
none of their ``touches`` is taken yet; tasks sharing a scope therefore land
in separate tracks, and track 1 is what a team can start now. Tasks without
``touches`` can go anywhere and are listed as flexible. When ``scopes`` is
configured, a ``touches`` value naming no configured scope is a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from tasktool.model.config import Config
from tasktool.model.task import Task
from tasktool.model.views import task_summary
from tasktool.planning.conformance import conformance_diagnostics
from tasktool.planning.graph import TaskGraph
from tasktool.planning.ranking import Ranked, score_candidates

__all__ = ["Track", "Tracks", "plan_tracks"]


class Track(msgspec.Struct, frozen=True, kw_only=True):
    """Tasks that can be worked at once; ``scopes`` are the ones they take."""

    id: int
    scopes: tuple[str, ...]
    tasks: tuple[Ranked, ...]


_TRACK_KEYS = ("id", "title", "priority", "effort", "phase", "touches")


class Tracks(msgspec.Struct, frozen=True, kw_only=True):
    """The result of ``tracks``."""

    tracks: tuple[Track, ...]
    flexible: tuple[Ranked, ...]
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"tracks": [{"id", "scopes", "tasks"}], "flexible": [...], "warnings": [...]}``."""
        return {
            "tracks": [
                {
                    "id": track.id,
                    "scopes": list(track.scopes),
                    "tasks": [_task_json(item) for item in track.tasks],
                }
                for track in self.tracks
            ],
            "flexible": [_task_json(item) for item in self.flexible],
            "warnings": list(self.warnings),
        }


def _task_json(item: Ranked) -> dict[str, Any]:
    return {
        **task_summary(item.task, _TRACK_KEYS),
        "score": item.score,
        "file_path": item.task.file_path,
    }


def plan_tracks(
    tasks: Sequence[Task] | TaskGraph,
    config: Config,
    *,
    strict_phases: bool = True,
) -> Tracks:
    """Place every actionable task into the first track its scopes fit."""
    ranked = score_candidates(tasks, config, strict_phases=strict_phases)
    warnings = [
        diagnostic.message
        for diagnostic in conformance_diagnostics([item.task for item in ranked], config)
        if diagnostic.code == "task.unknown_scope"
    ]
    placed: list[list[Ranked]] = []
    taken: dict[str, set[int]] = {}
    # Per scope, a lower bound on its first free track: occupancy only grows,
    # so the bound only moves up and placement stays near-linear.
    first_free: dict[str, int] = {}
    flexible: list[Ranked] = []
    for item in ranked:
        scopes = tuple(dict.fromkeys(item.task.touches))
        if not scopes:
            flexible.append(item)
            continue
        for scope in scopes:
            occupied = taken.setdefault(scope, set())
            free = first_free.get(scope, 0)
            while free in occupied:
                free += 1
            first_free[scope] = free
        track = max(first_free[scope] for scope in scopes)
        while any(track in taken[scope] for scope in scopes):
            track += 1
        for scope in scopes:
            taken[scope].add(track)
        if track == len(placed):
            placed.append([])
        placed[track].append(item)
    return Tracks(
        tracks=tuple(
            Track(
                id=number,
                scopes=tuple(sorted({scope for item in items for scope in item.task.touches})),
                tasks=tuple(items),
            )
            for number, items in enumerate(placed, start=1)
        ),
        flexible=tuple(flexible),
        warnings=tuple(warnings),
    )
