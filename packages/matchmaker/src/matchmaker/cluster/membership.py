"""Who is in the cluster: one TTL key per live member, renewed by its heartbeat.

A member writes ``<name>:member:<node>`` with a time to live of
:data:`MEMBER_TTL_MS` every :data:`HEARTBEAT_S` and adds itself to the set
``<name>:members``. A member whose key expired (its process died, or lost
Redis for longer than the TTL) is dead: the first survivor to notice removes
it from the set, and every survivor handles its death when it next polls. So
a ``kill -9`` is noticed within ``MEMBER_TTL_MS + HEARTBEAT_S`` (4 s by
default), well inside the 10 s the design allows. Expiry is Redis's own clock:
members' clocks need not agree.
"""

from __future__ import annotations

from typing import Any

__all__ = ["HEARTBEAT_S", "MEMBER_TTL_MS", "Membership"]

HEARTBEAT_S = 1.0
MEMBER_TTL_MS = 3000


class Membership:
    """The Redis keys of one cluster name, and the live members as last seen."""

    def __init__(self, redis: Any, name: str, node: str) -> None:
        self._redis = redis
        self.name = name
        self.node = node
        self.members_key = f"{name}:members"
        self.live: frozenset[str] = frozenset({node})

    def member_key(self, node: str) -> str:
        return f"{self.name}:member:{node}"

    def inbox(self, node: str) -> str:
        """The stream a member reads its traffic from."""
        return f"{self.name}:inbox:{node}"

    async def beat(self) -> None:
        """Renew this member's key (and its place in the set, lost if Redis restarted empty)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.set(self.member_key(self.node), "1", px=MEMBER_TTL_MS)
            pipe.sadd(self.members_key, self.node)
            await pipe.execute()

    async def poll(self) -> tuple[frozenset[str], frozenset[str]]:
        """Read the live members; returns ``(joined, died)`` since the last poll."""
        listed = sorted(await self._redis.smembers(self.members_key))
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in listed]
        alive = await self._redis.mget([self.member_key(n) for n in names]) if names else []
        live = {n for n, value in zip(names, alive, strict=True) if value is not None}
        gone = [n for n, value in zip(names, alive, strict=True) if value is None]
        if gone:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.srem(self.members_key, *gone)
                for node in gone:
                    pipe.delete(self.inbox(node))
                await pipe.execute()
        live.add(self.node)
        previous, self.live = self.live, frozenset(live)
        return self.live - previous, previous - self.live

    async def leave(self) -> None:
        """A clean stop: peers see this member gone at their next poll."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.delete(self.member_key(self.node))
            pipe.srem(self.members_key, self.node)
            pipe.delete(self.inbox(self.node))
            await pipe.execute()
