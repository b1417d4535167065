"""The tables of the matching core and the steps every operation shares. Synchronous, no I/O.

:class:`Tables` is the one state of the core: the records of one process (clients,
pools, sessions, rooms, players), the entries' expiry heap and the modes' timers; it
mints ids, takes an entry out of its pool and expires what ran out.
:class:`~matchmaker.core.engine.Matchmaker` holds it and hands that same object to the
collaborators that each own one job (:class:`~matchmaker.core.sessions.Sessions`,
:class:`~matchmaker.core.parties.Parties`), as the cluster's ``Router`` hands its
``Routes``: no class chain, so what ``tables.x`` is can be read here.
"""

from __future__ import annotations

import heapq
import itertools
import secrets

from matchmaker.config import Limits
from matchmaker.core.events import Delivery, EntryExpired, EntryWithdrawn
from matchmaker.core.pools import PoolKey
from matchmaker.core.resume import ReplayBound, Resumption
from matchmaker.core.state import ClientState, Pool, PoolEntry, Session

__all__ = ["Tables"]

# Rebuild the expiry heap once this many of its items belong to entries that left otherwise.
_HEAP_COMPACT_MIN = 1024


class Tables:
    """The records of one process and the steps its operations share."""

    def __init__(self, limits: Limits, *, node: str | None = None) -> None:
        self.limits = limits
        self.clients: dict[str, ClientState] = {}
        self.pools: dict[PoolKey, Pool] = {}
        self.sessions: dict[str, Session] = {}
        self.rooms: dict[tuple[str, str], Session] = {}
        # (project id, player id) -> the connected (or away) clients of that player
        self.players: dict[tuple[str, str], set[str]] = {}
        # A client is out of touch for up to the heartbeat timeout before it is parked,
        # then away for up to the grace: what it may ask to have replayed spans both.
        replay_age_ms = limits.heartbeat_timeout_ms + limits.resume_grace_ms
        bound = ReplayBound(limits.resume_buffer_bytes, replay_age_ms)
        self.resumption = Resumption(bound, limits.resume_grace_ms, issuer=node)
        self.node = node if node is not None else secrets.token_hex(3)
        self.counter = itertools.count(1)
        self.expiry: list[tuple[int, int, PoolEntry]] = []
        self._stale = 0
        self.timers: list[tuple[int, int, Pool, str]] = []

    def schedule(self, due_ms: int, pool: Pool, key: str) -> None:
        """Run ``pool.mode.timer(key)`` from the first :meth:`expire` at or after ``due_ms``."""
        heapq.heappush(self.timers, (due_ms, next(self.counter), pool, key))

    def next_due(self) -> int | None:
        """The earliest time (ms) at which :meth:`expire` has something to look at: a mode
        timer or an entry's TTL (possibly of an entry gone since, then a no-op), ``None``
        when nothing is scheduled. A shell with a simulated clock steps to it."""
        heads = [heap[0][0] for heap in (self.timers, self.expiry) if heap]
        return min(heads) if heads else None

    def expire(self, now_ms: int) -> list[Delivery]:
        """Withdraw every entry whose TTL ran out by ``now_ms`` (``pool.expired`` to each)
        and run the mode timers that are due (proposal deadlines, delegate grace)."""
        out: list[Delivery] = []
        timers = self.timers
        while timers and timers[0][0] <= now_ms:
            _, _, pool, key = heapq.heappop(timers)
            pool.mode.timer(key, now_ms, out)
        heap = self.expiry
        while heap and heap[0][0] <= now_ms:
            entry = heapq.heappop(heap)[2]
            if entry.live:
                self.drop_entry(entry, "expired", out, stale=False)
                expired = EntryExpired(entry.pool.name, entry.entry_id, "ttl")
                out.append((entry.holders(), expired))
            else:
                self._stale -= 1
        return out

    def entry_of(self, client_id: str, pool: Pool) -> PoolEntry | None:
        """The live entry ``client_id`` holds in ``pool``, if any."""
        client = self.clients.get(client_id)
        entry = client.entries.get(pool.name) if client is not None else None
        return entry if entry is not None and entry.pool is pool and not entry.paused else None

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{self.node}-{next(self.counter)}"

    def session_count(self, client: ClientState) -> int:
        """The sessions ``max_sessions_per_client`` counts for ``client``: a player's
        (token ``sub``) over all its connections, each session once."""
        if client.player_id is None:
            return len(client.sessions)
        ids = self.players.get((client.project_id, client.player_id), set()) | {client.client_id}
        return len(
            {sid for cid in ids if cid in self.clients for sid in self.clients[cid].sessions}
        )

    def pause(self, entry: PoolEntry, out: list[Delivery], reason: str = "away") -> None:
        """Take a waiting ``entry`` out of its bucket (and its mode's view), kept with its
        TTL running: its client (or a party member) is away, or it is held."""
        pool = entry.pool
        pool.mode.leaving(entry, reason, out)
        pool.remove(entry)
        pool.paused += 1
        entry.paused = True

    def unpause(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        """Put a paused ``entry`` back in its old place (it may complete a group at once)."""
        pool = entry.pool  # kept live by its paused entries
        pool.paused -= 1
        entry.paused = False
        pool.add(entry)
        pool.mode.entered(entry, now_ms, out)

    def withdraw(self, entry: PoolEntry, reason: str, out: list[Delivery]) -> None:
        """Take ``entry`` out of its pool and tell everyone it waited for
        (``pool.withdrawn``)."""
        holders = entry.holders()
        self.drop_entry(entry, reason, out)
        out.append((holders, EntryWithdrawn(entry.pool.name, entry.entry_id, reason)))

    def drop_entry(
        self, entry: PoolEntry, reason: str, out: list[Delivery], *, stale: bool = True
    ) -> None:
        """Take ``entry`` out of its pool (and its party, its client, its mode's view),
        telling no one: the caller says why to whom (``stale``: its expiry item stays in
        the heap, counted for compaction)."""
        pool = entry.pool
        entry.live = False
        del entry.client.entries[pool.name]
        party = entry.party
        if party is not None and party.entry is entry:
            party.entry = None
        if entry.paused:  # it left the buckets and the mode's view when its client went away
            pool.paused -= 1
        else:
            pool.mode.leaving(entry, reason, out)
            pool.remove(entry)
        self.free_if_idle(pool)
        if stale:
            self._stale += 1
            if self._stale >= _HEAP_COMPACT_MIN and self._stale * 2 > len(self.expiry):
                self.expiry = [item for item in self.expiry if item[2].live]
                heapq.heapify(self.expiry)
                self._stale = 0

    def free_if_idle(self, pool: Pool) -> None:
        """Forget a pool with no entries, waiting or paused (and nothing its mode keeps it
        live for)."""
        idle = pool.size == 0 and pool.paused == 0 and not pool.mode.holds()
        if idle and self.pools.get(pool.key) is pool:
            del self.pools[pool.key]
