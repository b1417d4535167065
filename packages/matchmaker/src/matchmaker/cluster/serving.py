"""The remote clients a member serves, sans I/O: each through a proxy conversation.

A client's request whose pool, room or session lives on this member comes from
its home as a :class:`~.messages.Command`: it runs through the client's proxy (a
:class:`~matchmaker.core.conversation.Conversation` adopted on first use), and
the answers go back to the home first, before the events (the home must see
``pool.entered`` before ``session.created``; a refused party's ``pool.enter`` goes
back through the party's holder that passed it on). The home says when the client is
away, back or gone, and when it was matched elsewhere (its entries here are
withdrawn). The proxies are in the shared :class:`~.routes.Routes`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from matchmaker.cluster import codec
from matchmaker.cluster.messages import Answers, Away, Back, Command, Gone, Withdraw
from matchmaker.cluster.routes import NOTHING, Action, Deliver, Post, Routes
from matchmaker.core import Delivery
from matchmaker.core.effects import Close, Refuse, ReplyWith
from matchmaker.core.events import EntryWithdrawn
from matchmaker.core.placement import moves
from matchmaker.errors import internal_error

__all__ = ["Serving"]

_log = logging.getLogger("matchmaker.cluster")


class Serving:
    """What a member does, on the routing state, for the remote clients it serves."""

    def __init__(self, routes: Routes) -> None:
        self.routes = routes

    def withdraw(self, client_id: str) -> Sequence[Action]:
        """The client was matched elsewhere: withdraw its entries held here (one held for
        a backfill elsewhere too: seated meanwhile, its host takes it out again, as for an
        entry left while it is offered)."""
        state = self.routes.core.clients.get(client_id)
        if state is None:
            return NOTHING
        out: list[Delivery] = []
        for name in list(state.entries):
            entry_id, dropped = self.routes.core.leave_pool(client_id, name)
            out.extend(dropped)
            out.append(((client_id,), EntryWithdrawn(name, entry_id, "matched")))
        return [Deliver(out)]

    def on_command(
        self, home: str, message: Command, now_ms: int, *, refusals_to: str | None = None
    ) -> Sequence[Action]:
        """Run a forwarded request through the proxy conversation of its client; its answers
        go to its home, a refusal to ``refusals_to`` if given (the member that passed the
        request on and follows what it asked: it relays the refusal home)."""
        routes = self.routes
        client_id = message.client
        moved = _moved(routes, message)
        if moved is not None:
            # Its session moved where its members are before its home heard: passed on.
            return [Post(moved, message)]
        home = routes.home_of(client_id) or home  # (not the sender, when passed on)
        proxy = routes.proxies.get(client_id)
        if proxy is None and client_id in routes.core.resumption.outboxes:
            # Handed over here by its draining home, which still had its socket: served
            # as the local client it is now.
            local = routes.conversation(now_ms)
            moves.serve_handed_over(local, routes.core.clients.get(client_id))
            proxy = (home, local)
        elif proxy is None:
            conversation = routes.conversation(now_ms)
            # The proxy is registered like a local client, so the core's rules (one entry
            # per pool, limits) and its events apply to it unchanged.
            conversation.adopt(
                client_id,
                message.project,
                message.credential,
                message.attributes,
                player_id=message.player_id,
            )
            proxy = routes.proxies[client_id] = (home, conversation)
        request_id = message.request_id
        try:
            command = codec.decode_value(message.command)
            effects = proxy[1].receive(command, request_id, now_ms)
        except Exception:
            _log.exception("unhandled error on a forwarded request")
            effects = [Refuse(request_id, internal_error())]
        out: list[Action] = []
        answers = [e for e in effects if isinstance(e, ReplyWith | Refuse | Close)]
        # The answer first: the home member must see pool.entered before session.created.
        if answers:
            encoded = [codec.encode_effect(e) for e in answers]
            to = home
            if refusals_to is not None and all(isinstance(e, Refuse) for e in answers):
                to = refusals_to
            out.append(Post(to, Answers(client_id, encoded)))
        deliveries = [e for e in effects if isinstance(e, tuple)]
        if deliveries:
            out.append(Deliver(deliveries))
        # The proxy stays until its client disconnects (or its home dies): a mode may keep
        # state for it (a watch, a delegate) beyond entries and sessions.
        return out

    def on_gone(self, sender: str, message: Gone, now_ms: int) -> Sequence[Action]:
        """A remote client served here disconnected for good: its proxy goes too."""
        proxy = self.routes.proxies.pop(message.client, None)
        self.routes.homes.pop(message.client, None)
        return NOTHING if proxy is None else [Deliver(proxy[1].disconnect(now_ms))]

    def on_withdraw(self, sender: str, message: Withdraw, now_ms: int) -> Sequence[Action]:
        """A remote client served here was matched at another member."""
        return self.withdraw(message.client)

    def on_paused(self, sender: str, message: Away | Back, now_ms: int) -> Sequence[Action]:
        """A remote client served here went away or came back: pause or resume it in the
        core, as its home did."""
        routes = self.routes
        client_id, away = message.client, type(message) is Away
        state = routes.core.clients.get(client_id)
        if client_id not in routes.proxies or state is None or state.away == away:
            return NOTHING
        if away:
            return [Deliver(routes.core.suspend(client_id))]
        return [Deliver(routes.core.resume(client_id, now_ms))]


def _moved(routes: Routes, message: Command) -> str | None:
    """The member a request about a session moved away from here went to, if it did."""
    command = message.command
    fields = command[1] if len(command) > 1 else None
    session_id = fields.get("session_id") if isinstance(fields, dict) else None
    if not isinstance(session_id, str) or session_id in routes.core.sessions:
        return None
    host = routes.hosts.get(session_id)
    return host if host is not None and host in routes.live else None
