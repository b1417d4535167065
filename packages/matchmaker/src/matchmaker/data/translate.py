"""Between the wire and the core: decoded request Structs to core commands, core
answers and events to the frames ``docs/protocol.md`` specifies.

The core's values carry no wire names (``groupSize``, ``from``, tags); this
module is the one place that knows both shapes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, cast

from msgspec import Raw

from matchmaker.core import commands, events
from matchmaker.core.commands import ClientCommand
from matchmaker.data.protocol import events as wire_events
from matchmaker.data.protocol import replies, requests
from matchmaker.data.protocol.replies import encode
from matchmaker.errors import MatchmakerError
from matchmaker.model import MatchmakingPolicy, RangeRule

__all__ = [
    "PING_FRAME",
    "command",
    "error_frame",
    "event_head",
    "partial_frame",
    "reply_frame",
]

PING_FRAME = encode(wire_events.ServerPing()).decode()
"""The server's heartbeat ping (``{"type":"ping"}``): no ``seq``, it is not an event."""


def command(request: requests.Request) -> ClientCommand:
    """The core command for a decoded request."""
    return _COMMANDS[type(request)](request)


def _send(request: requests.SessionSend) -> commands.Send:
    data = request.data
    return commands.Send(data.session_id, data.data, data.to, request.seq)


def _enter_pool(request: requests.PoolEnter) -> commands.EnterPool:
    data = request.data
    return commands.EnterPool(
        policy=data.policy,
        pool=data.pool,
        create=data.create,
        mode=data.mode,
        group_size=data.group_size,
        filter=data.filter,
        min_group_size=data.min_group_size,
        fill_timeout_ms=data.fill_timeout_ms,
        teams=None if data.teams is None else list(data.teams),
        balance=data.balance,
        regions=data.regions,
        latencies=data.latencies,
        ttl_ms=data.ttl_ms,
        public=data.public,
        public_size=_size(data.public),
        listed=data.listed,
        party_id=data.party_id,
    )


def _join_session(request: requests.SessionJoin) -> commands.JoinSession:
    data = request.data
    return commands.JoinSession(
        data.session, data.create, data.public, public_size=_size(data.public)
    )


def _hello(request: requests.Hello) -> commands.Greet:
    data, resume = request.data, request.data.resume
    return commands.Greet(
        data.v,
        data.project,
        data.credential,
        dict(data.attributes),
        None if resume is None else commands.ResumeFrom(resume.token, resume.last_seq),
    )


# One converter per request type: a new request adds its Struct, its command and a line here.
_COMMANDS: dict[type, Callable[[Any], ClientCommand]] = {
    requests.SessionSend: _send,
    requests.PoolEnter: _enter_pool,
    requests.PoolLeave: lambda request: commands.LeavePool(request.data.pool),
    requests.SessionJoin: _join_session,
    requests.SessionLeave: lambda request: commands.LeaveSession(request.data.session_id),
    requests.SessionBackfill: lambda request: commands.Backfill(
        request.data.session_id, request.data.seats
    ),
    requests.Hello: _hello,
    requests.Ping: lambda _: commands.CheckAlive(),
    requests.Pong: lambda _: commands.AnswerPing(),
    requests.Bye: lambda _: commands.SayGoodbye(),
    requests.RtcSignal: lambda r: commands.Signal(r.data.session_id, r.data.to, r.data.signal),
    requests.RtcOffer: lambda r: commands.OfferChannel(r.data.sdp),
    requests.PoolList: lambda r: commands.ListPool(r.data.pool, r.data.cursor, r.data.limit),
    requests.PoolWatch: lambda r: commands.WatchPool(r.data.pool, r.data.watch),
    requests.ClaimMake: lambda r: commands.MakeClaim(r.data.pool, r.data.targets),
    requests.PickAdd: lambda r: commands.Pick(r.data.pool, r.data.target, add=True),
    requests.PickRemove: lambda r: commands.Pick(r.data.pool, r.data.target, add=False),
    requests.ProposalCreate: lambda r: commands.CreateProposal(
        r.data.pool, r.data.members, r.data.ttl_ms
    ),
    requests.ProposalRespond: lambda r: commands.RespondProposal(r.data.proposal_id, r.data.accept),
    requests.ProposalCancel: lambda r: commands.CancelProposal(r.data.proposal_id),
    requests.DelegateAttach: lambda r: commands.AttachDelegate(r.data.pool),
    requests.DelegateForm: lambda r: commands.FormGroups(r.data.pool, r.data.groups),
    requests.PartyCreate: lambda _: commands.CreateParty(),
    requests.PartyJoin: lambda r: commands.JoinParty(r.data.code),
    requests.PartyLeave: lambda r: commands.LeaveParty(r.data.party_id),
}


def _size(public: dict[str, Any] | None) -> int:
    """The encoded size of a ``public`` object: what every member will receive."""
    return 0 if public is None else len(encode(public))


def reply_frame(request_id: str | None, answer: events.Answer) -> str:
    """The frame answering request ``request_id`` with ``answer``."""
    if type(answer) is events.Alive:
        return encode({"type": "pong", "id": request_id}).decode()
    ack = answer.ack if type(answer) is events.Welcome else None
    return encode(replies.Reply(request_id, True, _answer_data(answer), ack=ack)).decode()


def error_frame(request_id: str | None, error: MatchmakerError) -> str:
    """The frame answering request ``request_id`` (``None``: unknown) with ``error``."""
    body = replies.ErrorBody(error.code, error.message, error.details)
    return encode(replies.Reply(request_id, False, error=body)).decode()


_DUPLICATE = replies.RelayReply(duplicate=True)


def _answer_data(answer: events.Answer) -> object:
    match answer:
        case events.Relayed():
            return _DUPLICATE if answer.duplicate else {}
        case events.EnteredPool():
            return replies.PoolEntered(
                answer.pool, answer.entry_id, answer.mode, answer.group_size, answer.expires_at
            )
        case events.JoinedSession():
            return replies.SessionJoined(answer.session_id, answer.created)
        case events.PoolLeft():
            return {"pool": answer.pool, "entry_id": answer.entry_id}
        case events.SessionLeft():
            return {"session_id": answer.session_id}
        case events.Backfilled():
            return {
                "session_id": answer.session_id,
                "filled": answer.filled,
                "pending": answer.pending,
            }
        case events.Welcome():
            limits, project = answer.limits, answer.project
            return replies.HelloReply(
                client_id=answer.client_id,
                resume_token=answer.resume_token,
                project=project.id,
                heartbeat=replies.Heartbeat(
                    limits.heartbeat_interval_ms, limits.heartbeat_timeout_ms
                ),
                limits=limits,
                policies=[_policy_info(p) for p in project.policies],
                lockdown=project.lockdown,
                resumed=answer.resumed,
                ice_servers=[replies.IceServer([url]) for url in answer.ice_servers],
                player_id=answer.player_id,
            )
        case events.Alive():
            return None
        case events.ModeAnswer():
            return answer


def event_head(event: events.Event) -> str:
    """The pushed frame of a core event without its closing brace: the shell appends
    each recipient's ``seq``, so one encoding serves every recipient.

    A relayed message (one per ``session.send``) is not encoded: its frame is the
    session's and sender's prefix, kept, then the sender's ``data`` as it arrived."""
    if type(event) is events.MessageRelayed:
        # ``data`` is the sender's ``Raw`` bytes (no cast: it is a call, on every message).
        data: Raw = event.data  # type: ignore[assignment]
        return _message_prefix(event.session_id, event.sender) + str(data, "utf-8") + "}"
    return encode(_wire_event(event))[:-1].decode()


_SENTINEL_TAIL = "0}}"


@functools.lru_cache(maxsize=4096)
def _message_prefix(session_id: str, sender: str) -> str:
    """A ``session.message`` frame up to its ``data``: encoded from the protocol's Structs
    with a one-byte ``data``, which is cut off (the shape stays the protocol's). Kept per
    (session, sender) in a bounded cache, since every message of a pair shares it."""
    data = wire_events.SessionMessageData(session_id, sender, Raw(b"0"))
    whole = encode(wire_events.SessionMessage(data)).decode()
    return whole[: -len(_SENTINEL_TAIL)]


def _wire_event(event: events.Event) -> wire_events.EventFrame | wire_events.ModeNotice:
    # Cases by how often they occur. A relayed message takes event_head's shortcut; its
    # case here is the shape that shortcut must produce (tests/matchmaker/data/test_translate.py).
    match event:
        case events.MessageRelayed():
            # The shell relays what it decoded: ``data`` is the sender's ``Raw`` bytes.
            data = cast(Raw, event.data)
            return wire_events.SessionMessage(
                wire_events.SessionMessageData(event.session_id, event.sender, data)
            )
        case events.ModeEvent():
            return wire_events.ModeNotice(event.KIND, event)
        case events.SignalRelayed():
            signal = cast(Raw, event.signal)
            return wire_events.RtcSignalled(
                wire_events.SignalData(event.session_id, event.sender, signal)
            )
        case events.SessionFormed():
            members = [
                wire_events.MemberInfo(m.client_id, m.public, m.player_id) for m in event.members
            ]
            return wire_events.SessionCreated(
                wire_events.SessionCreatedData(
                    event.session_id, members, event.you, event.pool, event.teams, event.region
                )
            )
        case events.MemberJoined():
            return wire_events.SessionMemberJoined(
                wire_events.MemberData(
                    event.session_id,
                    event.client_id,
                    event.public,
                    player_id=event.player_id,
                    team=event.team,
                )
            )
        case events.MemberLeft():
            return wire_events.SessionMemberLeft(
                wire_events.MemberData(event.session_id, event.client_id, reason=event.reason)
            )
        case events.EntryWithdrawn():
            return wire_events.PoolWithdrawn(
                wire_events.EntryData(event.pool, event.entry_id, event.reason)
            )
        case events.EntryExpired():
            return wire_events.PoolExpired(
                wire_events.EntryData(event.pool, event.entry_id, event.reason)
            )
        case events.EntryPoolClosed():
            return wire_events.PoolClosed(
                wire_events.EntryData(event.pool, event.entry_id, event.reason)
            )
        case events.Note():  # the plane hands notes to the cluster before encoding anything
            raise TypeError(f"{type(event).__name__} is a note for the cluster, not a frame")


def partial_frame(first: int, last: int) -> str:
    """The ``resume.partial`` frame (no ``seq``: it reports a gap, it is not an event)."""
    return encode({"type": "resume.partial", "data": {"from_seq": first, "to_seq": last}}).decode()


def _policy_info(policy: MatchmakingPolicy) -> replies.PolicyInfo:
    """A policy as ``hello`` lists it: its rules, without its literal filter values."""
    windows = {k: v for k, v in (policy.filter or {}).items() if isinstance(v, RangeRule)}
    return replies.PolicyInfo(
        policy.name,
        policy.mode,
        policy.group_size,
        policy.default,
        policy.min_group_size,
        policy.fill_timeout_ms,
        windows or None,
        None if policy.teams is None else list(policy.teams),
        policy.balance,
        policy.regions,
    )
