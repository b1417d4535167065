"""The one way the data plane starts a task: kept, named, and never failing in silence.

A task that only ``asyncio.create_task`` started is held by nothing (the loop keeps a
weak reference) and, if it raises, says so only when it is garbage collected, if ever.
:class:`Background` keeps every task it starts until it ends, and logs the exception
of one that crashed, then hands it to the task's ``on_crash`` so the failure is
surfaced where it matters: a crashed writer closes its connection, a crashed timer
stops the process (``/readyz`` answers 503 while it stops).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from matchmaker.observe.logs import fields

__all__ = ["Background", "Crash", "cancel"]

Crash = Callable[[BaseException], None]
"""What a task's crash does besides being logged (close a connection, stop the process)."""

_log = logging.getLogger("matchmaker.data")


class Background:
    """The tasks of one data plane that run beside the frames (writers, timers, peers)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(
        self, work: Coroutine[Any, Any, None], name: str, on_crash: Crash | None = None
    ) -> asyncio.Task[None]:
        """Run ``work`` as a task called ``name``, kept until it ends; if it raises (a
        cancel is no crash), the exception is logged and given to ``on_crash``."""
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(partial(self._ended, on_crash))
        return task

    def _ended(self, on_crash: Crash | None, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is None:
            return
        _log.error(
            "background task crashed",
            exc_info=error,
            extra=fields(event="task.crashed", task=task.get_name()),
        )
        if on_crash is not None:
            on_crash(error)


async def cancel(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel ``tasks`` and wait until each ended; a crash was logged when it happened."""
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks)
