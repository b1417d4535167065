"""The ``delegated`` mode: an authorised delegate connection forms the groups.

A client whose credential carries the ``delegate`` scope sends
``delegate.attach {pool}``; it gets ``pool.snapshot {version, entries}`` and
then one ``pool.delta`` per change (the version goes up by one each time, so a
gap means a lost delta). ``delegate.form {pool, groups}`` validates and forms
each group on its own, in order: every entry still waiting, ``groupSize``
distinct entries, one ``@self`` bucket. A group that fails is answered with its
error (``delegate.stale`` with the missing entries) and nobody in it moves;
the others still form. Several delegates may attach to one pool: whichever
forms a group first wins, the later one sees those entries as stale.

While no delegate is attached, each entry that has waited ``delegate_grace_ms``
without one is told ``pool.no_delegate`` (once per delegate-less spell) and
keeps waiting. A pool with an attached delegate stays live without entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matchmaker.core.commands import AttachDelegate, FormGroups, ModeCommand
from matchmaker.core.events import (
    DelegateEntry,
    Delivery,
    ModeAnswer,
    PoolDelta,
    PoolNoDelegate,
    PoolSnapshot,
)
from matchmaker.core.modes.strategy import ModeHost, ModeStrategy, wrong_mode
from matchmaker.core.state import ClientState, Pool, PoolEntry
from matchmaker.errors import MatchmakerError

__all__ = ["Attached", "DelegatedMode", "FormResult", "Formed"]


@dataclass(frozen=True, slots=True)
class Attached(ModeAnswer):
    """The ``delegate.attach`` reply; the snapshot follows as an event."""

    pool: str
    version: int


@dataclass(frozen=True, slots=True)
class FormResult:
    """One group's outcome: its session, or why it did not form."""

    ok: bool
    session_id: str | None = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Formed(ModeAnswer):
    """The ``delegate.form`` reply: one result per group, in the order sent."""

    pool: str
    results: list[FormResult]


class DelegatedMode(ModeStrategy):
    """The delegates, waiting entries (by id) and version of one delegated pool."""

    name = "delegated"

    def __init__(self, pool: Pool, host: ModeHost) -> None:
        super().__init__(pool, host)
        self.delegates: dict[str, ClientState] = {}
        self.entries: dict[str, PoolEntry] = {}
        self.version = 0
        self.alone_since = 0  # when the pool last had no delegate
        self.told: set[str] = set()  # entries told pool.no_delegate this spell

    def holds(self) -> bool:
        return bool(self.delegates)

    def entered(self, entry: PoolEntry, now_ms: int, out: list[Delivery]) -> None:
        self.entries[entry.entry_id] = entry
        self._delta([_seen(entry)], [], out)
        if not self.delegates:
            grace = self.host.limits.delegate_grace_ms
            self.host.schedule(max(now_ms, self.alone_since) + grace, self.pool, entry.entry_id)

    def leaving(self, entry: PoolEntry, reason: str, out: list[Delivery]) -> None:
        del self.entries[entry.entry_id]
        self.told.discard(entry.entry_id)
        self._delta([], [entry.entry_id], out)

    def _delta(self, added: list[DelegateEntry], removed: list[str], out: list[Delivery]) -> None:
        self.version += 1
        if self.delegates:
            out.append(
                (list(self.delegates), PoolDelta(self.pool.name, self.version, added, removed))
            )

    def timer(self, key: str, now_ms: int, out: list[Delivery]) -> None:
        entry = self.entries.get(key)
        grace = self.host.limits.delegate_grace_ms
        if entry is None or self.delegates or key in self.told:
            return
        if now_ms - max(entry.entered_at, self.alone_since) < grace:
            return  # a delegate came and went since this timer was set; a later one is due
        self.told.add(key)
        out.append(((entry.client.client_id,), PoolNoDelegate(self.pool.name, key)))

    def detach(self, client: ClientState, now_ms: int, out: list[Delivery]) -> None:
        self.delegates.pop(client.client_id, None)
        client.delegating.pop(self.pool.name, None)
        if not self.delegates:
            self.alone_since = now_ms
            due = now_ms + self.host.limits.delegate_grace_ms
            for entry_id in self.entries:
                self.host.schedule(due, self.pool, entry_id)

    def command(
        self,
        client: ClientState,
        entry: PoolEntry | None,
        command: ModeCommand,
        now_ms: int,
        out: list[Delivery],
    ) -> ModeAnswer:
        match command:
            case AttachDelegate():
                self.delegates[client.client_id] = client
                client.delegating[self.pool.name] = self.pool
                self.told.clear()
                entries = [_seen(e) for e in self.entries.values()]
                snapshot = PoolSnapshot(self.pool.name, self.version, entries)
                out.append(((client.client_id,), snapshot))
                return Attached(self.pool.name, self.version)
            case FormGroups():
                if client.client_id not in self.delegates:
                    raise MatchmakerError(
                        f"attach to pool {self.pool.name!r} first",
                        code="delegate.not_attached",
                        details={"pool": self.pool.name},
                    )
                results = [self._form_one(group, out) for group in command.groups]
                return Formed(self.pool.name, results)
        raise wrong_mode(self.pool)

    def _form_one(self, ids: list[str], out: list[Delivery]) -> FormResult:
        size = self.pool.spec.group_size
        if len(ids) != size or len(set(ids)) != size:
            return _failed(
                f"a group is {size} distinct entry ids",
                {"expected": size},
                code="delegate.invalid_group",
            )
        missing = [i for i in ids if i not in self.entries]
        if missing:
            return _failed(
                "some entries are no longer waiting", {"missing": missing}, code="delegate.stale"
            )
        group = [self.entries[i] for i in ids]
        if len({e.bucket for e in group}) != 1:
            return _failed(
                "a group's entries must share every @self attribute of the pool's filter",
                {"filter": [k for k, _ in self.pool.spec.filter]},
                code="delegate.invalid_group",
            )
        return FormResult(True, self.host.form(group, out))


def _seen(entry: PoolEntry) -> DelegateEntry:
    client = entry.client
    return DelegateEntry(
        entry.entry_id, client.client_id, dict(client.attributes), entry.public, entry.entered_at
    )


def _failed(message: str, details: dict[str, Any], *, code: str) -> FormResult:
    return FormResult(False, error={"code": code, "message": message, "details": details})
