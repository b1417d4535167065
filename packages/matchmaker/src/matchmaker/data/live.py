"""The read-only live snapshot the process shell hands the control plane and the gauges."""

from __future__ import annotations

import time
from collections import Counter, defaultdict

from matchmaker.data.plane import DataPlane
from matchmaker.observe.live import LivePool, LiveProject, LiveQuality, LiveSession
from matchmaker.observe.metrics import PolicyQuality

__all__ = ["live_snapshot"]


def live_snapshot(plane: DataPlane) -> list[LiveProject]:
    """Every Project with a client, a waiting entry or a session here, ordered by id.

    Reads the core's tables without changing them (synchronous, so consistent).
    Counts, modes, ids and ages only: no credential, attribute or public profile.
    """
    now_ms = int(time.time() * 1000)  # the core's clock
    core = plane.core
    # A client is counted where its connection is (``plane.clients``) or, once it dropped,
    # as away while its outbox waits to be resumed: never both, as the totals count them.
    clients: Counter[str] = Counter()
    away: Counter[str] = Counter()
    outboxes = core.resumption.outboxes
    for client_id, client in core.clients.items():
        if client_id in plane.clients:
            clients[client.project_id] += 1
        elif (outbox := outboxes.get(client_id)) is not None and outbox.parked_until_ms is not None:
            away[client.project_id] += 1
    pools: defaultdict[str, list[LivePool]] = defaultdict(list)
    for pool in core.pools.values():
        if pool.size == 0 and pool.paused == 0:
            continue
        # Each bucket is a FIFO: its first entry is its oldest.
        firsts = (next(iter(fifo.values())) for fifo in pool.buckets.values() if fifo)
        oldest = min((entry.entered_at for entry in firsts), default=None)
        pools[pool.project_id].append(
            LivePool(
                name=pool.name,
                mode=pool.spec.mode,
                group_size=pool.spec.group_size,
                policy=pool.key[0] == "policy",
                waiting=pool.size,
                paused=pool.paused,
                oldest_wait_ms=None if oldest is None else max(0, now_ms - oldest),
            )
        )
    sessions: defaultdict[str, list[LiveSession]] = defaultdict(list)
    for session in core.sessions.values():
        sessions[session.project_id].append(
            LiveSession(session.session_id, len(session.members), session.pool, session.room)
        )
    quality: defaultdict[str, list[LiveQuality]] = defaultdict(list)
    for (project_id, policy), tally in sorted(plane.observer.metrics.quality.items()):
        quality[project_id].append(_means(policy, tally))
    live = clients.keys() | away.keys() | pools.keys() | sessions.keys() | quality.keys()
    return [
        LiveProject(
            id=project_id,
            clients=clients[project_id],
            away=away[project_id],
            pools=sorted(pools[project_id], key=lambda pool: (pool.name, pool.mode)),
            sessions=sorted(sessions[project_id], key=lambda session: session.id),
            quality=quality[project_id],
        )
        for project_id in sorted(live)
    ]


def _means(policy: str, tally: PolicyQuality) -> LiveQuality:
    """A policy's match quality as the live view shows it: means of the running sums."""
    matches = tally.matches or 1
    return LiveQuality(
        policy=policy,
        matches=tally.matches,
        mean_wait_ms=tally.wait_s * 1000 / tally.waits if tally.waits else None,
        mean_spread={a: total / matches for a, total in sorted(tally.spreads.items())},
        mean_imbalance=tally.imbalance / tally.imbalances if tally.imbalances else None,
    )
