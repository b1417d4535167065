"""``--record-arrivals``: a real server records its policy entries, and the trace replays in
the simulator to the sessions the server formed; the file holds nothing personal and rotates
by size."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from matchmaker.arrivals import parse_arrivals
from matchmaker.client import Client
from matchmaker.config import Limits, ServerConfig
from matchmaker.core.events import EnteredPool
from matchmaker.core.state import ClientState
from matchmaker.data.recording import ArrivalRecorder
from matchmaker.directory import ProjectDirectory
from matchmaker.model import MatchmakingPolicy, Project, RangeRule
from matchmaker.running import RunningServer
from matchmaker.simulate.run import replay
from matchmaker.testing import ServerThread
from tests.matchmaker.simulate.traces import simulate, write_policy

KEY = "record-test-key"
SECRET = "s3cret-of-the-game"
POLICY = {
    "name": "ranked",
    "mode": "auto",
    "groupSize": 2,
    "filter": {"region": "@self", "rating": {"within": 100}},
}
# Each pair is within 100 of each other and far from every other player, so the windows
# alone decide the groups, however the wall clock falls.
PLAYERS = [("a", 1000), ("b", 1500), ("c", 1050), ("d", 1580), ("e", 3000)]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    config = ServerConfig(
        port=0,
        management_port=0,
        management_key=KEY,
        store_url="memory://",
        record_arrivals=str(tmp_path / "arrivals.jsonl"),
    )
    with ServerThread(config) as running:
        assert running.management_url is not None
        headers = {"Authorization": f"Bearer {KEY}"}
        project = {
            "id": "game",
            "keys": [{"type": "shared-secret", "secret": SECRET}],
            "policies": [POLICY],
        }
        with httpx.Client(base_url=running.management_url, headers=headers) as admin:
            assert admin.post("/admin/projects", json=project).status_code == 201
        yield running


async def test_a_recorded_trace_replays_to_the_sessions_the_server_formed(
    server: RunningServer, tmp_path: Path
) -> None:
    clients: dict[str, Client] = {}
    rating: dict[str, int] = {}
    try:
        for name, value in PLAYERS:
            attributes: dict[str, str | int | float | bool] = {
                "region": "eu",
                "rating": value,
                "nickname": f"player-{name}",
            }
            client = await Client.connect(
                server.ws_url, project="game", credential=SECRET, attributes=attributes
            )
            clients[name] = client
            assert client.client_id is not None
            rating[client.client_id] = value
            await client.enter("ranked", public={"avatar": f"{name}.png"})
        adhoc = await Client.connect(server.ws_url, project="game", credential=SECRET)
        clients["adhoc"] = adhoc
        await adhoc.enter(pool="side", create=True, mode="auto", group_size=2)  # not recorded
        formed: set[frozenset[int]] = set()
        for name in ("a", "b"):
            created = await clients[name].next_event("session.created")
            formed.add(frozenset(rating[m["client_id"]] for m in created.data["members"]))
    finally:
        for client in clients.values():
            await client.close()
    assert formed == {frozenset({1000, 1050}), frozenset({1500, 1580})}

    data = (tmp_path / "arrivals.jsonl").read_bytes()
    lines = [json.loads(line) for line in data.splitlines()]
    assert [line["attributes"] for line in lines] == [
        {"region": "eu", "rating": value} for _, value in PLAYERS
    ]
    assert {frozenset(line) for line in lines} == {frozenset({"at_ms", "attributes", "pool"})}
    assert {line["pool"] for line in lines} == {"ranked"}
    for personal in (SECRET, "player-", ".png", "avatar", *rating):
        assert personal.encode() not in data

    policy = MatchmakingPolicy(
        name="ranked",
        mode="auto",
        group_size=2,
        filter={"region": "@self", "rating": RangeRule(within=100)},
    )
    trace = parse_arrivals(data)
    replayed = {
        frozenset(int(trace.arrivals[i].attributes["rating"]) for i in group.members)
        for group in replay(policy, trace, Limits()).groups
    }
    assert replayed == formed
    result = simulate(
        "--policy", write_policy(tmp_path / "policy.json", POLICY),
        "--arrivals", tmp_path / "arrivals.jsonl", "--pool", "ranked",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (figures,) = json.loads(result.stdout)["policies"]
    assert (figures["sessions"], figures["matched"], figures["unmatched"]) == (2, 4, 1)


def test_the_file_rotates_by_size_keeping_whole_lines(tmp_path: Path) -> None:
    policy = MatchmakingPolicy(
        name="ranked", mode="auto", group_size=2, filter={"rating": RangeRule(within=1)}
    )
    directory = ProjectDirectory([Project(id="game", policies=(policy,))])
    path = tmp_path / "arrivals.jsonl"
    recorder = ArrivalRecorder(str(path), 200, directory)
    player: dict[str, Any] = {"rating": 1200, "secret": "x"}
    client = ClientState("c1", "game", "credential", player)
    for _ in range(12):
        recorder.entered(client, EnteredPool("ranked", "e1", "auto", 2, 0))
    recorder.entered(client, EnteredPool("not-a-policy", "e2", "auto", 2, 0))
    recorder.close()
    rotated = Path(f"{path}.1")
    assert 0 < path.stat().st_size <= 200
    assert 0 < rotated.stat().st_size <= 200
    kept = (
        parse_arrivals(rotated.read_bytes()).arrivals + parse_arrivals(path.read_bytes()).arrivals
    )
    assert {json.dumps(a.attributes) for a in kept} == {'{"rating": 1200}'}
    assert len(kept) < 12  # the oldest were dropped with the file before FILE.1
