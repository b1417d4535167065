"""One WebSocket connection: the I/O shell around a core :class:`Conversation`, the part
every transport shares.

Frames are decoded here (size, UTF-8, JSON, schema) and fed to the
conversation as commands; the effects it returns are carried out in order.
Everything a frame triggers runs synchronously, so frames of one connection
are handled in order and no operation interleaves with another. Outbound
frames wait in a bounded per-connection queue only while the transport cannot
take them: delivering to many members never awaits one slow peer, and a queue
that overflows closes its connection with 3008.

How frames leave is the transport's: :class:`~matchmaker.data.writer.WriterConnection`
drains the queue from a task through an ASGI-style ``send`` (ASGI servers, WebRTC data
channels, cluster relays); :class:`~matchmaker.data.direct.DirectConnection` writes to a
frame server's socket at once (picows). Both subclass :class:`Connection` and override
:meth:`Connection._wake` alone.

In a cluster, a connection whose client lives on another process (it resumed
with that process's token) becomes a *relay*: its frames go to that process
unread, and what that process sends comes back through :meth:`Connection.push`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

import msgspec

from matchmaker.core import closecodes
from matchmaker.core.commands import ClientCommand
from matchmaker.core.conversation import Conversation
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
from matchmaker.core.events import EnteredPool, Event, MessageRelayed, PoolLeft, Welcome
from matchmaker.data.observer import DataObserver
from matchmaker.data.protocol.requests import (
    REQUEST_DECODER,
    REQUEST_TYPES,
    Request,
    SessionSend,
    decode_envelope,
)
from matchmaker.data.recording import ArrivalRecorder
from matchmaker.data.translate import PING_FRAME, command, error_frame, partial_frame, reply_frame
from matchmaker.errors import MatchmakerError, internal_error

__all__ = ["HARD_CAP_FACTOR", "Connection", "Hub", "Relay"]

# A frame over HARD_CAP_FACTOR x max_frame_bytes is not answered but closed with 1009
# (RFC 6455 "message too big"). hypercorn and picows do that themselves before buffering
# such a frame; a WebRTC data channel has no such option and hands it over whole, so the
# check is here too.
HARD_CAP_FACTOR = 4
_MESSAGE_TOO_BIG = 1009
# Read on every inbound frame (the core's clock, epoch milliseconds, as
# ``jobs.clock.wall_clock_ms``): a module global, not an attribute of ``time`` looked up.
_time_ns = time.time_ns

Forward = Callable[[Conversation, ClientCommand, str | None, int], bool]

_log = logging.getLogger("matchmaker.data")


class Hub(Protocol):
    """What a connection needs from the data plane that owns it."""

    observer: DataObserver
    recorder: ArrivalRecorder | None  # --record-arrivals: told of each pool entered

    def attach(self, connection: Connection, now_ms: int) -> None:
        """The connection completed ``hello``: route its client's events to it."""
        ...

    def detach(self, connection: Connection) -> None:
        """The connection is closing: its client leaves the core."""
        ...

    def deliver_one(self, recipients: Sequence[str], event: Event, now_ms: int) -> None:
        """Queue one event on each recipient's connection (kept for replay as of ``now_ms``)."""
        ...

    def relay_local(self, recipients: list[str], event: MessageRelayed, now_ms: int) -> None:
        """:meth:`deliver_one` for a relayed message, outside a cluster, sent at ``now_ms``
        (the frame's arrival, already read)."""
        ...

    @property
    def forward(self) -> Forward | None:
        """In a cluster: sends a request another process owns there (``True``: sent)."""
        ...

    def open_channel(self, connection: Connection, request_id: str | None, sdp: str) -> None:
        """Answer a WebRTC offer (``rtc.offer``) on ``connection``, in the background."""
        ...

    def resume_elsewhere(
        self, connection: Connection, effect: ResumeElsewhere, now_ms: int
    ) -> None:
        """In a cluster: hand ``connection`` over to the member that issued its token."""
        ...


class Relay(Protocol):
    """Where a relaying connection's inbound frames and its end go (another process)."""

    def frame(self, frame: str) -> None: ...

    def closed(self, code: int) -> None: ...


class Connection:
    """The outbound queue, the close and the decoder of one accepted WebSocket; a
    transport's subclass says how queued frames leave (:meth:`_wake`)."""

    __slots__ = (
        "_ack_due",
        "_ack_sent",
        "_handshake_timer",
        "_hub",
        "_queue",
        "close_code",
        "close_reason",
        "conversation",
        "entered",
        "max_frame_bytes",
        "outbound_limit",
        "relay",
    )

    def __init__(self, hub: Hub, conversation: Conversation) -> None:
        limits = conversation.core.limits
        self._hub = hub
        self.conversation = conversation
        self._queue: deque[str] = deque()
        self.close_code: int | None = None
        self.close_reason = ""
        # Pool name -> (monotonic time of pool.enter, mode): the match-latency histogram's
        # start; at most max_pools_per_client items. (An entry resumed on another
        # connection is matched without a latency observation.)
        self.entered: dict[str, tuple[float, str]] = {}
        self.max_frame_bytes = limits.max_frame_bytes
        self.outbound_limit = limits.outbound_queue
        self.relay: Relay | None = None
        # The client's ack (its last send seq taken) as last told on this connection, and
        # whether a numbered send came in since: then the next frame out says it again.
        self._ack_sent = 0
        self._ack_due = False
        self._handshake_timer = asyncio.get_running_loop().call_later(
            limits.handshake_timeout_s, self._handshake_expired
        )

    @property
    def client_id(self) -> str | None:
        """The core's id for this connection's client, once ``hello`` was accepted."""
        client = self.conversation.client
        return None if client is None else client.client_id

    # -- outbound -------------------------------------------------------------------------

    def push(self, frame: str) -> None:
        """Queue a frame; never blocks. A full queue closes the connection (3008).

        A frame (an object) that leaves after this client's ``ack`` changed carries it, as a
        last member ``"ack": n``: acknowledgements ride on the traffic, never a frame of
        their own."""
        if self.close_code is not None:
            return
        if len(self._queue) >= self.outbound_limit:
            self.close(closecodes.SLOW_CONSUMER, "outbound queue full")
            return
        if self._ack_due:
            frame = self._with_ack(frame)
        self._queue.append(frame)
        self._wake()

    def _with_ack(self, frame: str) -> str:
        """``frame`` with the client's ``ack`` if it changed since last told here."""
        self._ack_due = False
        client = self.conversation.client
        if client is None or client.ack == self._ack_sent:
            return frame
        ack = self._ack_sent = client.ack
        return f'{frame[:-1]},"ack":{ack}}}'

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
        self._wake()
        if self.relay is not None:
            self.relay.closed(code)
        self._hub.detach(self)

    def relay_to(self, relay: Relay) -> None:
        """From now on this connection only carries frames to and from ``relay``: the
        process at its other end speaks the protocol (and times the handshake)."""
        self._handshake_timer.cancel()
        self.relay = relay

    def _wake(self) -> None:
        """A frame was queued or the close is due: the transport sends what it can."""
        raise NotImplementedError

    def perform(self, effects: list[Effect], now_ms: int) -> None:
        """Carry out what the conversation returned at ``now_ms``, in order."""
        # Deliveries go out even once this connection closed: peers' events must not be lost
        # because this client's own queue overflowed.
        deliver_one = self._hub.deliver_one
        for effect in effects:
            # A delivery (the one effect of a relayed message) skips the match's class tests.
            if type(effect) is tuple:
                deliver_one(*effect, now_ms)
                continue
            match effect:
                case ReplyWith(request_id=request_id, answer=answer):
                    self.push(reply_frame(request_id, answer))
                    kind = type(answer)
                    if kind is EnteredPool:
                        assert isinstance(answer, EnteredPool)
                        self.entered[answer.pool] = (time.monotonic(), answer.mode)
                        recorder = self._hub.recorder
                        if recorder is not None and self.conversation.client is not None:
                            recorder.entered(self.conversation.client, answer)
                    elif kind is PoolLeft:
                        assert isinstance(answer, PoolLeft)
                        self.entered.pop(answer.pool, None)
                    elif kind is Welcome and self.close_code is None:
                        assert isinstance(answer, Welcome)
                        self._ack_sent = answer.ack or 0  # a resumed hello's reply says it
                        self._handshake_timer.cancel()
                        self._hub.attach(self, now_ms)
                case Refuse(request_id=request_id, error=error):
                    self._hub.observer.refused(error.code)
                    self.push(error_frame(request_id, error))
                case Close(code=code, reason=reason):
                    self.close(code, reason)
                case PingClient():
                    self.push(PING_FRAME)
                case OpenChannel(request_id=request_id, sdp=sdp):
                    self._hub.open_channel(self, request_id, sdp)
                case ResumeElsewhere():
                    self._hub.resume_elsewhere(self, effect, now_ms)
                case Replay(frames=frames, missed=missed):
                    if missed is not None:
                        self.push(partial_frame(*missed))
                    for frame in frames:
                        self.push(frame)

    def _handshake_expired(self) -> None:
        self.perform(self.conversation.handshake_expired(), _time_ns() // 1_000_000)

    # -- inbound --------------------------------------------------------------------------

    def on_frame(self, frame: str | bytes) -> None:
        """Handle one inbound frame completely (synchronously)."""
        if self.close_code is not None:
            return
        now_ms = _time_ns() // 1_000_000
        conversation = self.conversation
        limit = self.max_frame_bytes
        size = len(frame)
        if size > limit or (
            size * 4 > limit and isinstance(frame, str) and len(frame.encode()) > limit
        ):
            if _byte_size(frame) > HARD_CAP_FACTOR * limit:
                self.close(_MESSAGE_TOO_BIG, "frame too large")
                return
            error = MatchmakerError(
                f"frame larger than {limit} bytes",
                code="protocol.too_large",
                details={"limit": limit},
            )
            self.perform(conversation.refuse(None, error, now_ms), now_ms)
            return
        if isinstance(frame, bytes):
            # Frames go out as text: bytes that are not UTF-8 (which a relayed ``data``
            # would carry verbatim) must be refused here, not fail when sent on.
            try:
                frame = frame.decode()
            except UnicodeDecodeError:
                error = MatchmakerError("frame is not UTF-8", code="protocol.bad_request")
                self.perform(conversation.refuse(None, error, now_ms), now_ms)
                return
        if self.relay is not None:
            self.relay.frame(frame)
            return
        try:
            request: Request = REQUEST_DECODER.decode(frame)
        except (msgspec.DecodeError, RecursionError) as error:
            # msgspec raises RecursionError for nesting deeper than it recurses (``Any``
            # and ``Raw`` fields): bad input like any other, not a fault.
            request_id, coded = _undecodable(frame, error)
            self.perform(conversation.refuse(request_id, coded, now_ms), now_ms)
            return
        forward = self._hub.forward
        try:
            if type(request) is SessionSend and forward is None:
                # The per-message path: no command object, no dispatch on its type.
                data, seq = request.data, request.seq
                if seq is None:
                    effects = conversation.relay_message(
                        data.session_id, data.to, data.data, request.id, now_ms
                    )
                else:
                    self._ack_due = True  # if it is taken, the next frame out says so
                    effects = conversation.relay_message(
                        data.session_id, data.to, data.data, request.id, now_ms, seq=seq
                    )
            else:
                if type(request) is SessionSend and request.seq is not None:
                    self._ack_due = True
                decoded = command(request)
                if forward is not None and forward(conversation, decoded, request.id, now_ms):
                    return
                effects = conversation.receive(decoded, request.id, now_ms)
        except Exception:
            # A bug must cost one reply, not the connection or the process.
            _log.exception("unhandled error on %s", type(request).__name__)
            effects = [Refuse(request.id, internal_error())]
        if len(effects) == 1 and type(effects[0]) is tuple:
            # A delivery alone (perform's first case): a relayed message outside a cluster
            # goes the plane's shortest way.
            recipients, event = effects[0]
            if forward is None and type(event) is MessageRelayed:
                self._hub.relay_local(recipients, event, now_ms)  # type: ignore[arg-type]
            else:
                self._hub.deliver_one(recipients, event, now_ms)
        else:
            self.perform(effects, now_ms)


def _byte_size(frame: str | bytes) -> int:
    return len(frame) if isinstance(frame, bytes) else len(frame.encode())


def _undecodable(
    frame: str, error: msgspec.DecodeError | RecursionError
) -> tuple[str | None, MatchmakerError]:
    """The request id (if one can be read) and the coded error for a frame that failed
    to decode."""
    request_id, kind = decode_envelope(frame)
    if isinstance(error, RecursionError):
        return request_id, MatchmakerError("JSON nested too deeply", code="protocol.bad_request")
    if isinstance(error, msgspec.ValidationError):
        if kind is not None and kind not in REQUEST_TYPES:
            return request_id, MatchmakerError(
                f"unknown message type {kind!r}",
                code="protocol.unknown_type",
                details={"type": kind},
            )
        return request_id, MatchmakerError(str(error), code="protocol.bad_request")
    return request_id, MatchmakerError(f"malformed JSON: {error}", code="protocol.bad_request")
