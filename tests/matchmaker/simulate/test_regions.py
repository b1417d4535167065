"""The simulator replays ``latencies`` under a policy with ``regions``, and a recording
keeps what a teams, balance and regions policy reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matchmaker.arrivals import parse_arrivals
from matchmaker.config import Limits
from matchmaker.core.events import EnteredPool
from matchmaker.core.state import ClientState
from matchmaker.data.recording import ArrivalRecorder
from matchmaker.directory import ProjectDirectory
from matchmaker.errors import MatchmakerError
from matchmaker.model import Balance, MatchmakingPolicy, Project, Regions, Team
from matchmaker.simulate.run import check_admitted, replay

NEAR = MatchmakingPolicy(name="near", mode="auto", group_size=2, regions=Regions(80))


def trace(*lines: dict[str, object]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def test_a_replay_matches_only_arrivals_that_share_a_near_region() -> None:
    arrivals = parse_arrivals(
        trace(
            {"at_ms": 0, "attributes": {}, "latencies": {"eu": 30, "us": 150}},
            {"at_ms": 10, "attributes": {}, "latencies": {"eu": 140, "us": 20}},
            {"at_ms": 20, "attributes": {}, "latencies": {"eu": 90, "us": 59.5}},
        )
    )
    check_admitted(NEAR, arrivals)
    assert [group.members for group in replay(NEAR, arrivals, Limits()).groups] == [(1, 2)]


def test_an_arrival_without_latencies_is_refused_naming_its_line() -> None:
    arrivals = parse_arrivals(
        trace(
            {"at_ms": 0, "attributes": {}, "latencies": {"eu": 1}}, {"at_ms": 1, "attributes": {}}
        )
    )
    with pytest.raises(MatchmakerError) as caught:
        check_admitted(NEAR, arrivals)
    assert caught.value.code == "pool.latencies_required"
    assert caught.value.details == {"line": 2, "policy": "near"}


def test_a_recording_keeps_the_latencies_and_the_balanced_attribute(tmp_path: Path) -> None:
    duo = MatchmakingPolicy(
        name="duo",
        mode="auto",
        group_size=2,
        teams=(Team("a", 1), Team("b", 1)),
        balance=Balance("rating", 50),
        regions=Regions(80),
    )
    directory = ProjectDirectory([Project(id="game", policies=(duo,))])
    path = tmp_path / "arrivals.jsonl"
    recorder = ArrivalRecorder(str(path), 10_000, directory)
    client = ClientState("c1", "game", None, {"rating": 1200, "nickname": "x"})
    recorder.entered(client, EnteredPool("duo", "e1", "auto", 2, 0, {"eu": 30}))
    recorder.close()
    (line,) = parse_arrivals(path.read_bytes()).arrivals
    assert line.attributes == {"rating": 1200}
    assert line.latencies == {"eu": 30}
