"""The ``claim`` mode: clients list themselves, a seeker claims a whole group at once.

An entry is *listed* (``pool.enter`` default) or a *seeker* (``listed: false``).
Any entry may page through the listed entries of its own ``@self`` bucket
(``pool.list``), follow them (``pool.watch``: ``pool.listed`` / ``pool.unlisted``)
and send ``claim.make`` naming ``groupSize - 1`` listed clients. Being listed is
the consent: the claim forms the session at once, or, if any target is no
longer listed in the claimer's bucket, fails with ``claim.conflict`` naming the
missing targets, and nobody moves.
"""

from __future__ import annotations

from dataclasses import dataclass

from matchmaker.core.commands import ListPool, MakeClaim, ModeCommand, WatchPool
from matchmaker.core.events import Delivery, Listing, ModeAnswer, PoolListed, PoolUnlisted
from matchmaker.core.modes.strategy import ModeHost, ModeStrategy, wrong_mode
from matchmaker.core.state import ClientState, Pool, PoolEntry
from matchmaker.errors import MatchmakerError

__all__ = ["MAX_PAGE", "ClaimMode", "Claimed", "ListPage", "Watching"]

MAX_PAGE = 200
"""The most entries one ``pool.list`` page holds."""


@dataclass(frozen=True, slots=True)
class ListPage(ModeAnswer):
    """The ``pool.list`` reply: listed entries oldest first; ``cursor`` pages on (``None``:
    the last page)."""

    pool: str
    entries: list[Listing]
    cursor: str | None


@dataclass(frozen=True, slots=True)
class Claimed(ModeAnswer):
    """The ``claim.make`` reply: the session the claim formed."""

    pool: str
    session_id: str


@dataclass(frozen=True, slots=True)
class Watching(ModeAnswer):
    """The ``pool.watch`` reply."""

    pool: str
    watching: bool


class ClaimMode(ModeStrategy):
    """Listings, watchers and atomic claims of one claim pool."""

    name = "claim"

    def __init__(self, pool: Pool, host: ModeHost) -> None:
        super().__init__(pool, host)
        self.watchers: dict[str, PoolEntry] = {}  # by client id

    def entered(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        if entry.listed:
            listing = _listing(entry, now_ms)
            self._tell(entry, PoolListed(self.pool.name, listing), out)

    def leaving(self, entry: PoolEntry, reason: str, out: list[Delivery]) -> None:
        self.watchers.pop(entry.client.client_id, None)
        if entry.listed:
            self._tell(entry, PoolUnlisted(self.pool.name, entry.client.client_id, reason), out)

    def _tell(
        self, entry: PoolEntry, event: PoolListed | PoolUnlisted, out: list[Delivery]
    ) -> None:
        """Send ``event`` to the watchers of ``entry``'s bucket, except ``entry`` itself."""
        me = entry.client.client_id
        watchers = [
            cid for cid, w in self.watchers.items() if w.bucket == entry.bucket and cid != me
        ]
        if watchers:
            out.append((watchers, event))

    def command(
        self,
        client: ClientState,
        entry: PoolEntry | None,
        command: ModeCommand,
        now_ms: int,
        out: list[Delivery],
    ) -> ModeAnswer:
        assert entry is not None
        match command:
            case ListPool():
                return self._list(entry, command, now_ms)
            case WatchPool(watch=True):
                self.watchers[client.client_id] = entry
                return Watching(self.pool.name, True)
            case WatchPool():
                self.watchers.pop(client.client_id, None)
                return Watching(self.pool.name, False)
            case MakeClaim():
                group = self._claim(entry, command.targets)
                return Claimed(self.pool.name, self.host.form(group, out))
        raise wrong_mode(self.pool)

    def _list(self, entry: PoolEntry, command: ListPool, now_ms: int) -> ListPage:
        after = _cursor_seq(command.cursor)
        limit = max(1, min(command.limit, MAX_PAGE))
        page: list[Listing] = []
        last = 0
        more = False
        # A bucket is in arrival order (seq ascending), so the cursor is the last seq shown.
        for other in self.pool.buckets.get(entry.bucket, {}).values():
            if other.seq <= after or not other.listed or other is entry:
                continue
            if len(page) == limit:
                more = True
                break
            page.append(_listing(other, now_ms))
            last = other.seq
        return ListPage(self.pool.name, page, str(last) if more else None)

    def _claim(self, claimer: PoolEntry, targets: list[str]) -> list[PoolEntry]:
        size = self.pool.spec.group_size
        me = claimer.client.client_id
        if len(targets) != size - 1 or len(set(targets)) != len(targets) or me in targets:
            raise MatchmakerError(
                f"claim exactly {size - 1} distinct other clients",
                code="claim.invalid",
                details={"expected": size - 1},
            )
        group = [claimer]
        missing: list[str] = []
        for target in targets:
            other = self.host.entry_of(target, self.pool)
            if other is None or not other.listed or other.bucket != claimer.bucket:
                missing.append(target)
            else:
                group.append(other)
        if missing:
            raise MatchmakerError(
                "some targets are no longer listed; nobody was matched",
                code="claim.conflict",
                details={"missing": missing},
            )
        return group


def _listing(entry: PoolEntry, now_ms: int) -> Listing:
    return Listing(entry.client.client_id, entry.public, max(0, now_ms - entry.entered_at))


def _cursor_seq(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit() or len(cursor) > 18:
        raise MatchmakerError("not a cursor this server gave out", code="claim.bad_cursor")
    return int(cursor)
