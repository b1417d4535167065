"""Resume on another member than the token's issuer: a relay there, a tunnel at the issuer.

A resume token names the member that issued it (``<node>.<random>``, see
:mod:`matchmaker.core.resume`), and that member keeps the client: its outbox
(``seq``, replay buffer), its entries and sessions, and the record of which
members hold a proxy of it. ``hello`` with another member's token is not
answered where it arrives: that member (the *relay*) turns the connection into
a pipe to the issuer and writes back whatever the issuer sends. At the issuer
the pipe ends in a *tunnel*: a connection of its data plane like a socket,
whose first request is the ``hello``. So the resume is the issuer's own: the
same take of the token, the same replay, the same ``back`` to session peers;
afterwards the client's requests are served there in the order they were sent
and its events numbered there, so ``seq`` continues and nothing is reordered.

Races are settled by the issuer's single event loop: of two resumes with one
token (at two members, or at one member and the issuer), the first the issuer
handles wins and the other is ``resume.expired``, as on one process; a resume
the issuer handles after the grace ran out is ``resume.expired``, one handled
before stops the grace. When the relay's socket closes, the tunnel closes with
the same code (an unclean drop parks the client at the issuer, as a socket's
would). When the relay member dies, its tunnels close unclean; when the issuer
dies, its relays close and a resume not yet answered is ``resume.expired``.
While Redis is unreachable a frame could be lost on the way, so every tunnel
and relay closes unclean at once; a frame for a tunnel closed meanwhile
(its ``tclose`` lost) is answered with ``tclose``.

Between members (:mod:`.messages`; ``tunnel`` is the tunnel's id, minted by the
relay): :class:`~.messages.TunnelOpen` (the hello), :class:`~.messages.TunnelFrame`
(a frame from the client), :class:`~.messages.TunnelEnd` (the socket closed) go
to the issuer; :class:`~.messages.TunnelOut` (a frame for the client) and
:class:`~.messages.TunnelClose` come back.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, MutableMapping
from typing import Any, Protocol

from matchmaker.asgi import Send
from matchmaker.cluster import codec
from matchmaker.cluster.messages import (
    Message,
    TunnelClose,
    TunnelEnd,
    TunnelFrame,
    TunnelOpen,
    TunnelOut,
)
from matchmaker.core import closecodes
from matchmaker.core.conversation import Conversation, resume_refused
from matchmaker.core.effects import Effect, ResumeElsewhere

__all__ = ["TUNNEL_MESSAGES", "Handoff", "Pipe", "Post"]

TunnelMessage = TunnelOpen | TunnelFrame | TunnelEnd | TunnelOut | TunnelClose
# The messages between members that :meth:`Handoff.handle` takes.
TUNNEL_MESSAGES = (TunnelOpen, TunnelFrame, TunnelEnd, TunnelOut, TunnelClose)

# Write a message to a member's inbox; the callback runs if Redis does not take it.
Post = Callable[[str, Message, Callable[[], None] | None], None]


class Pipe(Protocol):
    """A connection of the data plane, as the handoff uses it (at either end)."""

    conversation: Conversation

    def push(self, frame: str) -> None: ...

    def close(self, code: int, reason: str) -> None: ...

    def on_frame(self, frame: str | bytes) -> None: ...

    def perform(self, effects: list[Effect], now_ms: int) -> None: ...

    def relay_to(self, relay: _Relay) -> None: ...


class Handoff:
    """This member's relays (sockets whose client lives elsewhere) and tunnels (clients
    of this member whose socket is elsewhere)."""

    def __init__(self, node: str, post: Post) -> None:
        self._node = node
        self._post = post
        self._open_remote: Callable[[Send], Pipe] | None = None
        self._ids = itertools.count(1)
        self._relays: dict[str, _Relay] = {}
        # Tunnel id -> (the relay member, the connection that ends the tunnel here).
        self._tunnels: dict[str, tuple[str, Pipe]] = {}

    def bind(self, open_remote: Callable[[Send], Pipe]) -> None:
        """``open_remote(send)``: a new connection of the data plane whose frames and close
        go to ``send``."""
        self._open_remote = open_remote

    # -- the relay's end ------------------------------------------------------------------

    def relay(self, connection: Pipe, effect: ResumeElsewhere) -> None:
        """Hand ``connection`` (its ``hello`` resumes with ``effect.issuer``'s token) over to
        the issuer: its frames go there from now on, what comes back is written to it."""
        tunnel = f"{self._node}-{next(self._ids)}"
        relay = _Relay(self._post, self._relays, tunnel, effect, connection)
        self._relays[tunnel] = relay
        connection.relay_to(relay)
        message = TunnelOpen(
            tunnel, self._node, effect.request_id, codec.encode_value(effect.hello)
        )
        self._post(effect.issuer, message, relay.unreachable)

    # -- inbound --------------------------------------------------------------------------

    def handle(self, message: TunnelMessage, now_ms: int) -> None:
        """A tunnel message from another member (one of :data:`TUNNEL_MESSAGES`)."""
        _HANDLERS[type(message)](self, message, now_ms)

    def _out(self, message: TunnelOut, now_ms: int) -> None:
        relay = self._relays.get(message.tunnel)
        if relay is not None:
            relay.answered = True
            relay.connection.push(message.frame)

    def _closed(self, message: TunnelClose, now_ms: int) -> None:
        relay = self._relays.pop(message.tunnel, None)
        if relay is not None:
            relay.connection.close(message.code, message.reason)

    def _in(self, message: TunnelFrame, now_ms: int) -> None:
        tunnel = message.tunnel
        end = self._tunnels.get(tunnel)
        if end is not None:
            end[1].on_frame(message.frame)
        else:
            # This end closed and its tclose was lost (Redis was away): close that one too.
            relay_node = tunnel.rpartition("-")[0]
            close = TunnelClose(tunnel, closecodes.GOING_AWAY, "tunnel closed")
            self._post(relay_node, close, None)

    def _end(self, message: TunnelEnd, now_ms: int) -> None:
        end = self._tunnels.pop(message.tunnel, None)
        if end is not None:
            end[1].close(message.code, "")

    def _open(self, message: TunnelOpen, now_ms: int) -> None:
        """The issuer's end: a connection for the tunnel, fed the resuming ``hello``."""
        assert self._open_remote is not None, "Handoff.bind was not called"
        tunnel, relay_node = message.tunnel, message.relay
        connection = self._open_remote(self._sender(relay_node, tunnel))
        self._tunnels[tunnel] = (relay_node, connection)
        hello = codec.decode_value(message.hello)
        connection.perform(
            connection.conversation.receive(hello, message.request_id, now_ms), now_ms
        )

    def _sender(self, relay_node: str, tunnel: str) -> Send:
        """The tunnel connection's ``send``: its frames and its close go to the relay."""

        async def send(message: MutableMapping[str, Any]) -> None:
            if tunnel not in self._tunnels:
                return  # the relay's end closed first
            if message["type"] == "websocket.send":
                self._post(relay_node, TunnelOut(tunnel, message["text"]), None)
                return
            del self._tunnels[tunnel]
            self._post(relay_node, TunnelClose(tunnel, message["code"], message["reason"]), None)

        return send

    # -- failures -------------------------------------------------------------------------

    def close_all(self) -> None:
        """Redis is unreachable: frames through a tunnel would be lost, so every tunnel
        and relay closes unclean (a client whose issuer is here is away; each resumes
        once Redis answers again)."""
        tunnels, self._tunnels = self._tunnels, {}
        for _, connection in tunnels.values():
            connection.close(closecodes.GOING_AWAY, "the cluster's Redis is unreachable")
        for relay in list(self._relays.values()):
            relay.unreachable()

    def member_died(self, node: str, now_ms: int) -> None:
        """Close the tunnels whose relay was ``node`` (their clients are away, resumable
        elsewhere) and the relays to ``node`` as issuer (their clients are gone)."""
        for tunnel, (relay_node, connection) in list(self._tunnels.items()):
            if relay_node == node:
                del self._tunnels[tunnel]
                connection.close(closecodes.GOING_AWAY, "the relaying process is gone")
        for relay in [r for r in self._relays.values() if r.issuer == node]:
            relay.issuer_died(now_ms)


class _Relay:
    """One relayed connection: its frames go to the issuer, its end too."""

    __slots__ = ("_post", "_relays", "answered", "connection", "issuer", "request_id", "tunnel")

    def __init__(
        self,
        post: Post,
        relays: dict[str, _Relay],
        tunnel: str,
        resuming: ResumeElsewhere,
        connection: Pipe,
    ) -> None:
        self._post = post
        self._relays = relays  # the member's relays by tunnel id; this one leaves it when it ends
        self.tunnel = tunnel
        self.issuer = resuming.issuer
        self.request_id = resuming.request_id  # the resuming hello's
        self.connection = connection
        self.answered = False  # the issuer wrote something back (its answer to hello first)

    def frame(self, frame: str) -> None:
        self._post(self.issuer, TunnelFrame(self.tunnel, frame), self.unreachable)

    def closed(self, code: int) -> None:
        """The connection here closed: the tunnel at the issuer closes with ``code``."""
        if self._relays.pop(self.tunnel, None) is not None:
            self._post(self.issuer, TunnelEnd(self.tunnel, code), None)

    def unreachable(self) -> None:
        """Redis lost a message to the issuer: close unclean (the client resumes anew)."""
        if self._relays.pop(self.tunnel, None) is not None:
            self.connection.close(closecodes.GOING_AWAY, "the client's process is unreachable")

    def issuer_died(self, now_ms: int) -> None:
        """The client's state died with the issuer: an unanswered resume is
        ``resume.expired``, a resumed client's connection closes."""
        if self._relays.pop(self.tunnel, None) is None:
            return
        if self.answered:
            self.connection.close(closecodes.GOING_AWAY, "the client's process is gone")
        else:
            self.connection.perform(resume_refused(self.request_id), now_ms)


# Each tunnel message and its handler.
_HANDLERS: dict[type, Callable[[Handoff, Any, int], None]] = {
    TunnelOpen: Handoff._open,
    TunnelFrame: Handoff._in,
    TunnelEnd: Handoff._end,
    TunnelOut: Handoff._out,
    TunnelClose: Handoff._closed,
}
