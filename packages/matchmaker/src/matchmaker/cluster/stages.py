"""Where a local client's entry at another member stands, and how it moves on, in one table.

A :class:`~.routes.Waiting` entry is followed (moved when its pool's owner
changes, entered again when its member dies) until it is on its way out: its
client sent ``pool.leave`` (*leaving*), or was matched, so a ``Withdraw`` went
to its member, or the party it waits with changed, so a ``PartyWithdraw`` did
(*withdrawn*). Both can be under way at once, and a refused ``pool.leave`` puts
the entry back where it stood. Every stage and every step
that changes it is in :data:`TRANSITIONS` (as h11's ``_state.py`` keeps a
connection's); a step the table does not name is a bug, not a silent no-op.
"""

from __future__ import annotations

import enum

__all__ = ["LEAVING", "TRANSITIONS", "WITHDRAWN", "Stage", "Step", "advance"]


class Stage(enum.Enum):
    """Where the entry stands."""

    FOLLOWED = "followed"  # waiting there; moves and is entered again as its pool does
    LEAVING = "leaving"  # its pool.leave is on its way
    WITHDRAWN = "withdrawn"  # matched, or its party changed: a (Party)Withdraw is on its way
    LEAVING_WITHDRAWN = "leaving, withdrawn"  # both


class Step(enum.Enum):
    """What happens to it."""

    LEAVE = "leave"  # its client sent pool.leave for it
    LEAVE_REFUSED = "leave refused"  # that pool.leave was refused: the entry stays
    WITHDRAW = "withdraw"  # its client was matched, or its party changed


TRANSITIONS: dict[Stage, dict[Step, Stage]] = {
    Stage.FOLLOWED: {
        Step.LEAVE: Stage.LEAVING,
        Step.WITHDRAW: Stage.WITHDRAWN,
    },
    Stage.LEAVING: {
        Step.LEAVE: Stage.LEAVING,  # asked again: the later request is the one answered
        Step.LEAVE_REFUSED: Stage.FOLLOWED,
        Step.WITHDRAW: Stage.LEAVING_WITHDRAWN,
    },
    Stage.WITHDRAWN: {
        Step.LEAVE: Stage.LEAVING_WITHDRAWN,
        Step.WITHDRAW: Stage.WITHDRAWN,
    },
    Stage.LEAVING_WITHDRAWN: {
        Step.LEAVE: Stage.LEAVING_WITHDRAWN,
        Step.LEAVE_REFUSED: Stage.WITHDRAWN,
        Step.WITHDRAW: Stage.LEAVING_WITHDRAWN,
    },
}

#: The stages of an entry whose pool.leave is on its way, and of one being withdrawn.
LEAVING = frozenset({Stage.LEAVING, Stage.LEAVING_WITHDRAWN})
WITHDRAWN = frozenset({Stage.WITHDRAWN, Stage.LEAVING_WITHDRAWN})


def advance(stage: Stage, step: Step) -> Stage:
    """The stage after ``step``; ``ValueError`` for a step :data:`TRANSITIONS` does not
    allow from ``stage``."""
    try:
        return TRANSITIONS[stage][step]
    except KeyError:
        raise ValueError(f"an entry {stage.value} cannot {step.value}") from None
