"""What moving clients and sessions between processes does to the core's tables.

The cluster moves a session to the member most of its players are connected to,
re-hosts it when its host dies and hands a draining member's clients over
(:mod:`matchmaker.cluster.placement`); a restart hands them to the next process
through the store (:mod:`matchmaker.data.handover`). Those shells decide *where*;
these operations are *what it does* to the records, kept in the core so that only
the core writes its state (``tests/matchmaker/test_core_ownership.py``).
"""

from __future__ import annotations

from typing import Any

from matchmaker.core.conversation import Conversation
from matchmaker.core.engine import Matchmaker
from matchmaker.core.parties import Party
from matchmaker.core.state import ClientState, Member, Origin, Session

__all__ = [
    "carry_ack",
    "confirm_identity",
    "drop_if_empty",
    "host_here",
    "release",
    "seat",
    "serve_handed_over",
    "with_members",
]


def release(core: Matchmaker, session: Session) -> None:
    """``session`` moved to another member: no longer hosted (nor backfilled) here."""
    for member in session.members.values():
        member.client.sessions.pop(session.session_id, None)
    del core.sessions[session.session_id]
    core.backfills.cancel(session.session_id)


def host_here(
    core: Matchmaker, session_id: str, project_id: str, pool: str | None, origin: Origin | None
) -> Session:
    """The session hosted here under ``session_id``: the one already here, else a new
    one, empty until its members are seated (:func:`seat`)."""
    session = core.sessions.get(session_id)
    if session is None:
        session = core.sessions[session_id] = Session(
            session_id, project_id, pool=pool, origin=origin
        )
    return session


def drop_if_empty(core: Matchmaker, session: Session) -> None:
    """A session hosted here that no member came to: forgotten."""
    if not session.members:
        del core.sessions[session.session_id]


def seat(session: Session, client: ClientState, public: Any, untold: bool) -> None:
    """``client`` is a member of ``session`` hosted here; ``untold``: what the session
    says waits until its home told it of the session."""
    session.members[client.client_id] = Member(client, public, [] if untold else None)
    client.sessions[session.session_id] = session


def confirm_identity(client: ClientState, credential: str | None, attributes: Any) -> None:
    """A proxy seated before its home spoke for it takes the identity its home sent."""
    client.credential, client.attributes = credential, dict(attributes)


def carry_ack(client: ClientState, ack: int) -> None:
    """The last ``session.send`` seq the client's previous process took: its numbered
    sends are taken once here too."""
    client.ack = ack


def with_members(party: Party, members: dict[str, ClientState]) -> Party:
    """A handed-over party with its members (clients the core took back)."""
    party.members = members
    return party


def serve_handed_over(conversation: Conversation, client: ClientState | None) -> None:
    """A client handed over here by its draining home, which still had its socket:
    served through ``conversation`` as the local client it now is."""
    conversation.client = client
