"""The client's mirror of the server's send bucket, on an explicit clock: a burst at
once, then one token per interval, a little under the server's figures."""

from __future__ import annotations

import pytest

from matchmaker.client.pace import MARGIN, Pace


def test_a_full_bucket_spends_its_burst_then_waits_for_each_token() -> None:
    pace = Pace.full({"send_rate_per_s": 100.0, "send_burst": 10}, now=0.0)
    assert [pace.take(0.0) for _ in range(9)] == [0.0] * 9  # 10 x MARGIN
    wait = pace.take(0.0)
    assert wait == pytest.approx(1 / (100 * MARGIN))
    assert pace.take(wait) == 0.0
    assert pace.take(wait) > 0


def test_a_small_bucket_keeps_a_token_over_and_refills_to_its_cap() -> None:
    pace = Pace.full({"send_rate_per_s": 10.0, "send_burst": 2}, now=0.0)
    assert pace.take(0.0) == 0.0
    assert pace.take(0.0) > 0  # one of two spent: the other is the server's slack
    assert pace.tokens <= pace.burst == 1.0
    pace.take(100.0)  # a long pause refills no more than the cap
    assert pace.tokens == 0.0
