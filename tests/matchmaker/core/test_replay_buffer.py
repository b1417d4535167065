"""The replay buffer keeps frames without their seqs (a frame's seq is its place): what a
resume replays, and the gap it reports, for every ``last_seq`` a client can send."""

from __future__ import annotations

import pytest

from matchmaker.core.resume import Resumption


@pytest.mark.parametrize("last_seq", range(7))
def test_a_resume_replays_what_followed_last_seq_and_names_the_lost_seqs(last_seq: int) -> None:
    resumption = Resumption(buffer=4, grace_ms=10_000)
    token = resumption.issue("c", "p")
    outbox = resumption.outboxes["c"]
    sent = [outbox.stamp(f'{{"n":{n}') for n in range(1, 7)]  # seqs 1-6; 3-6 kept
    assert sent[0] == '{"n":1,"seq":1}'
    taken = resumption.take(token, "p", last_seq)
    assert taken is not None
    assert taken.replay == sent[max(last_seq, 2) :]
    assert taken.missed == ((last_seq + 1, 2) if last_seq < 2 else None)


def test_an_empty_buffer_replays_nothing_and_misses_nothing() -> None:
    resumption = Resumption(buffer=4, grace_ms=10_000)
    token = resumption.issue("c", "p")
    taken = resumption.take(token, "p", 0)
    assert taken is not None
    assert (taken.replay, taken.missed) == ([], None)
