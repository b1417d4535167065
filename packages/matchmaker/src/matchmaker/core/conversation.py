"""One client's conversation with the matchmaker, sans I/O: the protocol's rules.

A :class:`Conversation` is fed what arrived on one connection (a decoded
command, an undecodable frame, the passing of time) and returns the
:mod:`effects <matchmaker.core.effects>` the shell must carry out. It owns the
handshake state, the per-connection rate limits, the heartbeat rule and the
checks each request must pass before it reaches the shared
:class:`~matchmaker.core.engine.Matchmaker`. Times are the shell's monotonic
clock (seconds) for limits and liveness; entry TTLs use the wall clock it
passes as ``now_ms``.
"""

from __future__ import annotations

import secrets

from matchmaker.core import closecodes
from matchmaker.core.commands import (
    Bye,
    Command,
    EnterPool,
    Hello,
    JoinSession,
    LeavePool,
    LeaveSession,
    Ping,
    Pong,
    Send,
)
from matchmaker.core.effects import Close, Effect, PingClient, Refuse, Reply
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
from matchmaker.core.ratelimit import TokenBucket
from matchmaker.core.state import ClientState
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.model import Project

__all__ = ["ABUSE_LIMIT", "PROTOCOL_VERSION", "Conversation"]

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
        "_last_ping",
        "_relay",
        "_require_declared",
        "client",
        "core",
        "last_seen",
    )

    def __init__(
        self,
        core: Matchmaker,
        directory: ProjectDirectory,
        *,
        require_declared: bool,
        now: float,
    ) -> None:
        limits = core.limits
        self.core = core
        self._directory = directory
        self._require_declared = require_declared
        self.client: ClientState | None = None
        self.last_seen = now
        self._last_ping = now
        self._control = TokenBucket(limits.control_rate_per_s, limits.control_burst, now)
        self._relay = TokenBucket(limits.send_rate_per_s, limits.send_burst, now)
        self._abuse = 0

    # -- inbound --------------------------------------------------------------------------

    def receive(
        self, command: Command, request_id: str | None, now: float, now_ms: int
    ) -> list[Effect]:
        """Handle one decoded request; ``now_ms`` is wall-clock epoch milliseconds."""
        self.last_seen = now
        refused = self._admit(
            self._relay if type(command) is Send else self._control, now, request_id
        )
        if refused is not None:
            return refused
        try:
            return self._dispatch(command, request_id, now_ms)
        except MatchmakerError as error:
            if type(command) is Hello and error.code in _HELLO_CLOSES:
                return [Refuse(request_id, error), Close(closecodes.FORBIDDEN, error.code)]
            return [Refuse(request_id, error)]

    def refuse(self, request_id: str | None, error: MatchmakerError, now: float) -> list[Effect]:
        """A frame the shell could not decode: answer ``error``, rate-limited like a request."""
        self.last_seen = now
        refused = self._admit(self._control, now, request_id)
        return refused if refused is not None else [Refuse(request_id, error)]

    def handshake_expired(self) -> list[Effect]:
        """The handshake timeout passed: close unless ``hello`` was accepted."""
        if self.client is not None:
            return []
        return [Close(closecodes.HANDSHAKE_TIMEOUT, "no hello")]

    def heartbeat(self, now: float) -> Effect | None:
        """Liveness at ``now``: close a client silent past the timeout, ping one silent for
        an interval (once per interval). A busy client is never pinged."""
        limits = self.core.limits
        silent = now - self.last_seen
        if silent > limits.heartbeat_timeout_ms / 1000:
            return Close(closecodes.HEARTBEAT_TIMEOUT, "heartbeat timeout")
        interval = limits.heartbeat_interval_ms / 1000
        if silent >= interval and now - self._last_ping >= interval:
            self._last_ping = now
            return PingClient()
        return None

    def disconnect(self) -> list[Delivery]:
        """The connection is gone: the client leaves its pools and sessions now."""
        client, self.client = self.client, None
        return [] if client is None else self.core.disconnect(client.client_id)

    # -- rules ----------------------------------------------------------------------------

    def _admit(
        self, bucket: TokenBucket, now: float, request_id: str | None
    ) -> list[Effect] | None:
        """Spend a token: ``None`` when there was one, else a ``rate.limited`` refusal (or,
        after :data:`ABUSE_LIMIT` refusals in a row, a close with 3029)."""
        wait = bucket.take(now)
        if not wait:
            self._abuse = 0
            return None
        self._abuse += 1
        if self._abuse >= ABUSE_LIMIT:
            return [Close(closecodes.RATE_LIMITED, "rate limit exceeded repeatedly")]
        retry = max(1, int(wait * 1000 + 0.999))
        error = MatchmakerError(
            "too many requests", code="rate.limited", details={"retry_after_ms": retry}
        )
        return [Refuse(request_id, error)]

    def _dispatch(self, command: Command, request_id: str | None, now_ms: int) -> list[Effect]:
        match command:
            case Hello():
                if self.client is not None:
                    raise MatchmakerError("hello was already accepted", code="protocol.bad_request")
                return self._hello(command, request_id)
            case Ping():
                return [Reply(request_id, Alive())]
            case Pong():
                return []
            case Bye():
                return [Close(closecodes.BYE, "bye")]
        client = self.client
        if client is None:
            raise MatchmakerError("send hello first", code="protocol.not_ready")
        core, limits = self.core, self.core.limits
        out: list[Effect]
        match command:
            case Send():
                if len(command.data) > limits.max_send_bytes:
                    raise _too_large("session.send data", limits.max_send_bytes)
                out = [core.relay(client.client_id, command.session_id, command.to, command.data)]
                if request_id is not None:
                    out.append(Reply(request_id, Relayed()))
                return out
            case EnterPool():
                self._check_public(command.public_size)
                project = self._project(client)
                entered, deliveries = core.enter(client.client_id, project, command, now_ms)
                out = [Reply(request_id, entered)]
                out.extend(deliveries)
                return out
            case LeavePool():
                entry_id, deliveries = core.leave_pool(client.client_id, command.pool)
                out = [Reply(request_id, PoolLeft(command.pool, entry_id))]
                out.extend(deliveries)
                return out
            case JoinSession():
                self._check_public(command.public_size)
                project = self._project(client)
                joined, deliveries = core.join_session(
                    client.client_id, project, command.session, command.create, command.public
                )
                out = [Reply(request_id, joined)]
                out.extend(deliveries)
                return out
            case LeaveSession():
                deliveries = core.leave_session(client.client_id, command.session_id)
                out = [Reply(request_id, SessionLeft(command.session_id))]
                out.extend(deliveries)
                return out
            case _:
                project = self._project(client)
                answer, deliveries = core.command(client.client_id, project, command, now_ms)
                out = [Reply(request_id, answer)]
                out.extend(deliveries)
                return out

    def _hello(self, hello: Hello, request_id: str | None) -> list[Effect]:
        limits = self.core.limits
        if hello.version != PROTOCOL_VERSION:
            raise MatchmakerError(
                f"protocol version {hello.version} is not supported",
                code="protocol.bad_request",
                details={"supported": [PROTOCOL_VERSION]},
            )
        attributes = hello.attributes or {}
        if len(attributes) > limits.max_attributes:
            raise MatchmakerError(
                f"at most {limits.max_attributes} attributes",
                code="protocol.bad_request",
                details={"limit": limits.max_attributes},
            )
        for key, value in attributes.items():
            if isinstance(value, str) and len(value) > limits.max_attribute_value_chars:
                raise MatchmakerError(
                    f"attribute {key!r} is too long",
                    code="protocol.bad_request",
                    details={"attribute": key, "limit": limits.max_attribute_value_chars},
                )
        project = resolve_hello(
            self._directory,
            hello.project,
            hello.credential,
            require_declared=self._require_declared,
        )
        if hello.resume is not None:
            # Resume is not served yet: every token is unknown.
            error = MatchmakerError("no session to resume", code="resume.expired")
            return [Refuse(request_id, error), Close(closecodes.RESUME_EXPIRED, "resume expired")]
        client = self.core.connect(project.id, hello.credential, attributes)
        self.client = client
        welcome = Welcome(client.client_id, secrets.token_urlsafe(18), project, limits)
        return [Reply(request_id, welcome)]

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


def _too_large(what: str, limit: int) -> MatchmakerError:
    return MatchmakerError(
        f"{what} larger than {limit} bytes", code="protocol.too_large", details={"limit": limit}
    )
