"""The example delegate (examples/skill_delegate.py) against a real server."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from matchmaker.model import MatchmakingPolicy, Project, ProjectKey

EXAMPLE = Path(__file__).parents[3] / "examples" / "skill_delegate.py"
KEY = ProjectKey(type="shared-secret", secret="delegate-secret-9", scopes=("delegate",))
RANKED = MatchmakingPolicy(
    name="ranked", mode="delegated", group_size=2, filter={"region": "@self"}
)
PLAYER = ProjectKey(type="shared-secret", secret="player-secret-99")
GAME = Project(id="game", policies=(RANKED,), keys=(KEY, PLAYER))


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("skill_delegate", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_balanced_groups_pair_neighbours_in_skill_within_a_bucket() -> None:
    example = load_example()
    entries = [
        {"entry_id": name, "attributes": {"skill": skill, "region": region}, "entered_at": i}
        for i, (name, skill, region) in enumerate(
            [("a", 10, "eu"), ("b", 95, "eu"), ("c", 12, "eu"), ("d", 90, "eu"), ("e", 11, "us")]
        )
    ]
    assert example.balanced_groups(entries, 2, bucket=["region"]) == [["a", "c"], ["d", "b"]]
    assert example.balanced_groups(entries, 2) == [["a", "e"], ["c", "d"]]
    assert example.balanced_groups(entries[:1], 2) == []
    assert example.balanced_groups(entries, 2, bucket=["region"], min_waiting=5) == []


async def test_the_example_delegate_forms_skill_balanced_sessions(start_server: Any) -> None:
    example = load_example()
    server = await start_server(GAME)
    delegate = await server.connect(project="game", credential=KEY.secret)
    task = asyncio.create_task(example.run_delegate(delegate, "ranked", 2, bucket=["region"]))
    try:
        await server.until(
            lambda: any(p.name == "ranked" for p in server.plane.core.pools.values())
        )
        players = {}
        for skill in (1500, 900, 1510, 880):
            attributes = {"skill": skill, "region": "eu"}
            player = await server.connect(credential=PLAYER.secret, attributes=attributes)
            players[player.client_id] = (player, skill)
            await player.enter("ranked")
        for player, _ in players.values():
            created = (await player.next_event("session.created")).data
            skills = sorted(players[m["client_id"]][1] for m in created["members"])
            assert skills in ([880, 900], [1500, 1510]), skills
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
