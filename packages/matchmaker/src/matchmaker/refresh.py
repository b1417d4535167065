"""Keeping the ``ProjectDirectory`` equal to the store.

At startup the directory is filled from the store. Afterwards this process's
own writes update it directly (the control plane does that), and writes by
other processes sharing the store (several nodes on one PostgreSQL database)
arrive through ``ProjectStore.watch``: each reported id is re-read, in order,
so the directory converges on what the store holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.store import ProjectStore

log = logging.getLogger("matchmaker.refresh")

_PAGE = 1000


async def load_directory(store: ProjectStore, directory: ProjectDirectory) -> None:
    """Make ``directory`` hold exactly the stored Projects."""
    stored: set[str] = set()
    after: str | None = None
    while page := await store.page(limit=_PAGE, after=after):
        for row in page:
            directory.put(row.project)
            stored.add(row.project.id)
        after = page[-1].project.id
    for project_id in directory.ids() - stored:
        directory.remove(project_id)


class DirectoryRefresher:
    """Re-reads the Projects a store reports as changed, one at a time, in order."""

    def __init__(self, store: ProjectStore, directory: ProjectDirectory) -> None:
        self._store = store
        self._directory = directory
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Subscribe to the store, then load everything (so no write falls in between)."""
        await self._store.watch(self._queue.put_nowait)
        await load_directory(self._store, self._directory)
        self._worker = asyncio.create_task(self._run())

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker

    async def _run(self) -> None:
        while True:
            project_id = await self._queue.get()
            try:
                await self._apply(project_id)
            except MatchmakerError as exc:
                log.warning("could not refresh the Project directory: %s [%s]", exc, exc.code)

    async def _apply(self, project_id: str | None) -> None:
        if project_id is None:
            await load_directory(self._store, self._directory)
            return
        project = await self._store.get(project_id)
        if project is None:
            self._directory.remove(project_id)
        else:
            self._directory.put(project)
