"""The restart hand-over: a process stopping for a restart leaves its clients to the next.

On a graceful stop with a store (``--store``, with or without a management key;
not with ``--cluster``) every WebSocket is closed with 3001 and reason
``resume``, so each client is parked for the resume grace like a client whose
socket dropped. Once the servers stopped, :func:`hand_over` tells each client
what is not handed over (its pool entries: ``pool.closed {reason: "restart"}``,
numbered into its replay buffer like any event) and writes what a resume needs:

- each parked client: id, Project, attributes, player id, the SHA-256 of its
  resume token (never the token: :func:`~matchmaker.core.resume.token_digest`),
  the deadline of its grace (epoch milliseconds), its last ``seq``, the
  frames of its replay buffer and its ``ack`` (the last ``session.send`` seq
  taken from it, so a send again after the restart is taken once);
- each session with a parked member: id, Project, pool or room, and the members
  with the public data each showed;
- each party of parked members: id, code (an invite, not a credential: it joins
  the party, nothing else), Project, leader and members in the order they joined.

The next process started on the same store takes it (:func:`take_over`, the row
removed in the same transaction, so a hand-over is used once) before it listens:
the clients are away there until the same deadline, their tokens resume them,
the replay continues their ``seq``. A client whose grace ran out meanwhile
leaves as after a grace here (its peers get ``session.member_left``).
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec

from matchmaker.core import Delivery, Matchmaker
from matchmaker.core.parties import Party
from matchmaker.core.placement import moves
from matchmaker.core.resume import FRAME_OVERHEAD_BYTES, Outbox
from matchmaker.model import FilterValue

__all__ = ["RESTART_REASON", "close_entries", "hand_over", "handover_name", "take_over"]

RESTART_REASON = "restart"
"""The reason of the ``pool.closed`` a handed-over client gets for each entry it held."""

VERSION = 1
"""The layout below; a hand-over of another version is not taken (the clients start afresh)."""

_log = logging.getLogger("matchmaker.data")


class _Client(msgspec.Struct, frozen=True):
    client_id: str
    project_id: str
    attributes: dict[str, FilterValue]
    player_id: str | None
    token_sha256: str
    parked_until_ms: int
    seq: int
    frames: list[str]
    ack: int  # the highest session.send seq taken from it (docs/protocol.md, exactly once)


class _Member(msgspec.Struct, frozen=True):
    client_id: str
    public: dict[str, Any] | None


class _Session(msgspec.Struct, frozen=True):
    session_id: str
    project_id: str
    pool: str | None
    room: str | None
    members: list[_Member]


class _Party(msgspec.Struct, frozen=True):
    party_id: str
    code: str
    project_id: str
    leader: str
    members: list[str]  # in the order they joined


class _Handover(msgspec.Struct, frozen=True):
    version: int
    written_ms: int
    clients: list[_Client]
    sessions: list[_Session]
    parties: list[_Party]


def handover_name(port: int) -> str:
    """Which hand-over a process keeps and takes: the one of its data port (the address its
    clients reconnect to), so processes sharing a store do not take each other's."""
    return f"port {port}"


def close_entries(core: Matchmaker, now_ms: int) -> list[Delivery]:
    """Every parked client's entries closed (``pool.closed {reason: "restart"}``): the
    events to deliver before :func:`hand_over` encodes the replay buffers."""
    out: list[Delivery] = []
    for outbox in core.resumption.outboxes.values():
        if outbox.parked_until_ms is not None and outbox.client_id in core.clients:
            out.extend(core.close_entries(outbox.client_id, RESTART_REASON, now_ms))
    return out


def hand_over(core: Matchmaker, now_ms: int) -> str | None:
    """What the next process needs to resume the parked clients, as JSON text (``None``
    when no client is parked). Call :func:`close_entries` and deliver its events first."""
    clients = [
        _Client(
            outbox.client_id,
            outbox.project_id,
            dict(client.attributes),
            client.player_id,
            outbox.token_digest,
            outbox.parked_until_ms,
            outbox.seq,
            list(outbox.frames),
            client.ack,
        )
        for outbox in core.resumption.outboxes.values()
        if outbox.parked_until_ms is not None
        and (client := core.clients.get(outbox.client_id)) is not None
    ]
    if not clients:
        return None
    kept = {client.client_id for client in clients}
    sessions = [
        _Session(
            session.session_id,
            session.project_id,
            session.pool,
            session.room,
            [_Member(cid, member.public) for cid, member in session.members.items()],
        )
        for session in core.sessions.values()
        if kept.issuperset(session.members)
    ]
    held = {party.party_id: party for c in kept for party in core.clients[c].parties.values()}
    parties = [
        _Party(party.party_id, party.code, party.project_id, party.leader, list(party.members))
        for party in held.values()
        if not party.mirror and kept.issuperset(party.members)
    ]
    body = _Handover(VERSION, now_ms, clients, sessions, parties)
    return msgspec.json.encode(body).decode()


def take_over(core: Matchmaker, body: str, now_ms: int) -> list[Delivery]:
    """Take the clients and sessions of a hand-over into ``core``, parked until the
    deadlines they had; then remove those whose grace ran out by ``now_ms``. Returns what
    that removal tells their peers. A hand-over that does not decode is logged and left
    (the clients' resumes are ``resume.expired``, as after a stop without one)."""
    try:
        handover = msgspec.json.decode(body, type=_Handover)
    except msgspec.DecodeError as error:
        _log.warning("the restart hand-over in the store does not decode (%s): not taken", error)
        return []
    if handover.version != VERSION:
        _log.warning(
            "the restart hand-over is version %d, not %d: not taken", handover.version, VERSION
        )
        return []
    bound = core.resumption.bound
    for kept in handover.clients:
        client = core.readmit(kept.client_id, kept.project_id, kept.attributes, kept.player_id)
        moves.carry_ack(client, kept.ack)
        frames = list(kept.frames)
        outbox = Outbox(
            kept.client_id,
            kept.project_id,
            kept.token_sha256,
            frames,
            bound,
            seq=kept.seq,
            parked_until_ms=kept.parked_until_ms,
            kept_bytes=sum(map(len, frames)) + FRAME_OVERHEAD_BYTES * len(frames),
        )
        core.resumption.restore(outbox)
    for session in handover.sessions:
        members = [(core.clients[m.client_id], m.public) for m in session.members]
        core.reopen(session.session_id, session.project_id, (session.pool, session.room), members)
    for record in handover.parties:
        party = moves.with_members(
            Party(record.party_id, record.code, record.project_id, record.leader),
            {cid: core.clients[cid] for cid in record.members},
        )
        core.parties.reopen(party)
    _log.info(
        "took over %d clients, %d sessions and %d parties from the restart hand-over",
        len(handover.clients),
        len(handover.sessions),
        len(handover.parties),
    )
    return core.end_grace(now_ms)[1]
