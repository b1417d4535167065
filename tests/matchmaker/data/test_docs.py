"""The Python example in docs/protocol.md runs against a real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from matchmaker.model import MatchmakingPolicy, Project

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocol.md"
GAME = Project(
    id="game",
    policies=(
        MatchmakingPolicy(
            name="duel", mode="auto", group_size=2, default=True, filter={"region": "@self"}
        ),
    ),
)


async def test_the_client_example_works(
    start_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = await start_server(GAME)
    text = DOC.read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert code.rstrip().endswith("asyncio.run(main())")
    code = code.replace("ws://127.0.0.1:8080/ws", server.url).rstrip()
    code = code.removesuffix("asyncio.run(main())")
    namespace: dict[str, Any] = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    await namespace["main"]()
    printed = capsys.readouterr().out
    assert "'data': {'move': 'e4'}" in printed
    assert "'from': 'c" in printed
