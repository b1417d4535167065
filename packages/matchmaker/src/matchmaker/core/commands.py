"""What a client asks of the core, as plain values decoded from the wire by the shell.

The data plane's wire module (:mod:`matchmaker.data.protocol`) validates frames
and :mod:`matchmaker.data.translate` turns each request into one of these; the
core never sees JSON. Sizes the core rules on (``public``, relayed ``data``)
are measured by the shell, which holds the encoded bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matchmaker.model import FilterValue

__all__ = [
    "Bye",
    "Command",
    "EnterPool",
    "Hello",
    "JoinSession",
    "LeavePool",
    "LeaveSession",
    "Ping",
    "Pong",
    "Resume",
    "Send",
]


@dataclass(slots=True)
class Resume:
    """``hello.resume``: reconnect-and-resume (not served yet: every token is unknown)."""

    token: str
    last_seq: int = 0


@dataclass(slots=True)
class Hello:
    """The first request of every connection: version, Project, credential, attributes."""

    version: int
    project: str | None = None
    credential: str | None = None
    attributes: dict[str, FilterValue] | None = None
    resume: Resume | None = None


@dataclass(slots=True)
class Ping:
    """Client liveness probe; answered with a pong."""


@dataclass(slots=True)
class Pong:
    """The client's answer to a server ping."""


@dataclass(slots=True)
class Bye:
    """Clean goodbye: the connection closes with 4000."""


@dataclass(slots=True)
class EnterPool:
    """``pool.enter``: a policy, an ad-hoc pool, or neither (the default policy).

    ``public_size`` is the encoded size of ``public`` in bytes.
    """

    policy: str | None = None
    pool: str | None = None
    create: bool = False
    mode: str | None = None
    group_size: int | None = None
    filter: dict[str, FilterValue] | None = None
    ttl_ms: int | None = None
    public: dict[str, Any] | None = None
    public_size: int = 0


@dataclass(slots=True)
class LeavePool:
    """``pool.leave``: withdraw this client's entry from a pool."""

    pool: str


@dataclass(slots=True)
class JoinSession:
    """``session.join``: an ad-hoc room by name, opened with ``create``.

    ``public_size`` is the encoded size of ``public`` in bytes.
    """

    session: str
    create: bool = False
    public: dict[str, Any] | None = None
    public_size: int = 0


@dataclass(slots=True)
class LeaveSession:
    """``session.leave``."""

    session_id: str


@dataclass(slots=True)
class Send:
    """``session.send``: relay ``data`` (encoded JSON, passed on untouched) to members."""

    session_id: str
    data: bytes
    to: list[str] | None = None


Command = Hello | Ping | Pong | Bye | EnterPool | LeavePool | JoinSession | LeaveSession | Send
