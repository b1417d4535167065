"""The replay buffer keeps frames without their seqs (a frame's seq is its place): what a
resume replays, and the gap it reports, for every ``last_seq`` a client can send; and its
bound, bytes and age rather than a count."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchmaker.config import Limits
from matchmaker.core.resume import (
    FRAME_OVERHEAD_BYTES,
    Outbox,
    ReplayBound,
    Resumption,
    token_digest,
)
from matchmaker.core.tables import Tables

SMALL = len('{"n":1,"seq":1}') + FRAME_OVERHEAD_BYTES  # what a one-digit frame costs
FOUR = ReplayBound(max_bytes=4 * SMALL, max_age_ms=60_000)  # four such frames


@pytest.mark.parametrize("last_seq", range(7))
def test_a_resume_replays_what_followed_last_seq_and_names_the_lost_seqs(last_seq: int) -> None:
    resumption = Resumption(FOUR, grace_ms=10_000)
    token = resumption.issue("c", "p")
    outbox = resumption.outboxes["c"]
    sent = [outbox.stamp(f'{{"n":{n}', 1_000) for n in range(1, 7)]  # seqs 1-6; 3-6 kept
    assert sent[0] == '{"n":1,"seq":1}'
    taken = resumption.take(token, "p", last_seq)
    assert taken is not None
    assert taken.replay == sent[max(last_seq, 2) :]
    assert taken.missed == ((last_seq + 1, 2) if last_seq < 2 else None)


def test_an_empty_buffer_replays_nothing_and_misses_nothing() -> None:
    resumption = Resumption(FOUR, grace_ms=10_000)
    token = resumption.issue("c", "p")
    taken = resumption.take(token, "p", 0)
    assert taken is not None
    assert (taken.replay, taken.missed) == ([], None)


def outbox(bound: ReplayBound) -> Outbox:
    resumption = Resumption(bound, grace_ms=10_000)
    resumption.issue("c", "p")
    return resumption.outboxes["c"]


def kept_seqs(box: Outbox) -> list[int]:
    return list(range(box.seq - len(box.frames) + 1, box.seq + 1))


def test_past_its_bytes_the_buffer_drops_its_oldest_frames_down_to_seven_eighths() -> None:
    box = outbox(FOUR)
    for n in range(1, 5):
        box.stamp(f'{{"n":{n}', 0)
    assert kept_seqs(box) == [1, 2, 3, 4]  # exactly the bound: nothing dropped
    box.stamp('{"n":5', 0)
    assert kept_seqs(box) == [3, 4, 5]  # down to 3.5 frames' worth, oldest first
    overhead = len('{"n":"",seq":6}') + FRAME_OVERHEAD_BYTES
    box.stamp('{"n":"' + "x" * (2 * SMALL - overhead), 0)  # costs two small frames
    assert kept_seqs(box) == [5, 6]
    assert box.kept_bytes == sum(len(f) + FRAME_OVERHEAD_BYTES for f in box.frames) == 3 * SMALL
    box.stamp('{"n":"' + "x" * 8 * SMALL, 0)  # past the bound alone: not kept at all
    assert (kept_seqs(box), box.kept_bytes) == ([], 0)


def test_a_frame_is_kept_for_its_age_then_dropped_at_a_later_stamp() -> None:
    box = outbox(ReplayBound(max_bytes=10**9, max_age_ms=10_000))
    for n, at in enumerate([100_000, 105_000, 109_900], 1):
        box.stamp(f'{{"n":{n}', at)
    assert kept_seqs(box) == [1, 2, 3]  # nothing 10 s old yet
    box.stamp('{"n":4', 110_000)
    box.stamp('{"n":5', 115_000)
    assert kept_seqs(box) == [2, 3, 4, 5]  # seq 1 was 15 s old: dropped by 1.5 ages
    box.stamp('{"n":6', 200_000)  # after a long silence, the old frames go at once
    assert kept_seqs(box) == [5, 6]  # (but those of the last half age, until the next)
    box.stamp('{"n":7', 210_000)
    assert kept_seqs(box) == [6, 7]
    assert box.kept_bytes == sum(len(f) + FRAME_OVERHEAD_BYTES for f in box.frames)


@given(st.lists(st.integers(min_value=0, max_value=7_000), min_size=1, max_size=80))
def test_kept_frames_are_contiguous_within_bytes_and_no_frame_younger_than_the_age_is_lost(
    gaps: list[int],
) -> None:
    bound = ReplayBound(max_bytes=40 * SMALL, max_age_ms=10_000)
    box, now, times = outbox(bound), 0, []
    for gap in gaps:
        now += gap
        times.append(now)
        box.stamp('{"n":1', now)
        kept = kept_seqs(box)
        assert kept == [] or kept[-1] == box.seq  # contiguous up to the last seq sent
        costs = [len(frame) + FRAME_OVERHEAD_BYTES for frame in box.frames]
        assert box.kept_bytes == sum(costs) <= bound.max_bytes
        young = [seq for seq, at in enumerate(times, 1) if now - at < bound.max_age_ms]
        assert set(young[-33:]) <= set(kept)  # dropped only for bytes, else for age


def test_steady_traffic_keeps_no_frame_past_one_and_a_half_ages() -> None:
    box = outbox(ReplayBound(max_bytes=10**9, max_age_ms=10_000))
    tick = 125  # milliseconds
    for n in range(1, 1000):
        box.stamp('{"n":1', n * tick)
        oldest_age = (box.seq - kept_seqs(box)[0]) * tick
        assert oldest_age <= 15_000 + 2 * tick  # 1.5 ages, and a tick at each end


def test_the_default_bound_keeps_the_heartbeat_timeout_and_the_grace() -> None:
    """What a resume may need: up to the heartbeat timeout out of touch before the drop is
    noticed, then the grace away."""
    limits = Limits()
    bound = Tables(limits, node="t").resumption.bound
    assert bound.max_age_ms == limits.heartbeat_timeout_ms + limits.resume_grace_ms
    assert bound.max_bytes == limits.resume_buffer_bytes == 256 * 1024


def test_an_outbox_handed_over_by_a_draining_member_resumes_here() -> None:
    """A client handed over by member a (its token names a) is parked at b: b resumes it
    with that token (not sent back to a), with its numbering and the frames after
    ``last_seq``; until then its grace runs as for a dropped connection of b's own."""
    resumption = Resumption(FOUR, grace_ms=10_000, issuer="b")
    frames = [f'{{"n":{n},"seq":{n}}}' for n in (3, 4, 5)]
    # The drain sends the token's digest, never the token.
    resumption.handed_over("ca-1", "p", token_digest("a.token"), seq=5, frames=frames, now_ms=1_000)
    assert resumption.elsewhere("a.token") is None
    assert resumption.elsewhere("a.other") == "a"
    assert resumption.expired(10_999) == []
    taken = resumption.take("a.token", "p", 3)
    assert taken is not None
    assert taken.replay == frames[1:]
    assert taken.outbox.seq == 5
    assert taken.token.startswith("b.")
    assert resumption.take("a.token", "p", 3) is None  # a token works once


def test_a_handed_over_client_not_resumed_within_the_grace_is_gone() -> None:
    resumption = Resumption(FOUR, grace_ms=10_000, issuer="b")
    resumption.handed_over("ca-1", "p", token_digest("a.token"), seq=0, frames=[], now_ms=1_000)
    assert resumption.expired(11_000) == ["ca-1"]
    assert resumption.take("a.token", "p", 0) is None
