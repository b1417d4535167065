"""The last loaded repository, kept while the change feed says no task file changed.

A load checks every task file's signature (one ``stat`` each): 10 ms at 1,000
tasks, 0.3-0.4 s at 100,000, which alone is more than a page of the API may
take. So a large repository (:data:`KEEP_FROM` task files or more) is loaded
once and answered from until the change feed (:class:`~tasktool.web.events.ChangeFeed`,
inotify) moves its version; then the next request loads afresh. A smaller one is
loaded on every request, as before: cheap enough, and exact to the instant.

What a kept repository may miss is a change the watcher has not reported yet (its
debounce, 200 ms). Writes never use it: they load afresh (the write path re-reads
the file under its lock anyway) and drop it. A body read from a kept repository
whose file changed meanwhile fails ``task.changed``; that request loads afresh
and runs once more.

What a page derives from every task (a filtered and sorted list, the board's
columns, the drop-downs' values) is remembered with the kept repository
(:meth:`Snapshot.remembering`, the last :data:`REMEMBERED` of them) and
forgotten with it, so paging through a list of 100,000 filters it once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Protocol, TypeVar, cast

from mtcommon import CodedError
from tasktool.planning.repository import Loader, Repository
from tasktool.web.events import ChangeFeed

__all__ = ["KEEP_FROM", "REMEMBERED", "Remember", "Snapshot"]

T = TypeVar("T")
#: Task files (active and archived) from which a loaded repository is kept between requests.
KEEP_FROM = 20_000
#: Results derived from the kept repository that are remembered (the least recent go).
REMEMBERED = 32


class Remember(Protocol):
    """``remember(key, compute)``: ``compute()``, or what it gave for ``key`` before on the
    same kept repository."""

    def __call__(self, key: Hashable, compute: Callable[[], T]) -> T: ...


class Snapshot:
    """``query(repository)`` for one request: on the kept repository when it is current."""

    def __init__(self, load: Loader, feed: ChangeFeed, keep_from: int = KEEP_FROM) -> None:
        self._load = load
        self._feed = feed
        self._keep_from = keep_from
        self._lock = threading.Lock()
        self._kept: tuple[int, Repository] | None = None
        self._memo: OrderedDict[Hashable, Any] = OrderedDict()

    def _fresh(self) -> Repository:
        """A new load, kept when large and the feed is watching (its version read first,
        so a change during the load makes the next request load again)."""
        version = self._feed.version
        repo = self._load()
        if self._feed.running and len(repo.all_tasks) >= self._keep_from:
            with self._lock:
                self._kept = (version, repo)
                self._memo.clear()
        return repo

    def _current(self) -> Repository | None:
        with self._lock:
            kept = self._kept
        if kept is None or not self._feed.running or kept[0] != self._feed.version:
            return None
        return kept[1]

    def read(self, query: Callable[[Repository], T]) -> T:
        """``query`` on the kept repository when current, else on a fresh load."""
        repo = self._current()
        if repo is None:
            return query(self._fresh())
        try:
            return query(repo)
        except CodedError as exc:
            if exc.code != "task.changed":
                raise
            self.forget()
            return query(self._fresh())

    def write(self, change: Callable[[Repository], T]) -> T:
        """``change`` on a fresh load; the kept repository is dropped before and after."""
        self.forget()
        try:
            return change(self._load())
        finally:
            self.forget()

    def forget(self) -> None:
        with self._lock:
            self._kept = None
            self._memo.clear()

    def remembering(self, repo: Repository) -> Remember:
        """A :class:`Remember` for queries on ``repo``: it remembers only while ``repo`` is
        the kept one (a fresh small load computes every time)."""

        def remember(key: Hashable, compute: Callable[[], T]) -> T:
            with self._lock:
                kept = self._kept is not None and self._kept[1] is repo
                if kept and key in self._memo:
                    self._memo.move_to_end(key)
                    return cast(T, self._memo[key])
            value = compute()
            if kept:
                with self._lock:
                    if self._kept is not None and self._kept[1] is repo:
                        self._memo[key] = value
                        while len(self._memo) > REMEMBERED:
                            self._memo.popitem(last=False)
            return value

        return remember
