"""Change notification: one watcher over the task directories, many SSE listeners.

:class:`ChangeFeed` runs one ``watchfiles`` watcher (inotify on Linux, no
polling of 10,000 files) for the whole server, over the task directory and, with
the worktree overlay, each sibling worktree's task directory read at start (their
files change what the pages show). A batch of changes to task files (``.md``
files outside hidden directories, plus ``.worklogs/``) bumps a version number
once per debounce window; every ``/api/events`` stream waits for the version to
move and then tells its page to reload. The tool's own state directory
(``.tasktool/``: cache, sibling indexes and locks) is ignored, so a page
reloading (which may refresh the cache) never triggers itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from tasktool.files.scanning.scan import is_scanned_folder
from tasktool.model.extras import missing_extra
from tasktool.planning.repository import WORKLOG_DIR

__all__ = ["DEBOUNCE_MS", "ChangeFeed", "is_task_change"]

DEBOUNCE_MS = 200


def is_task_change(task_dir: Path, path: str, ignore: tuple[str, ...] = ()) -> bool:
    """A ``.md`` file in a folder the scan reads, or a worklog: worth a reload."""
    try:
        relative = Path(path).relative_to(task_dir)
    except ValueError:
        return False
    if relative.suffix != ".md":
        return False
    folder = relative.parent.as_posix()
    return folder in {".", WORKLOG_DIR} or is_scanned_folder(folder, ignore)


def _existing(folder: Path) -> Path:
    """``folder``, or its nearest existing parent: a task directory a fresh clone does not
    have yet is watched from there, so its first task file still reloads the pages."""
    while not folder.is_dir() and folder.parent != folder:
        folder = folder.parent
    return folder


class ChangeFeed:
    """A version number that moves when task files change on disk: those of ``task_dir``
    and of each ``(task directory, ignore list)`` in ``siblings``."""

    def __init__(
        self,
        task_dir: Path,
        ignore: tuple[str, ...] = (),
        siblings: Sequence[tuple[Path, tuple[str, ...]]] = (),
    ) -> None:
        self.watched = [(task_dir.resolve(), ignore)]
        self.watched += [(folder.resolve(), rules) for folder, rules in siblings]
        self.version = 0
        self._changed = asyncio.Condition()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.closed = False

    async def start(self) -> None:
        """Start watching; returns once the watcher is set up, or raises why it could not
        start (``tasktool.missing_extra`` without watchfiles), never waiting forever."""
        ready = asyncio.Event()
        self._task = asyncio.create_task(self._watch(ready))
        await ready.wait()
        if self._task.done():
            self._task.result()

    async def _watch(self, ready: asyncio.Event) -> None:
        def wanted(_change: object, path: str) -> bool:
            return any(is_task_change(folder, path, rules) for folder, rules in self.watched)

        try:  # everything inside: whatever fails must still set ``ready``
            try:
                from watchfiles import awatch
            except ImportError as exc:
                raise missing_extra("web", exc) from None
            watcher = awatch(
                *{_existing(folder) for folder, _ in self.watched},
                watch_filter=wanted,
                debounce=DEBOUNCE_MS,
                step=50,
                stop_event=self._stop,
                yield_on_timeout=True,
                rust_timeout=100,
            )
            async for changes in watcher:
                ready.set()  # the first (timeout) batch says the watcher is running
                if changes:
                    await self.bump()
        finally:
            ready.set()

    @property
    def running(self) -> bool:
        """The watcher is up: a change on disk will move :attr:`version`."""
        return self._task is not None and not self._task.done() and not self.closed

    async def bump(self) -> None:
        """Announce a change to every listener."""
        async with self._changed:
            self.version += 1
            self._changed.notify_all()

    async def wait(self, seen: int) -> int | None:
        """The version once it differs from ``seen``, or ``None`` once the feed is closed."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.version != seen or self.closed)
            return None if self.closed else self.version

    async def close(self) -> None:
        """Stop the watcher and end every listener's wait."""
        self._stop.set()
        async with self._changed:
            self.closed = True
            self._changed.notify_all()
        if self._task is not None:
            await self._task
