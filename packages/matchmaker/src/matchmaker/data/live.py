"""The read-only live snapshot the process shell hands the control plane and the gauges."""

from __future__ import annotations

import time
from collections import Counter, defaultdict

from matchmaker.data.plane import DataPlane
from matchmaker.observe.live import LivePool, LiveProject, LiveSession

__all__ = ["live_snapshot"]


def live_snapshot(plane: DataPlane) -> list[LiveProject]:
    """Every Project with a client, a waiting entry or a session here, ordered by id.

    Reads the core's tables without changing them (synchronous, so consistent).
    Counts, modes, ids and ages only: no credential, attribute or public profile.
    """
    now = time.monotonic()
    core = plane.core
    clients = Counter(client.project_id for client in core.clients.values())
    pools: defaultdict[str, list[LivePool]] = defaultdict(list)
    for pool in core.pools.values():
        if pool.size == 0:
            continue
        oldest: float | None = None
        for fifo in pool.buckets.values():
            first = next(iter(fifo.values()))
            connection = plane.clients.get(first.client.client_id)
            started = None if connection is None else connection.entered.get(pool.name)
            if started is not None and (oldest is None or started[0] < oldest):
                oldest = started[0]
        pools[pool.project_id].append(
            LivePool(
                name=pool.name,
                mode=pool.spec.mode,
                group_size=pool.spec.group_size,
                policy=pool.key[0] == "policy",
                waiting=pool.size,
                oldest_wait_ms=None if oldest is None else int((now - oldest) * 1000),
            )
        )
    sessions: defaultdict[str, list[LiveSession]] = defaultdict(list)
    for session in core.sessions.values():
        sessions[session.project_id].append(
            LiveSession(session.session_id, len(session.members), session.pool, session.room)
        )
    return [
        LiveProject(
            id=project_id,
            clients=clients[project_id],
            pools=sorted(pools[project_id], key=lambda pool: (pool.name, pool.mode)),
            sessions=sorted(sessions[project_id], key=lambda session: session.id),
        )
        for project_id in sorted(clients.keys() | pools.keys() | sessions.keys())
    ]
