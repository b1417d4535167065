"""What the shell must do after feeding the core: the core's only outputs.

A :class:`~matchmaker.core.conversation.Conversation` returns an ordered list of
effects; the shell performs them in order (so a reply precedes the events it
caused, and an error reply precedes the close it explains).
"""

from __future__ import annotations

from dataclasses import dataclass

from matchmaker.core.commands import Greet
from matchmaker.core.events import Answer, Delivery
from matchmaker.errors import MatchmakerError

__all__ = [
    "Close",
    "Effect",
    "OpenChannel",
    "PingClient",
    "Refuse",
    "Replay",
    "ReplyWith",
    "ResumeElsewhere",
]


@dataclass(slots=True)
class ReplyWith:
    """Answer the request ``request_id`` with success."""

    request_id: str | None
    answer: Answer


@dataclass(slots=True)
class Refuse:
    """Answer the request ``request_id`` (``None``: an undecodable frame) with an error."""

    request_id: str | None
    error: MatchmakerError


@dataclass(slots=True)
class Close:
    """Close the connection with a WebSocket close ``code`` (:mod:`.closecodes`)."""

    code: int
    reason: str


@dataclass(slots=True)
class PingClient:
    """Send the client a heartbeat ping: it has been silent for a heartbeat interval."""


@dataclass(frozen=True, slots=True)
class Replay:
    """Send a resumed client the event frames it missed (already numbered), after telling
    it of the events lost for good (``missed``: first and last seq), if any."""

    frames: list[str]
    missed: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class OpenChannel:
    """Answer the WebRTC ``sdp`` offer of request ``request_id`` with a server-side peer
    whose data channel carries the protocol as a new connection (the shell's I/O)."""

    request_id: str | None
    sdp: str


@dataclass(frozen=True, slots=True)
class ResumeElsewhere:
    """``hello`` (request ``request_id``) resumes with a token another cluster member
    issued: that member has the client, so the shell hands the connection over to it."""

    request_id: str | None
    hello: Greet
    issuer: str


Effect = ReplyWith | Refuse | Close | PingClient | Replay | OpenChannel | ResumeElsewhere | Delivery
