"""What a member does when members come and go, or Redis loses what it was given.

A member that died took its pools and its proxies with it: the survivors forget
its clients, re-host the sessions it hosted for their own clients
(:mod:`.placement.hosting`), and enter their clients' entries again at the pools'
new owners. A member that joined takes about ``1/n`` of the pools: entries move
there. A request whose message Redis did not take, or whose answer did not come
in time, is refused with ``cluster.unavailable``, so no client is left waiting.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence

from matchmaker.cluster.messages import (
    Command,
    Forgot,
    Message,
)
from matchmaker.cluster.placement.hosting import Hosting
from matchmaker.cluster.ring import pool_key
from matchmaker.cluster.routes import (
    ANSWER_TIMEOUT_MS,
    INTERNAL,
    NOTHING,
    Action,
    Deliver,
    Perform,
    Post,
    Routes,
    Waiting,
    pool_command,
)
from matchmaker.core.commands import EnterPool, LeavePool
from matchmaker.core.state import ClientState
from matchmaker.errors import MatchmakerError

__all__ = ["Failover"]


class Failover:
    """What a member does to its routing state when messages are lost, answers are late,
    or members come and go."""

    def __init__(self, routes: Routes, hosting: Hosting) -> None:
        self.routes = routes
        self.hosting = hosting

    def lost(self, message: Message, now_ms: int) -> Sequence[Action]:
        """Redis did not take ``message``: a forwarded request is refused
        (``cluster.unavailable``); anything else is left to the failure handling
        (members' deaths, :meth:`expire`)."""
        if type(message) is Command:
            assert isinstance(message, Command)
            if message.request_id != INTERNAL:
                self.routes.forget_entry(message.client, message.request_id)
            return self.routes.refused(message.client, message.request_id)
        return NOTHING

    def expire(self, now_ms: int) -> Sequence[Action]:
        """Refuse the forwarded requests whose answer did not come in time."""
        routes = self.routes
        late = [k for k, sent in routes.pending.items() if now_ms - sent > ANSWER_TIMEOUT_MS]
        out: list[Action] = []
        for client_id, request_id in late:
            del routes.pending[client_id, request_id]
            routes.forget_entry(client_id, request_id, timed_out=True)
            out.extend(routes.refused(client_id, request_id))
        return out

    def members_changed(
        self, joined: Iterable[str], died: Iterable[str], local_clients: Iterable[str], now_ms: int
    ) -> Sequence[Action]:
        """The live members changed (:attr:`.Routes.live` says who they are now): forget the
        clients of those that ``died``, and move the entries of ``local_clients`` (the
        clients connected here) whose pool has a new owner.

        A member that joined and died between two looks (so never seen here) may have
        left proxies here: it is handled as dead too.
        """
        routes = self.routes
        joined = set(joined)
        # Found dead here, yet back: it must forget this member's clients as this one
        # forgot its own (it may not know it was found dead).
        forgot: list[Action] = [Post(node, Forgot()) for node in sorted(joined & routes.departed)]
        routes.departed -= joined
        unseen = {home for home, _ in routes.proxies.values()} - routes.live
        died = sorted({*died, *unseen})
        if not joined and not died:
            return NOTHING
        routes.forget_owners()
        out = forgot
        for node in died:
            out.extend(self._member_died(node, now_ms))
        out.extend(self._rebalance(local_clients, now_ms))
        return out

    def on_forgot(self, sender: str, message: Forgot, now_ms: int) -> Sequence[Action]:
        """``sender`` found this member dead (it stalled, or lost Redis, past the member
        TTL) and forgot its clients, ending their sessions there: this member forgets
        ``sender``'s likewise, so every client of a session the two shared is told it
        ended (``member_left``) instead of having its sends refused, and its entries
        that waited at ``sender`` are entered there again."""
        out = list(self._member_died(sender, now_ms, ended=True))
        self.routes.departed.discard(sender)  # alive: its messages count again
        out.extend(self._rebalance((), now_ms))
        return out

    def _member_died(self, node: str, now_ms: int, *, ended: bool = False) -> Sequence[Action]:
        """``node`` stopped renewing its key: forget its clients, re-home what it owned."""
        routes = self.routes
        routes.departed.add(node)
        out: list[Action] = []
        for client_id, (home, conversation) in list(routes.proxies.items()):
            if home == node:
                del routes.proxies[client_id]
                out.append(Deliver(conversation.disconnect(now_ms)))
        out.extend(self.hosting.rehost(node, now_ms, ended=ended))
        for holders in routes.holders.values():
            holders.discard(node)
        for client_id, waiting in routes.waiting.items():
            for name, entry in list(waiting.items()):
                if entry.node != node:
                    continue
                told = self._entry_died(client_id, name, entry)
                if told is None:  # _rebalance enters it again at the new owner
                    entry.node, entry.asked, entry.remote_id = "", INTERNAL, None
                else:
                    del waiting[name]
                    out.extend(told)
        for client_id, outgoing in routes.outgoing.items():
            for name, entry in [(n, e) for n, e in outgoing if e.node == node]:
                outgoing.remove((name, entry))
                out.extend(self._entry_died(client_id, name, entry) or NOTHING)
        for (client_id, request_id), (_, entry) in list(routes.again.items()):
            if entry.node == node:  # unanswered: refused now, as an entry's pool.enter is
                del routes.again[client_id, request_id]
                routes.pending.pop((client_id, request_id), None)
                out.extend(routes.refused(client_id, request_id))
        return out

    def _entry_died(self, client_id: str, name: str, entry: Waiting) -> Sequence[Action] | None:
        """The member holding a local client's entry died, and its pools with it: what its
        client is told (the entry is gone), or ``None`` (it is to be entered again)."""
        routes = self.routes
        asked, leave = entry.asked, entry.leave_request
        if entry.leaving and leave is not None:
            routes.pending.pop((client_id, leave), None)
        if asked is not None and routes.pending.pop((client_id, asked), None) is not None:
            # Not answered yet: refused now (the client may enter again), not entered
            # again behind its back before the timeout would refuse it; so is its leave.
            refused = list(routes.refused(client_id, asked))
            if entry.leaving:
                refused.extend(routes.refused(client_id, leave))
            return refused
        if entry.leaving:
            # Left with its member, as the client asked: so it is answered.
            return [Perform(client_id, [entry.left(name)])]
        if entry.withdrawn:
            # Its client was matched: one process would have withdrawn it, and says so (if
            # its client was told of it: not one whose pool.enter was refused by timeout).
            if entry.told is None:
                return NOTHING
            return [Deliver([((client_id,), entry.withdrawal(name))], remote=False)]
        return None

    def _rebalance(self, local_clients: Iterable[str], now_ms: int) -> Sequence[Action]:
        """The members changed: local clients' entries whose pool has a new owner move there.

        An entry at a live former owner is withdrawn there first. Entries of the
        ``auto`` mode that wait in this process's own core move too (others keep
        their mode's state here until they match, leave or expire).
        """
        routes = self.routes
        out: list[Action] = []
        for client_id in list(routes.waiting):
            out.extend(self.rehome(client_id, now_ms))
        for client_id in list(local_clients):
            state = routes.core.clients.get(client_id)
            if state is None:
                continue
            for name, entry in list(state.entries.items()):
                spec = entry.pool.spec
                new = routes.owner_of(pool_key(state.project_id, name))
                if new == routes.node or spec.mode != "auto" or entry.paused:
                    continue
                policy = entry.pool.key[0] == "policy"
                command = pool_command(name, spec, entry.public, policy=policy)
                _, left = routes.core.leave_pool(client_id, name)
                out.append(Deliver(left))
                out.extend(self._move(state, name, new, command, now_ms, told=entry.entry_id))
        return out

    def rehome(self, client_id: str, now_ms: int) -> Sequence[Action]:
        """Move the client's entries held by other members whose pool has a new owner.

        An away client's entries wait until it is back (:meth:`.Router.client_attached`):
        entered at a new owner, one could be matched at once, while it is away. An
        entry whose ``pool.enter`` (its client's, or a move's) is not answered yet moves
        once it is (moved now, a timeout refusing that request would leave it entered
        behind the client's back): the leave at its member names it by the id answered,
        so a newer entry entered there since (a repeated ``pool.enter`` once this one
        matched) stays, for its client was told it is in.
        """
        routes = self.routes
        state = routes.core.clients.get(client_id)
        waiting = routes.waiting.get(client_id)
        if state is None or state.away or not waiting:
            return NOTHING
        out: list[Action] = []
        for name, entry in list(waiting.items()):
            if entry.node and entry.remote_id is None:
                continue  # moved once answered: the client must hear where it is first
            if entry.settling:
                continue  # left or withdrawn where it is, as its client's member asked
            new = routes.target(state, entry.command)
            if new is None or new == entry.node:
                continue
            del waiting[name]
            if entry.node in routes.live:
                leave = LeavePool(name, entry.remote_id)
                out.append(routes.send(state, entry.node, leave, INTERNAL, now_ms))
            out.extend(self._move(state, name, new, entry.command, now_ms, told=entry.told))
        return out

    def _move(
        self,
        state: ClientState,
        name: str,
        target: str,
        command: EnterPool,
        now_ms: int,
        *,
        told: str | None = None,
    ) -> Sequence[Action]:
        """Enter ``command`` again at ``target`` (this process or another), answering nobody
        (its client was ``told`` the id of the entry it replaces)."""
        routes = self.routes
        if target != routes.node:
            entry = Waiting(target, command, INTERNAL, told=told)
            routes.waiting.setdefault(state.client_id, {})[name] = entry
            return [routes.send(state, target, command, INTERNAL, now_ms)]
        with contextlib.suppress(MatchmakerError):
            project = routes.project(state)
            _, out = routes.core.enter(state.client_id, project, command, now_ms)
            return [Deliver(out)]
        return NOTHING
