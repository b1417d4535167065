"""Between the wire and the core: decoded request Structs to core commands, core
answers and events to the Structs ``docs/protocol.md`` specifies.

The core's values carry no wire names (``groupSize``, ``from``, tags); this
module is the one place that knows both shapes.
"""

from __future__ import annotations

from typing import cast

from msgspec import Raw

from matchmaker.core import commands, events
from matchmaker.core.commands import EnterPool
from matchmaker.data import protocol

__all__ = ["enter_pool", "mode_command", "pool_entered", "session_joined", "wire_event"]


def enter_pool(data: protocol.PoolEnterData) -> EnterPool:
    """The core command for a ``pool.enter`` payload."""
    return EnterPool(
        policy=data.policy,
        pool=data.pool,
        create=data.create,
        mode=data.mode,
        group_size=data.group_size,
        filter=data.filter,
        ttl_ms=data.ttl_ms,
        public=data.public,
        listed=data.listed,
    )


def mode_command(request: protocol.ModeRequest) -> commands.ModeCommand:
    """The core command for a claim, mutual, propose or delegated request."""
    match request:
        case protocol.PoolList(data=d):
            return commands.ListPool(d.pool, d.cursor, d.limit)
        case protocol.PoolWatch(data=d):
            return commands.WatchPool(d.pool, d.watch)
        case protocol.ClaimMake(data=d):
            return commands.MakeClaim(d.pool, d.targets)
        case protocol.PickAdd(data=d):
            return commands.Pick(d.pool, d.target, add=True)
        case protocol.PickRemove(data=d):
            return commands.Pick(d.pool, d.target, add=False)
        case protocol.ProposalCreate(data=d):
            return commands.CreateProposal(d.pool, d.members, d.ttl_ms)
        case protocol.ProposalRespond(data=d):
            return commands.RespondProposal(d.proposal_id, d.accept)
        case protocol.ProposalCancel(data=d):
            return commands.CancelProposal(d.proposal_id)
        case protocol.DelegateAttach(data=d):
            return commands.AttachDelegate(d.pool)
        case protocol.DelegateForm(data=d):
            return commands.FormGroups(d.pool, d.groups)


def pool_entered(answer: events.PoolEntered) -> protocol.PoolEntered:
    """The ``pool.enter`` reply data."""
    return protocol.PoolEntered(
        answer.pool, answer.entry_id, answer.mode, answer.group_size, answer.expires_at
    )


def session_joined(answer: events.SessionJoined) -> protocol.SessionJoined:
    """The ``session.join`` reply data."""
    return protocol.SessionJoined(answer.session_id, answer.created)


def wire_event(event: events.Event) -> protocol.Event | protocol.ModeNotice:
    """The pushed frame of a core event (the shell adds ``seq``)."""
    match event:
        case events.ModeEvent():
            return protocol.ModeNotice(event.KIND, event)
        case events.MessageRelayed():
            # The shell relays what it decoded: ``data`` is the sender's ``Raw`` bytes.
            data = cast(Raw, event.data)
            return protocol.SessionMessage(
                protocol.SessionMessageData(event.session_id, event.sender, data)
            )
        case events.SessionCreated():
            members = [protocol.MemberInfo(m.client_id, m.public) for m in event.members]
            return protocol.SessionCreated(
                protocol.SessionCreatedData(event.session_id, members, event.you, event.pool)
            )
        case events.MemberJoined():
            return protocol.SessionMemberJoined(
                protocol.MemberData(event.session_id, event.client_id, event.public)
            )
        case events.MemberLeft():
            return protocol.SessionMemberLeft(
                protocol.MemberData(event.session_id, event.client_id, reason=event.reason)
            )
        case events.PoolWithdrawn():
            return protocol.PoolWithdrawn(
                protocol.EntryData(event.pool, event.entry_id, event.reason)
            )
        case events.PoolExpired():
            return protocol.PoolExpired(
                protocol.EntryData(event.pool, event.entry_id, event.reason)
            )
