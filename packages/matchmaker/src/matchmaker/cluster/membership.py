"""Who is in the cluster: one TTL key per live member, renewed by its heartbeat.

A member writes ``<name>:member:<node>`` with a time to live of
:data:`MEMBER_TTL_MS` every :data:`HEARTBEAT_S` and adds itself to the set
``<name>:members``. A member whose key expired (its process died, or lost
Redis for longer than the TTL) is dead: the first survivor to notice removes
it from the set, and every survivor handles its death when it next polls. So
a ``kill -9`` is noticed within ``MEMBER_TTL_MS + HEARTBEAT_S`` (4 s by
default), well inside the 10 s the design allows. Expiry is Redis's own clock:
members' clocks need not agree.

Redis itself may come back from an outage without the registry (restarted
empty) or with every key expired (paused longer than the TTL). A member
missing then has not failed to beat: it has not beaten *yet*. So whenever a
member finds Redis back (it answers again after failing, or the registry's
epoch, a key written once per registry, changed), the members it saw live
keep their place for a whole :data:`MEMBER_TTL_MS` from that moment, and only
those that have not beaten by then are dead. Every member beats in the same
round trip as it looks, and looks again within :data:`RETRY_S` while Redis
does not answer, so each one is back in the registry at once. The decision is
:class:`Roster`'s, without I/O; :class:`Membership` reads and writes the keys.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["HEARTBEAT_S", "MEMBER_TTL_MS", "RETRY_S", "Change", "Membership", "Roster"]

HEARTBEAT_S = 1.0
MEMBER_TTL_MS = 3000
# How soon a member that could not reach Redis tries again (its re-announcement).
RETRY_S = 0.2
# The epoch outlives its members by this much (so a cluster that stopped leaves no key).
_EPOCH_TTL_MS = 20 * MEMBER_TTL_MS


@dataclass(frozen=True, slots=True)
class Change:
    """What one look decided: who ``joined`` and ``died`` since the last, and which
    registered members to ``purge`` from the registry (with their inboxes)."""

    joined: frozenset[str]
    died: frozenset[str]
    purge: frozenset[str]


class Roster:
    """The live members as this one sees them, from what each look at the registry read.

    Sans I/O: every call is given the time (epoch ms) it happens at.
    """

    def __init__(self, node: str) -> None:
        self.node = node
        self.live: frozenset[str] = frozenset({node})
        self._epoch: bytes | None = None
        self._outage = False
        self._back_ms: int | None = None  # when Redis was last found back, if within the TTL

    def unreachable(self) -> None:
        """A look failed: when one succeeds again, Redis is back."""
        self._outage = True

    def look(
        self, listed: Iterable[str], beating: Iterable[str], epoch: bytes, now_ms: int
    ) -> Change:
        """The registry lists ``listed``, of which ``beating`` have their key; its epoch is
        ``epoch``. Members this one saw live and finds missing within the TTL after Redis
        came back stay live (and registered): they have not had the time to beat yet."""
        if self._outage or (self._epoch is not None and epoch != self._epoch):
            self._back_ms = now_ms
        self._outage, self._epoch = False, epoch
        if self._back_ms is not None and now_ms - self._back_ms >= MEMBER_TTL_MS:
            self._back_ms = None
        live = {*beating, self.node}
        if self._back_ms is not None:
            live |= self.live
        previous, self.live = self.live, frozenset(live)
        purge = frozenset(listed) - self.live
        return Change(self.live - previous, previous - self.live, purge)


class Membership:
    """The Redis keys of one cluster name, and the live members as last seen."""

    def __init__(self, redis: Any, name: str, node: str) -> None:
        self._redis = redis
        self.name = name
        self.node = node
        self.members_key = f"{name}:members"
        self.epoch_key = f"{name}:epoch"
        self.roster = Roster(node)

    @property
    def live(self) -> frozenset[str]:
        return self.roster.live

    def member_key(self, node: str) -> str:
        return f"{self.name}:member:{node}"

    def inbox(self, node: str) -> str:
        """The stream a member reads its traffic from."""
        return f"{self.name}:inbox:{node}"

    async def poll(self, now_ms: int) -> Change:
        """Beat (renew this member's key and its place in the set) and read the live
        members, in one round trip (and one more for the members' keys). Raises what
        redis-py raises; the next successful poll then counts as Redis being back."""
        try:
            return await self._poll(now_ms)
        except BaseException:
            self.roster.unreachable()
            raise

    async def _poll(self, now_ms: int) -> Change:
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.set(self.member_key(self.node), "1", px=MEMBER_TTL_MS)
            pipe.sadd(self.members_key, self.node)
            pipe.set(self.epoch_key, secrets.token_hex(8), nx=True)
            pipe.pexpire(self.epoch_key, _EPOCH_TTL_MS)
            pipe.get(self.epoch_key)
            pipe.smembers(self.members_key)
            *_, epoch, listed = await pipe.execute()
        names = sorted(n.decode() if isinstance(n, bytes) else str(n) for n in listed)
        alive = await self._redis.mget([self.member_key(n) for n in names]) if names else []
        beating = [n for n, value in zip(names, alive, strict=True) if value is not None]
        change = self.roster.look(names, beating, bytes(epoch or b""), now_ms)
        if change.purge:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.srem(self.members_key, *sorted(change.purge))
                for node in sorted(change.purge):
                    pipe.delete(self.inbox(node))
                await pipe.execute()
        return change

    async def leave(self) -> None:
        """A clean stop: peers see this member gone at their next poll."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.delete(self.member_key(self.node))
            pipe.srem(self.members_key, self.node)
            pipe.delete(self.inbox(self.node))
            await pipe.execute()
