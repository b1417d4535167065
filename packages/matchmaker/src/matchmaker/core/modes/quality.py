"""How good a formed group is, for the match-quality metrics: the spread of each range-rule
attribute and the imbalance of its teams. Read from the session the mode formed, so the
shell observes it without the core being instrumented."""

from __future__ import annotations

from dataclasses import dataclass

from matchmaker.core.modes.teams import number
from matchmaker.core.state import Session
from matchmaker.model import RangeRule

__all__ = ["Quality", "quality"]


@dataclass(frozen=True, slots=True)
class Quality:
    """A formed group's ``policy`` (``None``: an ad-hoc pool), the largest distance
    between two members for each range-rule attribute, and the difference of its teams'
    mean balanced attribute (``None``: no ``balance``)."""

    policy: str | None
    spreads: dict[str, float]
    imbalance: float | None


def quality(session: Session) -> Quality | None:
    """The quality of a session a pool formed (``None``: a room)."""
    origin = session.origin
    if origin is None:
        return None
    spec = origin.spec
    clients = {cid: member.client for cid, member in session.members.items()}
    spreads: dict[str, float] = {}
    for attribute, term in spec.filter:
        if isinstance(term, RangeRule) and clients:
            values = [number(client, attribute) for client in clients.values()]
            spreads[attribute] = max(values) - min(values)
    imbalance = None
    if spec.balance is not None and session.teams:
        attribute = spec.balance.attribute
        means = [
            sum(number(clients[c], attribute) for c in team) / len(team)
            for team in session.teams.values()
            if team and all(c in clients for c in team)
        ]
        imbalance = max(means) - min(means) if means else None
    policy = session.pool if origin.key[0] == "policy" else None
    return Quality(policy, spreads, imbalance)
