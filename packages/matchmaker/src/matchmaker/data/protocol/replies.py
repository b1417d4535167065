"""Outbound frames that answer a request: :class:`Reply`, its error body and each reply's data.

A reply echoes the request's ``id``; :data:`encode` is the one JSON encoder of
every outbound frame, replies and the events of
:mod:`matchmaker.data.protocol.events`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import Struct

from matchmaker.config import Limits
from matchmaker.model import Balance, RangeRule, Regions, Team

__all__ = [
    "ErrorBody",
    "Heartbeat",
    "HelloReply",
    "IceServer",
    "PolicyInfo",
    "PoolEntered",
    "RelayReply",
    "Reply",
    "SessionJoined",
    "encode",
]


class ErrorBody(Struct, gc=False, omit_defaults=True):
    """``reply.error``: stable dotted ``code``, human ``message``, optional ``details``."""

    code: str
    message: str
    details: dict[str, Any] | None = None


class Reply(Struct, gc=False, tag="reply", tag_field="type", omit_defaults=True):
    """The answer to one request; ``id`` echoes the request's. ``ack``: the last
    ``session.send`` seq the server took from this client, on a resumed ``hello``'s reply
    (other frames get it from the connection, when it changed)."""

    id: str | None
    ok: bool
    data: Any = None
    error: ErrorBody | None = None
    ack: int | None = None


class Heartbeat(Struct, gc=False):
    """How often the server pings, and after how much silence it closes (3002)."""

    interval_ms: int
    timeout_ms: int


class PolicyInfo(
    Struct,
    gc=False,
    omit_defaults=True,
    rename={
        "group_size": "groupSize",
        "min_group_size": "minGroupSize",
        "fill_timeout_ms": "fillTimeoutMs",
    },
):
    """A declared policy as ``hello`` lists it, with the rules a player meets (group sizes,
    fill timeout, range-rule windows, teams, balance, regions: each only when set; never
    its literal filter values)."""

    name: str
    mode: str
    group_size: int
    default: bool
    min_group_size: int | None = None
    fill_timeout_ms: int | None = None
    windows: dict[str, RangeRule] | None = None
    teams: list[Team] | None = None
    balance: Balance | None = None
    regions: Regions | None = None


class IceServer(Struct, gc=False):
    """A STUN/TURN server for peer-to-peer WebRTC, as ``RTCPeerConnection`` takes it."""

    urls: list[str]


class HelloReply(Struct, gc=False):
    """``hello`` reply data: who you are, your Project's rules and the server's limits."""

    client_id: str
    resume_token: str
    project: str
    heartbeat: Heartbeat
    limits: Limits
    policies: list[PolicyInfo]
    lockdown: bool
    resumed: bool = False
    ice_servers: list[IceServer] = []
    player_id: str | None = None


class PoolEntered(Struct, gc=False, rename={"group_size": "groupSize"}):
    """``pool.enter`` reply data; ``expires_at`` is epoch milliseconds."""

    pool: str
    entry_id: str
    mode: str
    group_size: int
    expires_at: int


class RelayReply(Struct, gc=False, omit_defaults=True):
    """``session.send`` and ``rtc.signal`` reply data: ``{}``, or ``duplicate`` when a
    send's ``seq`` was taken before (so it was not relayed again)."""

    duplicate: bool = False


class SessionJoined(Struct, gc=False):
    """``session.join`` reply data; ``created`` tells whether this join opened the room."""

    session_id: str
    created: bool


_ENCODER = msgspec.json.Encoder()
encode = _ENCODER.encode
