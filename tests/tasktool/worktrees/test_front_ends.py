"""The overlay in the web API and the MCP tools: effective statuses, and the guard's 409 and
tool error, on real linked worktrees."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.types import TextContent

from tasktool.config import Overrides
from tasktool.mcp.server import create_server
from tasktool.planning.repository import loader
from tasktool.web.app import WebConfig
from tests.tasktool.web.conftest import ServerThread

from .conftest import Repo, Run


@pytest.fixture
def worktrees(repo: Repo, run: Run) -> tuple[Path, Path]:
    """wt-a with 001 claimed; wt-b with a task 004 only it has."""
    a = repo.worktree("wt-a", branch="feature-a")
    b = repo.worktree("wt-b", branch="feature-b")
    run(a, "set", "001", "--status", "in-progress")
    run(b, "add", "Only on B")
    return a, b


@pytest.fixture
def dashboard_in_main(
    repo: Repo, worktrees: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    monkeypatch.chdir(repo.main)
    load = loader(Overrides(config=str(repo.main / ".tasktool.yaml")))
    server = ServerThread(WebConfig.serving(load, load()))  # as 'web start' builds it
    bound = server.start()
    try:
        yield bound.url.rstrip("/")
    finally:
        server.stop()


def test_web_api_shows_effective_statuses_and_refuses_a_sibling_task(
    dashboard_in_main: str, repo: Repo, worktrees: tuple[Path, Path]
) -> None:
    a, b = worktrees
    with httpx.Client(base_url=dashboard_in_main, timeout=10) as client:
        tasks = {task["id"]: task for task in client.get("/api/tasks").json()}
        assert tasks["001"]["status"] == "in-progress"
        assert tasks["001"]["branch"] == "feature-a"
        assert tasks["004"]["sibling_only"] is True
        ranked = [task["id"] for task in client.get("/api/next?limit=0").json()]
        assert "001" not in ranked
        assert "004" not in ranked

        refused = client.put("/api/tasks/004", json={"status": "completed"})
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "worktree.sibling_only"
        assert "status: pending" in (b / "tasks" / "004-only-on-b.md").read_text()
        assert not (repo.main / "tasks" / "004-only-on-b.md").exists()

        ok = client.put("/api/tasks/003", json={"status": "in-review"})
        assert ok.status_code == 200
        assert "in-review" in (repo.main / "tasks" / "003-task.md").read_text()
        assert "in-review" not in (a / "tasks" / "003-task.md").read_text()


def test_live_reload_follows_a_sibling_worktrees_files(
    dashboard_in_main: str, worktrees: tuple[Path, Path]
) -> None:
    """An edit in a sibling's task directory changes what the pages show: the event
    stream announces it (the read timeout is the deadline)."""
    a, _ = worktrees
    timeout = httpx.Timeout(10, read=10)
    with httpx.Client(base_url=dashboard_in_main, timeout=timeout) as client:
        with client.stream("GET", "/api/events") as stream:
            events = []
            for line in stream.iter_lines():
                if not line.startswith("event: "):
                    continue
                events.append(line.removeprefix("event: "))
                if events[-1] == "ready":
                    Repo.write(a, "003", "Ship", priority="medium", status="completed")
                elif events[-1] == "change":
                    break
        assert events == ["ready", "change"]
        shown = {task["id"]: task for task in client.get("/api/tasks").json()}
        assert (shown["003"]["status"], shown["003"]["branch"]) == ("completed", "feature-a")


async def test_mcp_tools_see_the_overlay_and_refuse_a_sibling_task(
    repo: Repo, worktrees: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo.main)
    server = create_server(loader(Overrides(config=str(repo.main / ".tasktool.yaml"))))
    async with Client(server) as client:
        listed = json.loads(_text(await client.call_tool("list", {})))
        by_id = {task["id"]: task for task in listed["tasks"]}
        assert by_id["001"]["status"] == "in-progress"
        ranked = json.loads(_text(await client.call_tool("next", {"limit": 0})))
        assert "001" not in [task["id"] for task in ranked["tasks"]]
        refused = await client.call_tool("set", {"id": "004", "status": "completed"})
        assert refused.is_error
        assert "[worktree.sibling_only]" in _text(refused)
        assert "feature-b" in _text(refused)


def _text(result: Any) -> str:
    """The text of a tool result's first content block."""
    content = result.content[0]
    assert isinstance(content, TextContent), content
    return content.text
