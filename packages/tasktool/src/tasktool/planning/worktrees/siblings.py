"""Reading the sibling worktrees of the current one and merging them in (``unified``).

Each sibling's task directory comes from that sibling's own config: its copy of the
config file this run loaded (same place in the worktree), else the first config found
upwards from that place in the sibling. ``--task-dir``, or a run without a project
file in the worktree, mirrors this run's task directory into the sibling. A sibling
whose config cannot be read, or whose task directory is outside it, is left out with
a ``worktree.sibling_unreadable`` warning (shown by ``validate``); a sibling without
the task directory has nothing to merge. Statuses come from each sibling's index
(:mod:`tasktool.files.caches.sibling_index`, kept in this worktree's state directory), which
costs one ``stat`` per sibling file and folder while nothing changed there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from mtcommon import CodedError
from tasktool.config import LoadedConfig, Overrides, find_config, load_config
from tasktool.files.caches.sibling_index import SiblingIndex, index_path, prune_indexes, read_index
from tasktool.files.scanning.scan import ScanResult
from tasktool.files.scanning.worktrees import Worktree, WorktreeSet
from tasktool.model.diagnostics import Diagnostic
from tasktool.model.errors import TaskToolError
from tasktool.planning.memos.overlay_memo import memo_key, memo_path, recall, remember
from tasktool.planning.worktrees.overlay import OverlayResult, SiblingTasks, Verdict, apply, verdict

__all__ = ["Merged", "SiblingRead", "SiblingReader"]


class SiblingRead(msgspec.Struct, frozen=True):
    """One sibling read: its task directory and ignore list, and its index."""

    task_dir: Path
    ignore: tuple[str, ...]
    source: SiblingIndex

    def tasks(self, worktree: Worktree) -> SiblingTasks:
        """What the overlay reads of this sibling, ``worktree``."""
        index = self.source
        return SiblingTasks(
            worktree.path, worktree.branch, index.ids, index.statuses, index.copy, index.load
        )


class Merged(msgspec.Struct, frozen=True):
    """The overlay's result, the worktrees it read, the siblings it left out, and what
    was read of each of the others."""

    worktrees: WorktreeSet
    overlaid: OverlayResult
    problems: tuple[Diagnostic, ...]
    reads: tuple[SiblingRead, ...]
    #: The overlay memo's key: what identifies ``overlaid`` (``None``: not known).
    key: bytes | None = None

    @property
    def taken(self) -> frozenset[str]:
        """Every id a sibling's files hold (a new task here must not take one)."""
        return frozenset[str]().union(*(read.source.taken for read in self.reads))

    @property
    def task_dirs(self) -> tuple[tuple[Path, tuple[str, ...]], ...]:
        """Each sibling task directory read, with its ignore list."""
        return tuple((read.task_dir, read.ignore) for read in self.reads)


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


class SiblingReader(msgspec.Struct, frozen=True):
    """The sibling worktrees found, and what reading each of them needs. Siblings are read
    one after the other: threads were tried and lose, since the scans' many short ``stat``
    calls each give up the GIL and then queue for it (a convoy)."""

    worktrees: WorktreeSet
    loaded: LoadedConfig
    overrides: Overrides
    env: Mapping[str, str]
    home: Path | None
    ignore: tuple[str, ...]
    use_cache: bool

    @classmethod
    def of(
        cls,
        found: WorktreeSet,
        loaded: LoadedConfig,
        overrides: Overrides | None,
        *,
        env: Mapping[str, str] | None,
        home: Path | None,
        use_cache: bool,
    ) -> SiblingReader:
        """The reader of ``found``'s siblings, for the run whose config is ``loaded``."""
        return cls(
            worktrees=found,
            loaded=loaded,
            overrides=overrides or Overrides(),
            env=os.environ if env is None else env,
            home=home,
            ignore=loaded.config.ignore,
            use_cache=use_cache,
        )

    def task_dir(self, worktree: Worktree) -> tuple[Path, tuple[str, ...]]:
        """The sibling's task directory and ignore list (raises ``CodedError`` when its
        config is bad): from the sibling's copy of the config file this run loaded, or
        the config found from that copy's folder when the sibling has no such file; the
        mirrored task directory when ``--task-dir`` was given or no project file is used."""
        current = Path(self.worktrees.current.path)
        sibling = Path(worktree.path)
        task_dir = Path(self.loaded.config.task_dir)
        file = Path(self.loaded.file) if self.loaded.file is not None else None
        mirrored_config = _mirror(file, current, sibling) if file is not None else None
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
        theirs = load_config(Overrides(config=str(mirrored_config)), env=self.env, home=self.home)
        return Path(theirs.config.task_dir), theirs.config.ignore

    def read(self, worktree: Worktree) -> SiblingRead | Diagnostic | None:
        """One sibling's index, the warning that leaves it out, or ``None`` (no task dir)."""
        try:
            task_dir, ignore = self.task_dir(worktree)
        except CodedError as exc:
            return _unreadable(worktree, f"{exc.message} [{exc.code}]")
        if _mirror(task_dir, Path(worktree.path), Path(worktree.path)) is None:
            return _unreadable(worktree, f"its task directory {task_dir} is outside it")
        if not task_dir.is_dir():
            return None  # the branch has no task directory (yet): nothing to merge
        store = index_path(self.state_root, task_dir, ignore)
        index = read_index(task_dir, ignore, store, use_cache=self.use_cache)
        return SiblingRead(task_dir, ignore, index)

    @property
    def state_root(self) -> Path:
        """The current worktree's task directory, whose state directory holds the indexes."""
        return Path(self.loaded.config.task_dir)

    def merge(self, scan: ScanResult, source: bytes | None = None) -> Merged:
        """Read every sibling and overlay them on this worktree's ``scan``; ``source`` is
        the identity of the parse-cache content that gave it, if any (the memo's key)."""
        reads, problems = self.read_all()
        merged, key = self.overlaid(scan, source, reads)
        return Merged(self.worktrees, merged, problems, tuple(read for _, read in reads), key)

    def read_all(self) -> tuple[list[tuple[Worktree, SiblingRead]], tuple[Diagnostic, ...]]:
        """Each sibling read (with its worktree), and the warnings that left others out."""
        reads: list[tuple[Worktree, SiblingRead]] = []
        problems: list[Diagnostic] = []
        for worktree in self.worktrees.siblings:
            result = self.read(worktree)
            if isinstance(result, SiblingRead):
                reads.append((worktree, result))
            elif isinstance(result, Diagnostic):
                problems.append(result)
        return reads, tuple(problems)

    def overlaid(
        self, scan: ScanResult, source: bytes | None, reads: list[tuple[Worktree, SiblingRead]]
    ) -> tuple[OverlayResult, bytes | None]:
        """The overlay of ``reads`` on ``scan``: the remembered verdict when ``source``
        (see :meth:`merge`) and every sibling index are those it was found for, else
        computed (and remembered); and the memo's key (``None`` without ``source``)."""
        memo = memo_path(self.state_root)
        key = self._key(source, reads) if source is not None and self.use_cache else None
        size = len(scan.tasks) + len(scan.archived)
        found = recall(memo, key, size=size) if key is not None else None
        if found is None:
            found = self._verdict(scan, reads)
            if key is not None and source is not None:
                # Keyed again: reading a sibling's columns may have rebuilt its index.
                key = self._key(source, reads)
                if key is not None:
                    remember(memo, key, found)
        if self.use_cache:
            prune_indexes(self.state_root, [read.source.store for _, read in reads])
        return apply(scan.tasks, scan.archived, found), key

    def _key(self, source: bytes, reads: list[tuple[Worktree, SiblingRead]]) -> bytes | None:
        """The memo's key of the overlay of this worktree's ``source`` and these reads;
        ``None`` while a sibling's index has no identity (a file there changed a moment ago)."""
        identities = [read.source.identity for _, read in reads]
        if None in identities:
            return None
        siblings = [
            (worktree.path, worktree.branch, str(read.task_dir), read.ignore, identity)
            for (worktree, read), identity in zip(reads, identities, strict=True)
            if identity is not None
        ]
        return memo_key(self.worktrees.current.path, source, siblings)

    def _verdict(self, scan: ScanResult, reads: list[tuple[Worktree, SiblingRead]]) -> Verdict:
        """The overlay's verdict, computed (the memo did not have it)."""
        siblings = [read.tasks(worktree) for worktree, read in reads]
        here = self.worktrees.current.path
        broken = frozenset(d.task_id for d in scan.broken if d.task_id is not None)
        found = verdict(scan.tasks, scan.archived, siblings, mtime=_mtime, here=here, broken=broken)
        for _, read in reads:
            read.source.save()  # the whole tasks the overlay loaded, for the next run
        return found
