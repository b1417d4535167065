"""Rendezvous (highest-random-weight) hashing: the owner of a key among live members.

Every member computes the same owner from the same member list, with no
coordination; when a member leaves, only the keys it owned move, and when one
joins, it takes about ``1/n`` of the keys.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

__all__ = ["code_key", "host", "node_of", "owner", "pool_key", "room_key"]


def owner(key: str, members: Iterable[str]) -> str:
    """The member with the highest hash of ``(member, key)``; ties cannot matter (names differ)."""
    return max(members, key=lambda member: _weight(member, key))


def host(session_id: str, homes: Iterable[str]) -> str:
    """Where a session with members connected to ``homes`` (one per member) is hosted: the
    member most of them are connected to, so a session whose members share a process
    relays there and depends on no other. A tie goes to the member that formed the session
    (its id names it), if it is one of the tied, else to the rendezvous winner among them:
    every member computes the same host from the same members, with no coordination."""
    counts = Counter(homes)
    most = max(counts.values())
    tied = [member for member, count in counts.items() if count == most]
    former = node_of(session_id)
    if former in tied:
        return former or ""
    return owner(session_id, tied)


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
