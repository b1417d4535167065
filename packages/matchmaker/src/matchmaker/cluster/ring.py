"""Rendezvous (highest-random-weight) hashing: the owner of a key among live members.

Every member computes the same owner from the same member list, with no
coordination; when a member leaves, only the keys it owned move, and when one
joins, it takes about ``1/n`` of the keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

__all__ = ["code_key", "node_of", "owner", "pool_key", "room_key"]


def owner(key: str, members: Iterable[str]) -> str:
    """The member with the highest hash of ``(member, key)``; ties cannot matter (names differ)."""
    return max(members, key=lambda member: _weight(member, key))


def _weight(member: str, key: str) -> bytes:
    return hashlib.blake2b(f"{member}\x00{key}".encode(), digest_size=8).digest()


def pool_key(project_id: str, pool: str) -> str:
    """Every pool of one name in a Project (policy pools of every spec, or the ad-hoc one)."""
    return f"pool\x00{project_id}\x00{pool}"


def room_key(project_id: str, room: str) -> str:
    """An ad-hoc room (``session.join``)."""
    return f"room\x00{project_id}\x00{room}"


def code_key(project_id: str, code: str) -> str:
    """A party's code: the member that minted it holds the party (``party.join`` goes there)."""
    return f"party\x00{project_id}\x00{code}"


def node_of(core_id: str) -> str | None:
    """The node that minted a core id (``c<node>-<n>``, ``s<node>-<n>``), if it is one."""
    head, dash, tail = core_id.partition("-")
    if not dash or len(head) < 2 or not tail.isdigit():
        return None
    return head[1:]
