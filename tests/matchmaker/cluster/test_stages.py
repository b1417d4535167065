"""A local client's entry at another member: its stage changes only by the table's steps."""

from __future__ import annotations

import pytest

from matchmaker.cluster.routes import Waiting
from matchmaker.cluster.stages import TRANSITIONS, Stage, Step, advance
from matchmaker.core.commands import EnterPool


def entry() -> Waiting:
    return Waiting("m2", EnterPool(pool="duel"), "1")


def test_a_refused_leave_puts_the_entry_back_where_it_stood() -> None:
    waiting = entry()
    waiting.leave("2")
    assert (waiting.leaving, waiting.withdrawn, waiting.leave_request) == (True, False, "2")
    waiting.leave_refused()
    assert (waiting.settling, waiting.leave_request) == (False, None)  # followed again
    waiting.leave("3")
    waiting.withdraw()  # matched while its pool.leave was on its way
    waiting.leave_refused()
    assert (waiting.settling, waiting.leaving, waiting.withdrawn) == (True, False, True)


def test_a_withdrawn_entry_can_still_be_left() -> None:
    waiting = entry()
    waiting.withdraw()
    waiting.leave("2")
    assert (waiting.leaving, waiting.withdrawn, waiting.stage) == (
        True,
        True,
        Stage.LEAVING_WITHDRAWN,
    )


def test_a_step_the_table_does_not_name_is_refused() -> None:
    waiting = entry()
    with pytest.raises(ValueError, match="an entry followed cannot leave refused"):
        waiting.leave_refused()
    assert waiting.stage is Stage.FOLLOWED


def test_every_stage_has_its_steps_and_is_reached_from_the_first() -> None:
    assert set(TRANSITIONS) == set(Stage)
    reached, frontier = {Stage.FOLLOWED}, [Stage.FOLLOWED]
    while frontier:
        for after in TRANSITIONS[frontier.pop()].values():
            if after not in reached:
                reached.add(after)
                frontier.append(after)
    assert reached == set(Stage)
    assert advance(Stage.LEAVING_WITHDRAWN, Step.LEAVE_REFUSED) is Stage.WITHDRAWN
