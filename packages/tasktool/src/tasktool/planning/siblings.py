"""Reading the sibling worktrees of the current one and merging them in (``unified``).

Each sibling's task directory comes from that sibling's own config: the config is
looked up from the sibling's copy of the current directory (its top folder when that
copy does not exist), or from the sibling's copy of ``--config``; ``--task-dir`` is
mirrored the same way. A sibling whose config cannot be read, or whose task directory
is missing or outside the sibling, is left out with a ``worktree.sibling_unreadable``
warning (shown by ``validate``). Siblings are scanned with the parse cache, so a warm
run re-parses only the files that changed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from mtcommon import CodedError
from tasktool.config import LoadedConfig, Overrides, load_config
from tasktool.files.scan import ScanResult, scan_tasks
from tasktool.files.worktrees import Worktree, WorktreeSet, discover_worktrees
from tasktool.model.diagnostics import Diagnostic
from tasktool.planning.overlay import OverlayResult, SiblingTasks, overlay


class Merged(NamedTuple):
    """The overlay's result, the worktrees it read, and the siblings it left out."""

    worktrees: WorktreeSet
    overlaid: OverlayResult
    problems: tuple[Diagnostic, ...]


def _mirror(path: Path, current: Path, sibling: Path) -> Path | None:
    """``path`` (inside the current worktree) at the same place in ``sibling``."""
    try:
        relative = path.absolute().relative_to(current)
    except ValueError:
        return None
    return sibling / relative


def _sibling_dir(
    worktree: Worktree,
    *,
    current: Path,
    overrides: Overrides,
    cwd: Path,
    env: Mapping[str, str],
    home: Path | None,
    ignore: tuple[str, ...],
) -> tuple[Path, tuple[str, ...]]:
    """The sibling's task directory and ignore list (raises ``CodedError`` when its config
    is bad)."""
    sibling = Path(worktree.path)
    if overrides.task_dir is not None:
        mirrored = _mirror(cwd / overrides.task_dir, current, sibling)
        if mirrored is not None:
            return mirrored, ignore
    config = None
    if overrides.config is not None:
        config = _mirror(cwd / overrides.config, current, sibling)
    start = _mirror(cwd, current, sibling)
    if start is None or not start.is_dir():
        start = sibling
    loaded = load_config(
        Overrides(config=str(config) if config is not None else None),
        cwd=start,
        env=env,
        home=home,
    )
    return Path(loaded.settings.task_dir), loaded.settings.ignore


def _unreadable(worktree: Worktree, reason: str) -> Diagnostic:
    return Diagnostic(
        severity="warning",
        code="worktree.sibling_unreadable",
        message=f"sibling worktree {worktree.path} left out of the overlay: {reason}",
        file=worktree.path,
    )


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def merge_siblings(
    config: LoadedConfig,
    scan: ScanResult,
    overrides: Overrides | None,
    *,
    cwd: Path | None,
    env: Mapping[str, str] | None,
    home: Path | None,
    use_cache: bool,
) -> Merged | None:
    """The effective statuses of every sibling worktree merged into ``scan``; ``None`` when
    the task directory is in no git repository or in its only worktree."""
    root = Path(config.settings.task_dir)
    found = discover_worktrees(root)
    if found is None or not found.siblings:
        return None
    overrides = overrides or Overrides()
    cwd = Path.cwd() if cwd is None else cwd
    env = os.environ if env is None else env
    current = Path(found.current.path)
    siblings: list[SiblingTasks] = []
    problems: list[Diagnostic] = []
    for worktree in found.siblings:
        try:
            task_dir, ignore = _sibling_dir(
                worktree,
                current=current,
                overrides=overrides,
                cwd=cwd,
                env=env,
                home=home,
                ignore=config.settings.ignore,
            )
        except CodedError as exc:
            problems.append(_unreadable(worktree, f"{exc.message} [{exc.code}]"))
            continue
        if _mirror(task_dir, Path(worktree.path), Path(worktree.path)) is None:
            problems.append(_unreadable(worktree, f"its task directory {task_dir} is outside it"))
            continue
        if not task_dir.is_dir():
            continue  # the branch has no task directory (yet): nothing to merge
        sibling_scan = scan_tasks(task_dir, ignore, use_cache=use_cache)
        siblings.append(
            SiblingTasks(
                worktree=worktree.path,
                branch=worktree.branch,
                tasks=sibling_scan.tasks,
                archived=sibling_scan.archived,
            )
        )
    merged = overlay(scan.tasks, scan.archived, siblings, mtime=_mtime, here=str(current))
    return Merged(found, merged, tuple(problems))
