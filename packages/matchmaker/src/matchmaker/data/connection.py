"""One WebSocket connection: frames in, core calls, frames out.

Everything a frame triggers runs synchronously (decode, resolve, call the
core, queue the outputs), so frames of one connection are handled in order
and no operation interleaves with another. Outbound frames go to a bounded
per-connection queue drained by the connection's own writer task: delivering
to many members never awaits one slow peer, and a queue that overflows closes
its connection with 3008.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Protocol

import msgspec

from matchmaker.config import ServerConfig
from matchmaker.core import ClientState, Delivery, Event, Matchmaker, current_project, resolve_hello
from matchmaker.data import closecodes
from matchmaker.data.protocol import (
    MODE_REQUESTS,
    REQUEST_DECODER,
    REQUEST_TYPES,
    Bye,
    ErrorBody,
    Heartbeat,
    Hello,
    HelloReply,
    Ping,
    PolicyInfo,
    Pong,
    PoolEnter,
    PoolLeave,
    Reply,
    Request,
    SessionJoin,
    SessionLeave,
    SessionSend,
    decode_envelope,
    encode,
)
from matchmaker.data.ratelimit import TokenBucket
from matchmaker.data.translate import enter_pool, mode_command, pool_entered, session_joined
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.model import Project

__all__ = ["Connection", "Hub"]

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_log = logging.getLogger("matchmaker.data")

# Consecutive rate-limited frames after which the connection is closed with 3029.
ABUSE_LIMIT = 50
_PRE_HELLO = (Hello, Ping, Pong, Bye)
_HELLO_CLOSES = {"auth.invalid_credential", "project.forbidden", "project.not_found"}


class Hub(Protocol):
    """What a connection needs from the data plane that owns it."""

    config: ServerConfig
    directory: ProjectDirectory
    core: Matchmaker

    def attach(self, connection: Connection) -> None:
        """The connection completed ``hello``: route its client's events to it."""
        ...

    def detach(self, connection: Connection) -> None:
        """The connection is closing: its client leaves the core."""
        ...

    def deliver(self, deliveries: list[Delivery]) -> None:
        """Queue the core's outputs on their recipients' connections."""
        ...

    def deliver_one(self, recipients: Sequence[str], event: Event) -> None:
        """Queue one event on each recipient's connection."""
        ...


class Connection:
    """The state and the writer of one accepted WebSocket."""

    __slots__ = (
        "_handshake_timer",
        "_queue",
        "_send",
        "_wake",
        "abuse",
        "client",
        "close_code",
        "close_reason",
        "control",
        "last_ping",
        "last_seen",
        "plane",
        "relay",
        "seq",
    )

    def __init__(self, plane: Hub, send: Send) -> None:
        limits = plane.config.limits
        now = time.monotonic()
        self.plane = plane
        self._send = send
        self._queue: deque[str] = deque()
        self._wake = asyncio.Event()
        self.client: ClientState | None = None
        self.seq = 0
        self.close_code: int | None = None
        self.close_reason = ""
        self.last_seen = now
        self.last_ping = now
        self.control = TokenBucket(limits.control_rate_per_s, limits.control_burst, now)
        self.relay = TokenBucket(limits.send_rate_per_s, limits.send_burst, now)
        self.abuse = 0
        self._handshake_timer = asyncio.get_running_loop().call_later(
            limits.handshake_timeout_s, self.close, closecodes.HANDSHAKE_TIMEOUT, "no hello"
        )

    # -- outbound -------------------------------------------------------------------------

    def push(self, frame: str) -> None:
        """Queue a frame; never blocks. A full queue closes the connection (3008)."""
        if self.close_code is not None:
            return
        if len(self._queue) >= self.plane.config.limits.outbound_queue:
            self.close(closecodes.SLOW_CONSUMER, "outbound queue full")
            return
        self._queue.append(frame)
        self._wake.set()

    def push_event(self, head: str) -> None:
        """Queue an event encoded without its closing brace, adding this client's ``seq``."""
        self.seq += 1
        self.push(f'{head},"seq":{self.seq}}}')

    def reply(self, request_id: str | None, data: Any) -> None:
        self.push(encode(Reply(request_id, True, data)).decode())

    def fail(self, request_id: str | None, error: MatchmakerError) -> None:
        body = ErrorBody(error.code, error.message, error.details)
        self.push(encode(Reply(request_id, False, error=body)).decode())

    def close(self, code: int, reason: str) -> None:
        """Close with ``code`` once queued frames that matter are out; idempotent.

        The client leaves the core at once, so peers stop addressing it.
        """
        if self.close_code is not None:
            return
        self._handshake_timer.cancel()
        self.close_code = code
        self.close_reason = reason
        if code in (closecodes.SLOW_CONSUMER, closecodes.GOING_AWAY):
            self._queue.clear()
        self._wake.set()
        self.plane.detach(self)

    async def write(self) -> None:
        """The writer task: drain the queue, then send the close frame if one is due."""
        queue, send, wake = self._queue, self._send, self._wake
        while True:
            await wake.wait()
            wake.clear()
            while queue:
                await send({"type": "websocket.send", "text": queue.popleft()})
            if self.close_code is not None:
                await send(
                    {
                        "type": "websocket.close",
                        "code": self.close_code,
                        "reason": self.close_reason,
                    }
                )
                return

    # -- inbound --------------------------------------------------------------------------

    def on_frame(self, frame: str | bytes) -> None:
        """Handle one inbound frame completely (synchronously)."""
        if self.close_code is not None:
            return
        now = time.monotonic()
        self.last_seen = now
        limit = self.plane.config.limits.max_frame_bytes
        size = len(frame)
        if size > limit or (
            size * 4 > limit and isinstance(frame, str) and len(frame.encode()) > limit
        ):
            if self._admit(self.control, now, None):
                self.fail(
                    None,
                    MatchmakerError(
                        f"frame larger than {limit} bytes",
                        code="protocol.too_large",
                        details={"limit": limit},
                    ),
                )
            return
        if isinstance(frame, bytes):
            # Frames go out as text: bytes that are not UTF-8 (which a relayed ``data``
            # would carry verbatim) must be refused here, not fail when sent on.
            try:
                frame = frame.decode()
            except UnicodeDecodeError:
                if self._admit(self.control, now, None):
                    self.fail(
                        None, MatchmakerError("frame is not UTF-8", code="protocol.bad_request")
                    )
                return
        try:
            request: Request = REQUEST_DECODER.decode(frame)
        except (msgspec.DecodeError, RecursionError) as error:
            # msgspec raises RecursionError for nesting deeper than it recurses (``Any``
            # and ``Raw`` fields): bad input like any other, not a fault.
            if self._admit(self.control, now, None):
                self._refuse(frame, error)
            return
        kind = type(request)
        if not self._admit(self.relay if kind is SessionSend else self.control, now, request.id):
            return
        try:
            self._dispatch(request)
        except MatchmakerError as error:
            self.fail(request.id, error)
            if kind is Hello and error.code in _HELLO_CLOSES:
                self.close(closecodes.FORBIDDEN, error.code)
        except Exception:
            # A bug must cost one reply, not the connection or the process.
            _log.exception("unhandled error on %s", kind.__name__)
            self.fail(request.id, MatchmakerError("internal error", code="server.internal"))

    def _admit(self, bucket: TokenBucket, now: float, request_id: str | None) -> bool:
        """Spend a token; when there is none, answer ``rate.limited`` (or close 3029)."""
        wait = bucket.take(now)
        if not wait:
            self.abuse = 0
            return True
        self.abuse += 1
        if self.abuse >= ABUSE_LIMIT:
            self.close(closecodes.RATE_LIMITED, "rate limit exceeded repeatedly")
            return False
        retry = max(1, int(wait * 1000 + 0.999))
        self.fail(
            request_id,
            MatchmakerError(
                "too many requests", code="rate.limited", details={"retry_after_ms": retry}
            ),
        )
        return False

    def _refuse(self, frame: str | bytes, error: msgspec.DecodeError | RecursionError) -> None:
        request_id, kind = decode_envelope(frame)
        if isinstance(error, RecursionError):
            coded = MatchmakerError("JSON nested too deeply", code="protocol.bad_request")
        elif isinstance(error, msgspec.ValidationError):
            if kind is not None and kind not in REQUEST_TYPES:
                coded = MatchmakerError(
                    f"unknown message type {kind!r}",
                    code="protocol.unknown_type",
                    details={"type": kind},
                )
            else:
                coded = MatchmakerError(str(error), code="protocol.bad_request")
        else:
            coded = MatchmakerError(f"malformed JSON: {error}", code="protocol.bad_request")
        self.fail(request_id, coded)

    def _dispatch(self, request: Request) -> None:
        client = self.client
        if client is None and not isinstance(request, _PRE_HELLO):
            raise MatchmakerError("send hello first", code="protocol.not_ready")
        match request:
            case SessionSend(data=data):
                assert client is not None
                if len(data.data) > self.plane.config.limits.max_send_bytes:
                    raise self._too_large("session.send data")
                recipients, event = self.plane.core.relay(
                    client.client_id, data.session_id, data.to, data.data
                )
                self.plane.deliver_one(recipients, event)
                if request.id is not None:
                    self.reply(request.id, {})
            case Hello(data=data):
                self._hello(request.id, data)
            case PoolEnter(data=data):
                assert client is not None
                self._check_public(data.public)
                project = self._project(client)
                now_ms = int(time.time() * 1000)
                entered, out = self.plane.core.enter(
                    client.client_id, project, enter_pool(data), now_ms
                )
                self.reply(request.id, pool_entered(entered))
                self.plane.deliver(out)
            case PoolLeave(data=data):
                assert client is not None
                entry_id, out = self.plane.core.leave_pool(client.client_id, data.pool)
                self.reply(request.id, {"pool": data.pool, "entry_id": entry_id})
                self.plane.deliver(out)
            case SessionJoin(data=data):
                assert client is not None
                self._check_public(data.public)
                project = self._project(client)
                joined, out = self.plane.core.join_session(
                    client.client_id, project, data.session, data.create, data.public
                )
                self.reply(request.id, session_joined(joined))
                self.plane.deliver(out)
            case SessionLeave(data=data):
                assert client is not None
                out = self.plane.core.leave_session(client.client_id, data.session_id)
                self.reply(request.id, {"session_id": data.session_id})
                self.plane.deliver(out)
            case _ if isinstance(request, MODE_REQUESTS):
                assert client is not None
                answer, out = self.plane.core.command(
                    client.client_id,
                    self._project(client),
                    mode_command(request),
                    int(time.time() * 1000),
                )
                self.reply(request.id, answer)
                self.plane.deliver(out)
            case Ping():
                self.push(encode({"type": "pong", "id": request.id}).decode())
            case Pong():
                pass
            case Bye():
                self.close(closecodes.BYE, "bye")

    def _check_public(self, public: dict[str, Any] | None) -> None:
        """``public`` is sent to every member (and kept while the client waits or is in a
        session), so it is bounded like a message: ``max_send_bytes`` once encoded."""
        if public is not None and len(encode(public)) > self.plane.config.limits.max_send_bytes:
            raise self._too_large("public")

    def _too_large(self, what: str) -> MatchmakerError:
        limit = self.plane.config.limits.max_send_bytes
        return MatchmakerError(
            f"{what} larger than {limit} bytes", code="protocol.too_large", details={"limit": limit}
        )

    def _project(self, client: ClientState) -> Project:
        return current_project(
            self.plane.directory,
            client.project_id,
            client.credential,
            require_declared=self.plane.config.require_declared_projects,
        )

    def _hello(self, request_id: str | None, data: Any) -> None:
        if self.client is not None:
            raise MatchmakerError("hello was already accepted", code="protocol.bad_request")
        limits = self.plane.config.limits
        if data.v != 1:
            raise MatchmakerError(
                f"protocol version {data.v} is not supported",
                code="protocol.bad_request",
                details={"supported": [1]},
            )
        if len(data.attributes) > limits.max_attributes:
            raise MatchmakerError(
                f"at most {limits.max_attributes} attributes",
                code="protocol.bad_request",
                details={"limit": limits.max_attributes},
            )
        for key, value in data.attributes.items():
            if isinstance(value, str) and len(value) > limits.max_attribute_value_chars:
                raise MatchmakerError(
                    f"attribute {key!r} is too long",
                    code="protocol.bad_request",
                    details={"attribute": key, "limit": limits.max_attribute_value_chars},
                )
        project = resolve_hello(
            self.plane.directory,
            data.project,
            data.credential,
            require_declared=self.plane.config.require_declared_projects,
        )
        if data.resume is not None:
            # Resume is not served yet: every token is unknown.
            self.fail(
                request_id,
                MatchmakerError("no session to resume", code="resume.expired"),
            )
            self.close(closecodes.RESUME_EXPIRED, "resume expired")
            return
        self._handshake_timer.cancel()
        client = self.plane.core.connect(project.id, data.credential, data.attributes)
        self.client = client
        self.plane.attach(self)
        self.reply(
            request_id,
            HelloReply(
                client_id=client.client_id,
                resume_token=secrets.token_urlsafe(18),
                project=project.id,
                heartbeat=Heartbeat(limits.heartbeat_interval_ms, limits.heartbeat_timeout_ms),
                limits=limits,
                policies=[
                    PolicyInfo(p.name, p.mode, p.group_size, p.default) for p in project.policies
                ],
                lockdown=project.lockdown,
            ),
        )
