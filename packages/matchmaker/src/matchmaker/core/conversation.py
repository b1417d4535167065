"""One client's conversation with the matchmaker, sans I/O: the protocol's rules.

A :class:`Conversation` is fed what arrived on one connection (a decoded
command, an undecodable frame, the passing of time) and returns the
:mod:`effects <matchmaker.core.effects>` the shell must carry out. It owns the
handshake state, the per-connection rate limits, the heartbeat rule and the
checks each request must pass before it reaches the shared
:class:`~matchmaker.core.engine.Matchmaker`. The core reads no clock and keeps
none: every call that needs the time is given it, ``now_ms`` (epoch
milliseconds, what entries' expiry, the modes' timers and the protocol's
``expires_at`` count in), for limits, liveness, expiry and tokens alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from matchmaker.core import closecodes
from matchmaker.core.admission.checks import check_attributes, check_pool
from matchmaker.core.admission.ratelimit import TokenBucket
from matchmaker.core.commands import (
    MODE_COMMANDS,
    PARTY_COMMANDS,
    AnswerPing,
    Backfill,
    CheckAlive,
    ClientCommand,
    EnterPool,
    Greet,
    JoinSession,
    LeavePool,
    LeaveSession,
    ModeCommand,
    OfferChannel,
    PartyCommand,
    ResumeFrom,
    SayGoodbye,
    Send,
    Signal,
)
from matchmaker.core.effects import (
    Close,
    Effect,
    OpenChannel,
    PingClient,
    Refuse,
    Replay,
    ReplyWith,
    ResumeElsewhere,
)
from matchmaker.core.engine import Matchmaker
from matchmaker.core.events import (
    Alive,
    Delivery,
    PoolLeft,
    Relayed,
    SessionLeft,
    Welcome,
)
from matchmaker.core.projects import current_project, resolve_hello
from matchmaker.core.state import ClientState
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.model import FilterValue, Project

__all__ = ["ABUSE_LIMIT", "PROTOCOL_VERSION", "Conversation", "resume_refused"]

PROTOCOL_VERSION = 1
# Consecutive rate-limited frames after which the connection is closed with 3029.
ABUSE_LIMIT = 50
# A hello refused for one of these closes the connection: retrying as is cannot succeed.
_HELLO_CLOSES = frozenset({"auth.invalid_credential", "project.forbidden", "project.not_found"})


class Conversation:
    """The protocol state of one connection: before ``hello``, then one client of the core."""

    __slots__ = (
        "_abuse",
        "_control",
        "_directory",
        "_home",
        "_ice_servers",
        "_last_ping_ms",
        "_relay",
        "_require_declared",
        "client",
        "core",
    )

    def __init__(
        self,
        core: Matchmaker,
        directory: ProjectDirectory,
        *,
        require_declared: bool,
        now_ms: int,
        ice_servers: tuple[str, ...] = (),
    ) -> None:
        limits = core.limits
        self._ice_servers = ice_servers
        self.core = core
        self._directory = directory
        self._require_declared = require_declared
        self.client: ClientState | None = None
        self._last_ping_ms = now_ms
        self._control = TokenBucket(limits.control_rate_per_s, limits.control_burst, now_ms)
        self._relay = TokenBucket(limits.send_rate_per_s, limits.send_burst, now_ms)
        self._abuse = 0
        # False for a proxy (:meth:`adopt`): its client's home took each numbered send.
        self._home = True

    @property
    def last_seen_ms(self) -> int:
        """When the client was last heard: every frame is charged to one of the two token
        buckets, which stamp the time they were charged (so no third copy of it is kept
        in step on the per-message path)."""
        return max(self._control.stamp_ms, self._relay.stamp_ms)

    # -- inbound --------------------------------------------------------------------------

    def receive(self, command: ClientCommand, request_id: str | None, now_ms: int) -> list[Effect]:
        """Handle one decoded request that arrived at ``now_ms``."""
        # The per-message path (every relayed message comes through here): the bucket and
        # the handler are picked inline, not through admit() and a dispatch method.
        kind = type(command)
        bucket = self._relay if kind in _RELAYED else self._control
        refused = self._admit(bucket, now_ms, request_id)
        if refused is not None:
            return refused
        try:
            if self.client is None and kind not in _PRE_HELLO:
                raise _not_ready()
            return _HANDLERS[kind](self, command, request_id, now_ms)
        except MatchmakerError as error:
            if kind is Greet and error.code in _HELLO_CLOSES:
                return [Refuse(request_id, error), Close(closecodes.FORBIDDEN, error.code)]
            if isinstance(command, Send) and command.seq is not None:
                error = _numbered(error, command.seq)
            return [Refuse(request_id, error)]

    def relay_message(
        self,
        session_id: str,
        to: list[str] | None,
        data: bytes,
        request_id: str | None,
        now_ms: int,
        *,
        seq: int | None = None,
    ) -> list[Effect]:
        """``session.send`` as the shell decoded it: what :meth:`receive` does for a
        :class:`Send` (the relay bucket, hello first, the send ``seq``, the size limit,
        membership), without building the command or dispatching on its type, on the path
        every relayed message takes."""
        wait_ms = self._relay.take(now_ms)  # what _admit does, one call fewer
        if wait_ms:
            return self._limited(wait_ms, request_id, seq)
        self._abuse = 0
        client = self.client
        try:
            if client is None:
                raise _not_ready()
            if seq is not None:
                answered = _sequence(client, seq, request_id)
                if answered is not None:
                    return answered
            return self._relayed(client, session_id, to, data, request_id)
        except MatchmakerError as error:
            return [Refuse(request_id, error if seq is None else _numbered(error, seq))]

    def sequence(self, send: Send, request_id: str | None) -> list[Effect] | None:
        """Take the numbered ``send`` (``send.seq`` set) from this connection's client:
        ``None`` when it is the next one (its ``ack`` moves on: relay it), else the answer
        that stands for relaying it (a duplicate's, or a gap's refusal). A cluster member
        calls this before forwarding the send to the member that hosts its session, which
        relays it without taking its ``seq`` again (which its error replies still name)."""
        assert send.seq is not None
        try:
            return _sequence(self._client(), send.seq, request_id)
        except MatchmakerError as error:
            return [Refuse(request_id, _numbered(error, send.seq))]

    def admit(
        self, command: ClientCommand, request_id: str | None, now_ms: int
    ) -> list[Effect] | None:
        """Charge ``command`` to this client's rate limits: ``None`` when admitted, else the
        refusal. The client was heard at ``now_ms`` either way. (A cluster member charges a
        request here before sending it to another process, so the limits and the
        heartbeat hold per client, wherever its requests are served.)"""
        return self._admit(
            self._relay if type(command) in _RELAYED else self._control, now_ms, request_id
        )

    def refuse(self, request_id: str | None, error: MatchmakerError, now_ms: int) -> list[Effect]:
        """A frame the shell could not decode: answer ``error``, rate-limited like a request."""
        refused = self._admit(self._control, now_ms, request_id)
        return refused if refused is not None else [Refuse(request_id, error)]

    def adopt(
        self,
        client_id: str,
        project_id: str,
        credential: str | None,
        attributes: dict[str, FilterValue],
        *,
        player_id: str | None = None,
    ) -> None:
        """Speak for a client another cluster member connected (a *proxy*, its id minted
        there): registered with the core like a local client, its requests forwarded here
        pass the same protocol rules (but a numbered send's ``seq``, which its home took)
        and core calls, and its events reach it."""
        client = ClientState(
            client_id, project_id, credential, dict(attributes), player_id=player_id
        )
        self.core.clients[client_id] = client
        self.client = client
        self._home = False

    def replaced(self) -> None:
        """The client resumed on another connection: this one no longer speaks for it
        (closing it must not disconnect or park the client)."""
        self.client = None

    def handshake_expired(self) -> list[Effect]:
        """The handshake timeout passed: close unless ``hello`` was accepted."""
        if self.client is not None:
            return []
        return [Close(closecodes.HANDSHAKE_TIMEOUT, "no hello")]

    def heartbeat(self, now_ms: int) -> Effect | None:
        """Liveness at ``now_ms``: close a client silent past the timeout, ping one silent
        for an interval (once per interval). A busy client is never pinged."""
        limits = self.core.limits
        silent_ms = now_ms - self.last_seen_ms
        if silent_ms > limits.heartbeat_timeout_ms:
            return Close(closecodes.HEARTBEAT_TIMEOUT, "heartbeat timeout")
        interval_ms = limits.heartbeat_interval_ms
        if silent_ms >= interval_ms and now_ms - self._last_ping_ms >= interval_ms:
            self._last_ping_ms = now_ms
            return PingClient()
        return None

    def disconnect(self, now_ms: int, *, resumable: bool = False) -> list[Delivery]:
        """The connection is gone at ``now_ms``. After a clean close the client leaves its
        pools and sessions now; after an unclean one (``resumable``) it is away until
        ``now_ms`` plus the resume grace: entries paused, session peers told, events kept
        for replay."""
        client, self.client = self.client, None
        if client is None:
            return []
        if resumable and self.core.resumption.park(client.client_id, now_ms):
            return self.core.suspend(client.client_id)
        self.core.resumption.forget(client.client_id)
        return self.core.disconnect(client.client_id, now_ms)

    # -- rules ----------------------------------------------------------------------------

    def _admit(
        self, bucket: TokenBucket, now_ms: int, request_id: str | None
    ) -> list[Effect] | None:
        """Spend a token: ``None`` when there was one, else a ``rate.limited`` refusal (or,
        after :data:`ABUSE_LIMIT` refusals in a row, a close with 3029)."""
        wait_ms = bucket.take(now_ms)
        if not wait_ms:
            self._abuse = 0
            return None
        return self._limited(wait_ms, request_id)

    def _limited(
        self, wait_ms: float, request_id: str | None, seq: int | None = None
    ) -> list[Effect]:
        """A frame over its rate limit (the bucket has a token in ``wait_ms``); ``seq``: a
        numbered send's, not taken (the reply names it)."""
        self._abuse += 1
        if self._abuse >= ABUSE_LIMIT:
            return [Close(closecodes.RATE_LIMITED, "rate limit exceeded repeatedly")]
        retry = max(1, int(wait_ms + 0.999))
        details: dict[str, object] = {"retry_after_ms": retry}
        if seq is not None:
            details["seq"] = seq
        error = MatchmakerError("too many requests", code="rate.limited", details=details)
        return [Refuse(request_id, error)]

    # One handler per command, given the time the request arrived; ``self.client`` is set
    # for all but the pre-hello ones.

    def _send(self, command: Send, request_id: str | None, now_ms: int) -> list[Effect]:
        client = self._client()
        if command.seq is not None and self._home:
            answered = _sequence(client, command.seq, request_id)
            if answered is not None:
                return answered
        return self._relayed(client, command.session_id, command.to, command.data, request_id)

    def _relayed(
        self,
        client: ClientState,
        session_id: str,
        to: list[str] | None,
        data: bytes,
        request_id: str | None,
    ) -> list[Effect]:
        core = self.core
        if len(data) > core.limits.max_send_bytes:
            raise _too_large("session.send data", core.limits.max_send_bytes)
        # The owner's method, not the core's bound alias: on every relayed message, and a
        # method of the class is looked up faster than a bound method kept per instance.
        relayed = core.membership.relay(client.client_id, session_id, to, data)
        if request_id is None:
            return [relayed]
        return [relayed, ReplyWith(request_id, Relayed())]

    def _signal(self, command: Signal, request_id: str | None, now_ms: int) -> list[Effect]:
        client = self._client()
        limit = self.core.limits.max_send_bytes
        if len(command.signal) > limit:
            raise _too_large("rtc.signal signal", limit)
        relayed = self.core.signal(client.client_id, command.session_id, command.to, command.signal)
        if request_id is None:
            return [relayed]
        return [relayed, ReplyWith(request_id, Relayed())]

    def _offer(self, command: OfferChannel, request_id: str | None, now_ms: int) -> list[Effect]:
        if len(command.sdp) > self.core.limits.max_send_bytes:
            raise _too_large("rtc.offer sdp", self.core.limits.max_send_bytes)
        return [OpenChannel(request_id, command.sdp)]

    def _enter_pool(self, command: EnterPool, request_id: str | None, now_ms: int) -> list[Effect]:
        client = self._client()
        self._check_public(command.public_size)
        check_pool(command, self.core.limits)
        project = self._project(client)
        entered, deliveries = self.core.enter(client.client_id, project, command, now_ms)
        out: list[Effect] = [ReplyWith(request_id, entered)]
        out.extend(deliveries)
        return out

    def _leave_pool(self, command: LeavePool, request_id: str | None, now_ms: int) -> list[Effect]:
        client_id = self._client().client_id
        entry_id, deliveries = self.core.leave_pool(client_id, command.pool, command.entry_id)
        out: list[Effect] = [ReplyWith(request_id, PoolLeft(command.pool, entry_id))]
        out.extend(deliveries)
        return out

    def _mode_command(
        self, command: ModeCommand, request_id: str | None, now_ms: int
    ) -> list[Effect]:
        """A claim, mutual, propose or delegated request: the pool's mode rules on it."""
        client = self._client()
        answer, deliveries = self.core.command(
            client.client_id, self._project(client), command, now_ms
        )
        out: list[Effect] = [ReplyWith(request_id, answer)]
        out.extend(deliveries)
        return out

    def _party_command(
        self, command: PartyCommand, request_id: str | None, now_ms: int
    ) -> list[Effect]:
        """``party.create``, ``party.join`` or ``party.leave`` (:mod:`.parties`)."""
        answer, deliveries = self.core.party(self._client().client_id, command, now_ms)
        out: list[Effect] = [ReplyWith(request_id, answer)]
        out.extend(deliveries)
        return out

    def _join_session(
        self, command: JoinSession, request_id: str | None, now_ms: int
    ) -> list[Effect]:
        client = self._client()
        self._check_public(command.public_size)
        project = self._project(client)
        joined, deliveries = self.core.join_session(
            client.client_id, project, command.session, command.create, command.public
        )
        out: list[Effect] = [ReplyWith(request_id, joined)]
        out.extend(deliveries)
        return out

    def _leave_session(
        self, command: LeaveSession, request_id: str | None, now_ms: int
    ) -> list[Effect]:
        client_id = self._client().client_id
        deliveries = self.core.leave_session(client_id, command.session_id, now_ms)
        out: list[Effect] = [ReplyWith(request_id, SessionLeft(command.session_id))]
        out.extend(deliveries)
        return out

    def _backfill(self, command: Backfill, request_id: str | None, now_ms: int) -> list[Effect]:
        answer, deliveries = self.core.backfill(self._client().client_id, command, now_ms)
        out: list[Effect] = [ReplyWith(request_id, answer)]
        out.extend(deliveries)
        return out

    def _ping(self, command: CheckAlive, request_id: str | None, now_ms: int) -> list[Effect]:
        return [ReplyWith(request_id, Alive())]

    def _pong(self, command: AnswerPing, request_id: str | None, now_ms: int) -> list[Effect]:
        return []

    def _bye(self, command: SayGoodbye, request_id: str | None, now_ms: int) -> list[Effect]:
        return [Close(closecodes.BYE, "bye")]

    def _client(self) -> ClientState:
        client = self.client
        assert client is not None
        return client

    def _hello(self, hello: Greet, request_id: str | None, now_ms: int) -> list[Effect]:
        if self.client is not None:
            raise MatchmakerError("hello was already accepted", code="protocol.bad_request")
        limits = self.core.limits
        if hello.version != PROTOCOL_VERSION:
            raise MatchmakerError(
                f"protocol version {hello.version} is not supported",
                code="protocol.bad_request",
                details={"supported": [PROTOCOL_VERSION]},
            )
        project, identity = resolve_hello(
            self._directory,
            hello.project,
            hello.credential,
            require_declared=self._require_declared,
            now_ms=now_ms,
            limits=limits,
            resuming=hello.resume is not None,
        )
        attributes = check_attributes(hello.attributes or {}, identity, limits)
        player_id = None if identity is None else identity.player_id
        if hello.resume is not None:
            issuer = self.core.resumption.elsewhere(hello.resume.token)
            if issuer is not None:
                return [ResumeElsewhere(request_id, hello, issuer)]
            return self._resume(
                hello.resume, project, player_id, request_id, now_ms, credential=hello.credential
            )
        client = self.core.connect(project.id, hello.credential, attributes, player_id)
        self.client = client
        token = self.core.resumption.issue(client.client_id, project.id)
        welcome = Welcome(
            client.client_id,
            token,
            project,
            limits,
            ice_servers=self._ice_servers,
            player_id=player_id,
        )
        return [ReplyWith(request_id, welcome)]

    def _resume(
        self,
        resume: ResumeFrom,
        project: Project,
        player_id: str | None,
        request_id: str | None,
        now_ms: int,
        *,
        credential: str | None,
    ) -> list[Effect]:
        """``hello`` with ``resume``: take back the client of an earlier connection (its
        id, entries, sessions and event numbering), replay what it missed, rotate the
        token. An unknown, used or expired token, one of another Project, or one of a
        client that was another player (token ``sub``), is ``resume.expired`` and closes
        4004: the client must start afresh. The credential this ``hello`` presented (a
        fresh token, say) is the client's from now on, for the checks of later requests."""
        holder = self.core.clients.get(self.core.resumption.holder(resume.token) or "")
        if holder is not None and holder.player_id != player_id:
            return resume_refused(request_id)
        taken = self.core.resumption.take(resume.token, project.id, resume.last_seq)
        if taken is None:
            return resume_refused(request_id)
        client = self.core.clients[taken.outbox.client_id]
        client.credential = credential
        self.client = client
        welcome = Welcome(
            client.client_id,
            taken.token,
            project,
            self.core.limits,
            resumed=True,
            ice_servers=self._ice_servers,
            player_id=client.player_id,
            ack=client.ack,
        )
        out: list[Effect] = [ReplyWith(request_id, welcome), Replay(taken.replay, taken.missed)]
        if taken.was_parked:
            out.extend(self.core.resume(client.client_id, now_ms))
        return out

    def _check_public(self, size: int) -> None:
        """``public`` is sent to every member (and kept while the client waits or is in a
        session), so it is bounded like a message: ``max_send_bytes`` once encoded."""
        if size > self.core.limits.max_send_bytes:
            raise _too_large("public", self.core.limits.max_send_bytes)

    def _project(self, client: ClientState) -> Project:
        return current_project(
            self._directory,
            client.project_id,
            client.credential,
            require_declared=self._require_declared,
        )


def resume_refused(request_id: str | None) -> list[Effect]:
    """The answer to a resume that finds nothing: ``resume.expired``, then close 4004."""
    error = MatchmakerError(
        "nothing to resume: the token is unknown, used, expired or of another Project",
        code="resume.expired",
    )
    return [Refuse(request_id, error), Close(closecodes.RESUME_EXPIRED, "resume expired")]


def _sequence(client: ClientState, seq: int, request_id: str | None) -> list[Effect] | None:
    """The exactly-once rule of a numbered send (docs/protocol.md, "Exactly once"):
    ``None`` when ``seq`` is the next of ``client``'s (taken: relay it); a ``seq`` taken
    before is a duplicate, dropped (answered ``duplicate`` when it has an ``id``); one past
    the next is refused with the ``expected`` seq and not taken (a send was lost)."""
    ack = client.ack
    if seq == ack + 1:
        client.ack = seq
        return None
    if seq <= ack:
        return [] if request_id is None else [ReplyWith(request_id, _DUPLICATE)]
    raise MatchmakerError(
        f"seq {seq} is not the next one ({ack + 1}): a send before it was lost",
        code="protocol.bad_request",
        details={"field": "seq", "expected": ack + 1},
    )


def _numbered(error: MatchmakerError, seq: int) -> MatchmakerError:
    """``error`` answering a numbered send: its ``details`` name the ``seq``."""
    details = dict(error.details or {})
    details["seq"] = seq
    return MatchmakerError(error.message, code=error.code, details=details)


_DUPLICATE = Relayed(duplicate=True)


def _not_ready() -> MatchmakerError:
    return MatchmakerError("send hello first", code="protocol.not_ready")


def _too_large(what: str, limit: int) -> MatchmakerError:
    return MatchmakerError(
        f"{what} larger than {limit} bytes", code="protocol.too_large", details={"limit": limit}
    )


_PRE_HELLO: frozenset[type] = frozenset({Greet, CheckAlive, AnswerPing, SayGoodbye})
# Requests that relay to peers spend the relay token bucket, not the control one.
_RELAYED: frozenset[type] = frozenset({Send, Signal})
# Each command type and its handler: a new request type adds a command class and a line here.
_HANDLERS: dict[type, Callable[[Conversation, Any, str | None, int], list[Effect]]] = {
    Send: Conversation._send,
    Signal: Conversation._signal,
    OfferChannel: Conversation._offer,
    EnterPool: Conversation._enter_pool,
    LeavePool: Conversation._leave_pool,
    JoinSession: Conversation._join_session,
    LeaveSession: Conversation._leave_session,
    Backfill: Conversation._backfill,
    Greet: Conversation._hello,
    CheckAlive: Conversation._ping,
    AnswerPing: Conversation._pong,
    SayGoodbye: Conversation._bye,
    **dict.fromkeys(MODE_COMMANDS, Conversation._mode_command),
    **dict.fromkeys(PARTY_COMMANDS, Conversation._party_command),
}
