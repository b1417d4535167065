"""Reading the sibling worktrees of the current one and merging them in (``unified``).

Each sibling's task directory comes from that sibling's own config: its copy of the
config file this run loaded (same place in the worktree), else the first config found
upwards from that place in the sibling. ``--task-dir``, or a run without a project
file in the worktree, mirrors this run's task directory into the sibling. A sibling
whose config cannot be read, or whose task directory is outside it, is left out with
a ``worktree.sibling_unreadable`` warning (shown by ``validate``); a sibling without
the task directory has nothing to merge. Statuses are read from each sibling's parse
cache when it is current (:mod:`tasktool.files.statuses`), else by the full scan.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from mtcommon import CodedError
from tasktool.config import LoadedConfig, Overrides, find_config, load_config
from tasktool.files.scan import ScanResult, read_entry, scan_tasks
from tasktool.files.statuses import scan_statuses
from tasktool.files.worktrees import Worktree, WorktreeSet, discover_worktrees
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.errors import TaskToolError
from tasktool.model.task import Task
from tasktool.planning.overlay import Copy, OverlayResult, SiblingTasks, overlay


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


class SiblingReader(NamedTuple):
    """The sibling worktrees found, and what reading each of them needs. Siblings are read
    one after the other: threads were tried and lose, since the scans' many short ``stat``
    calls each give up the GIL and then queue for it (a convoy)."""

    worktrees: WorktreeSet
    config: LoadedConfig
    overrides: Overrides
    env: Mapping[str, str]
    home: Path | None
    ignore: tuple[str, ...]
    use_cache: bool

    def task_dir(self, worktree: Worktree) -> tuple[Path, tuple[str, ...]]:
        """The sibling's task directory and ignore list (raises ``CodedError`` when its
        config is bad): from the sibling's copy of the config file this run loaded, or
        the config found from that copy's folder when the sibling has no such file; the
        mirrored task directory when ``--task-dir`` was given or no project file is used."""
        current = Path(self.worktrees.current.path)
        sibling = Path(worktree.path)
        task_dir = Path(self.config.settings.task_dir)
        config = Path(self.config.file) if self.config.file is not None else None
        mirrored_config = _mirror(config, current, sibling) if config is not None else None
        if mirrored_config is not None and not mirrored_config.is_file():
            start = mirrored_config.parent
            mirrored_config = find_config(start if start.is_dir() else sibling, None)
        if self.overrides.task_dir is not None or mirrored_config is None:
            mirrored = _mirror(task_dir, current, sibling)
            if mirrored is None:
                raise TaskToolError(
                    f"the task directory {task_dir} is outside this worktree",
                    code="worktree.sibling_unreadable",
                )
            return mirrored, self.ignore
        loaded = load_config(Overrides(config=str(mirrored_config)), env=self.env, home=self.home)
        return Path(loaded.settings.task_dir), loaded.settings.ignore

    def read(self, worktree: Worktree) -> SiblingTasks | Diagnostic | None:
        """One sibling's tasks, the warning that leaves it out, or ``None`` (no task dir)."""
        try:
            task_dir, ignore = self.task_dir(worktree)
        except CodedError as exc:
            return _unreadable(worktree, f"{exc.message} [{exc.code}]")
        if _mirror(task_dir, Path(worktree.path), Path(worktree.path)) is None:
            return _unreadable(worktree, f"its task directory {task_dir} is outside it")
        if not task_dir.is_dir():
            return None  # the branch has no task directory (yet): nothing to merge
        statuses = scan_statuses(task_dir, ignore) if self.use_cache else None
        if statuses is None:  # no current cache: the full scan, which writes one
            scan = scan_tasks(task_dir, ignore, use_cache=self.use_cache)
            return SiblingTasks(worktree.path, worktree.branch, scan.tasks, scan.archived)
        root = str(task_dir)

        def load(copy: Copy) -> Task | None:
            whole = read_entry(root, copy.file_path)
            return whole if isinstance(whole, Task) else None

        return SiblingTasks(
            worktree.path,
            worktree.branch,
            [copy for copy in statuses if not copy.archived],
            [copy for copy in statuses if copy.archived],
            load,
        )

    def merge(self, scan: ScanResult) -> Merged:
        """Read every sibling and overlay them on this worktree's ``scan``."""
        siblings: list[SiblingTasks] = []
        problems: list[Diagnostic] = []
        for worktree in self.worktrees.siblings:
            result = self.read(worktree)
            if isinstance(result, SiblingTasks):
                siblings.append(result)
            elif isinstance(result, Diagnostic):
                problems.append(result)
        here = self.worktrees.current.path
        merged = overlay(scan.tasks, scan.archived, siblings, mtime=_mtime, here=here)
        return Merged(self.worktrees, merged, tuple(problems))


def find_siblings(
    config: LoadedConfig,
    overrides: Overrides | None,
    *,
    env: Mapping[str, str] | None,
    home: Path | None,
    use_cache: bool,
) -> SiblingReader | None:
    """The sibling worktrees of the task directory's repository, ready to be read;
    ``None`` when it is in no git repository or in its only worktree."""
    found = discover_worktrees(Path(config.settings.task_dir))
    if found is None or not found.siblings:
        return None
    return SiblingReader(
        worktrees=found,
        config=config,
        overrides=overrides or Overrides(),
        env=os.environ if env is None else env,
        home=home,
        ignore=config.settings.ignore,
        use_cache=use_cache,
    )
